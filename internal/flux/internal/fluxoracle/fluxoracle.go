// Package fluxoracle runs tools/fluxoracle, a program linking Flux's own
// libraries (github.com/fluxcd/pkg/envsubst and
// github.com/fluxcd/pkg/sourceignore, at the versions flux2 pins), for the
// differential tests of kpipe's ports of them. kpipe's module never
// imports those libraries: the program has a module of its own, built by
// Start with the go command.
//
// Only tests import it. It imports only the standard library.
package fluxoracle

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Oracle is a running tools/fluxoracle.
type Oracle struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
}

// BuildCommand is the command that builds the oracle, for skip messages.
const BuildCommand = "go build -C tools/fluxoracle -o fluxoracle ."

// Start builds tools/fluxoracle and starts it for the rest of the test,
// or skips the test naming the command that failed (the libraries come
// from the module proxy or the module cache: an offline machine without
// them cannot build it).
func Start(tb testing.TB) *Oracle {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "../../../../tools/fluxoracle")
	bin := filepath.Join(tb.TempDir(), "fluxoracle")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		tb.Skipf("the oracle of Flux's libraries does not build (%v); run %q from the repository root to see why:\n%s", err, BuildCommand, out)
	}
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return &Oracle{in: in, out: bufio.NewReader(out)}
}

// Response is the oracle's answer.
type Response struct {
	Out   []byte  `json:"out"`
	Err   *string `json:"err"`
	Panic *string `json:"panic"`
	Match bool    `json:"match"`
}

func (o *Oracle) ask(tb testing.TB, req any) Response {
	tb.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := o.in.Write(append(b, '\n')); err != nil {
		tb.Fatalf("oracle: %v", err)
	}
	line, err := o.out.ReadBytes('\n')
	if err != nil {
		tb.Fatalf("oracle: %v", err)
	}
	var res Response
	if err := json.Unmarshal(line, &res); err != nil {
		tb.Fatalf("oracle answered %q: %v", line, err)
	}
	return res
}

// Envsubst evaluates text with fluxcd/pkg/envsubst and Flux's mapping
// over vars (strict or not).
func (o *Oracle) Envsubst(tb testing.TB, text string, vars map[string]string, strict bool) Response {
	tb.Helper()
	req := struct {
		Op     string            `json:"op"`
		Text   []byte            `json:"text"`
		Vars   map[string][]byte `json:"vars"`
		Strict bool              `json:"strict"`
	}{Op: "envsubst", Text: []byte(text), Vars: map[string][]byte{}, Strict: strict}
	for k, v := range vars {
		req.Vars[k] = []byte(v)
	}
	return o.ask(tb, req)
}

// IgnoreSet is the text of an ignore file and the domain (the path
// components of its directory) it applies to.
type IgnoreSet struct {
	Domain []string `json:"domain"`
	Text   string   `json:"text"`
}

// Ignore reports whether fluxcd/pkg/sourceignore's matcher ignores path:
// the patterns of sets, behind Flux's default patterns (scoped to domain)
// when withDefaults is set.
func (o *Oracle) Ignore(tb testing.TB, sets []IgnoreSet, withDefaults bool, domain, path []string, isDir bool) bool {
	tb.Helper()
	req := struct {
		Op      string      `json:"op"`
		Sets    []IgnoreSet `json:"sets"`
		Default bool        `json:"default"`
		Domain  []string    `json:"domain"`
		Path    []string    `json:"path"`
		IsDir   bool        `json:"isDir"`
	}{"ignore", sets, withDefaults, domain, path, isDir}
	res := o.ask(tb, req)
	if res.Panic != nil {
		tb.Fatalf("sourceignore panicked: %s", *res.Panic)
	}
	return res.Match
}
