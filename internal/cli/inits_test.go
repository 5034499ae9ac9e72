package cli

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// kpipe's own packages initialise almost nothing: every kpipe process
// pays their initialisation before it reads a flag, and a small build
// takes a few milliseconds in all (issue 48). A table or a regexp a
// package needs belongs behind sync.OnceValue. This fails when kpipe's
// packages together allocate more than 16 KiB at start-up (a compiled
// regexp is 2-30 KiB), naming the biggest.
func TestKpipeInitsAreSmall(t *testing.T) {
	bin := kpipeWithServer(t) // the plain `go build` binary
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kpipe version: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (\S+) @.* ([0-9]+) bytes, [0-9]+ allocs$`)
	type pkg struct {
		name  string
		bytes int
	}
	var own []pkg
	total, all := 0, 0
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		all++
		n, _ := strconv.Atoi(m[2])
		if strings.HasPrefix(m[1], "github.com/kpipe/kpipe") {
			own = append(own, pkg{m[1], n})
			total += n
		}
	}
	if all < 20 {
		t.Fatalf("GODEBUG=inittrace=1 listed %d packages' inits: not the runtime's trace\n%s", all, out)
	}
	if total > 16<<10 {
		sort.Slice(own, func(i, j int) bool { return own[i].bytes > own[j].bytes })
		var top []string
		for _, p := range own[:min(5, len(own))] {
			top = append(top, fmt.Sprintf("%s %d bytes", p.name, p.bytes))
		}
		t.Errorf("kpipe's packages allocate %d bytes at start-up (at most %d): %s", total, 16<<10, strings.Join(top, "; "))
	}
}
