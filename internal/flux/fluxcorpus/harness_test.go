package fluxcorpus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/internal/flux/fluxcmd"
	"github.com/kpipe/kpipe/internal/flux/fluxcmd/fluxflags"
)

// fluxCase is a case.json of the reference corpus: one run of the flux
// CLI, with what it printed beside it (stdout, stderr).
type fluxCase struct {
	Argv             []string `json:"argv"`
	Case             string   `json:"case"`
	Cwd              string   `json:"cwd"`
	Root             string   `json:"root"`
	RC               int      `json:"rc"`
	Repo             string   `json:"repo"`
	Status           string   `json:"status"`
	Variant          string   `json:"variant"`
	NetworkDependent bool     `json:"network_dependent"`

	dir string // the directory of case.json
}

func readCase(dir string) (*fluxCase, error) {
	b, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		return nil, err
	}
	c := &fluxCase{dir: dir}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return c, nil
}

func (c *fluxCase) want(t testing.TB) (stdout, stderr string) {
	t.Helper()
	o, err := os.ReadFile(filepath.Join(c.dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := os.ReadFile(filepath.Join(c.dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	return string(o), string(e)
}

// live reports whether flux asked a cluster for the case (a run without
// --dry-run that got past the refusals before it), which kpipe never does.
func (c *fluxCase) live(stderr string) bool {
	for _, a := range c.Argv {
		if a == "--dry-run" || a == "--dry-run=true" {
			return false
		}
	}
	return strings.Contains(stderr, "failed to get kustomization object: failed to get server groups")
}

// Outcome classes of a case.
const (
	classMatch = "match" // stdout, stderr and exit status are flux's, byte for byte
	// Runs without --dry-run need a cluster; kpipe refuses them with its
	// own message (flux.ErrLive).
	classLive = "live (needs a cluster): refused"
	// flux needed the network (a remote base) and failed; so does the run
	// here: only the exit status is compared.
	classNetwork = "network: refused as flux did (status only)"
	classMiss    = "MISS"
)

// outcome is what running a case gave.
type outcome struct {
	class  string
	detail string // for misses: what differs
}

// run runs one case in-process with cwd standing for the case's working
// directory and root for its "root" (the absolute path in flux's
// messages), and compares what it printed with flux's.
func run(t testing.TB, c *fluxCase, cwd, root string) outcome {
	return runWith(t, c, cwd, root, nil)
}

// runWith is run with kpipe's cache (nil: none): store's entries and
// records, a file index of its own as a process has.
func runWith(t testing.TB, c *fluxCase, cwd, root string, store *cache.Store) outcome {
	wantOut, wantErr := c.want(t)
	wantErr = strings.ReplaceAll(wantErr, c.Root, root)
	var stdout, stderr bytes.Buffer
	env := fluxcmd.Env{Stdout: &stdout, Stderr: &stderr, Cwd: cwd, Getenv: func(string) string { return "" }, Jobs: 2,
		ParseFlags: fluxflags.Parse}
	if store != nil {
		env.Cache = func(bool) (engine.Cache, func()) {
			return engine.Cache{Store: store, Files: store.FileIndex(), Version: "fluxcorpus"}, func() {}
		}
	}
	rc := fluxcmd.Build(context.Background(), c.Argv[1:], env)
	got := stderr.String()
	switch {
	case c.live(wantErr):
		if rc == 1 && strings.Contains(got, flux.ErrLive.Error()) {
			return outcome{class: classLive}
		}
		return outcome{class: classMiss, detail: fmt.Sprintf("live case: rc %d, stderr %q", rc, got)}
	case c.NetworkDependent:
		if rc == c.RC {
			return outcome{class: classNetwork}
		}
		return outcome{class: classMiss, detail: fmt.Sprintf("network case: rc %d, flux %d; stderr %q", rc, c.RC, got)}
	case rc != c.RC:
		return outcome{class: classMiss, detail: fmt.Sprintf("exit status %d, flux %d\n got stderr: %s\nwant stderr: %s", rc, c.RC, got, wantErr)}
	case got != wantErr:
		return outcome{class: classMiss, detail: fmt.Sprintf("stderr differs\n got: %s\nwant: %s", got, wantErr)}
	case stdout.String() != wantOut:
		return outcome{class: classMiss, detail: "stdout differs:\n" + firstDiff(stdout.String(), wantOut)}
	}
	return outcome{class: classMatch}
}

// firstDiff shows the first line where got and want differ, with context.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d\n got: %q\nwant: %q", i+1, gl, wl)
		}
	}
	return "(same lines)"
}

// tally counts outcomes by key and class, and logs them.
type tally map[string]map[string]int

func (ta tally) add(key, class string) {
	if ta[key] == nil {
		ta[key] = map[string]int{}
	}
	ta[key][class]++
}

func (ta tally) log(t *testing.T) {
	keys := make([]string, 0, len(ta))
	for k := range ta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		total := 0
		for _, n := range ta[k] {
			total += n
		}
		t.Logf("%s: %d cases: %v (match %d/%d)", k, total, ta[k], ta[k][classMatch], total)
	}
}
