package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kpipe/kpipe/internal/hostiletest"
)

// readHostileCases reads testdata/hostile (see its README.md).
func readHostileCases(t *testing.T) []hostiletest.Case {
	t.Helper()
	cases, err := hostiletest.Load("../../testdata/hostile")
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// materialize writes the case's tree (with testdata/hostile/outside beside
// it) into a new directory and returns it with the arguments to build it.
func materialize(t *testing.T, c hostiletest.Case) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := c.Write(dir); errors.Is(err, hostiletest.ErrUnsupported) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	args := []string{"build", filepath.Join(dir, "k")}
	for _, a := range c.Args {
		a = strings.ReplaceAll(a, "OUTDIR", filepath.Join(dir, "out"))
		args = append(args, strings.ReplaceAll(a, "ABS", dir))
	}
	return dir, args
}

// TestHostileCatalogue builds every tree of testdata/hostile: each fails
// with its expected error (naming the problem), quickly, printing nothing
// on stdout and writing nothing; the few legitimate ones build.
func TestHostileCatalogue(t *testing.T) {
	for _, c := range readHostileCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			dir, args := materialize(t, c)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
			type result struct {
				code        int
				out, errOut string
			}
			done := make(chan result, 1)
			go func() {
				code, out, errOut := kpipe(t, args...)
				done <- result{code, out, errOut}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatalf("%s: kpipe did not finish (blocked on the input?)", c.Desc)
			}
			if c.Want == "ok" {
				if r.code != 0 {
					t.Errorf("%s: exit %d, stderr %s", c.Desc, r.code, r.errOut)
				}
				return
			}
			if r.code == 0 || !strings.Contains(r.errOut, c.Want) || r.out != "" {
				t.Errorf("%s: exit %d, stdout %.200q, stderr %.2000s\nwant a failure mentioning %q", c.Desc, r.code, r.out, r.errOut, c.Want)
			}
			if entries, _ := os.ReadDir(filepath.Join(dir, "out")); len(entries) > 1 {
				t.Errorf("%s: files written to the out dir", c.Desc)
			}
		})
	}
}

// TestHostileCatalogueDifferential builds the same trees with kustomize
// v5.8.2: where a case says `kustomize: fails`, kustomize must fail too;
// `same`, it must build the same bytes; `stricter: WHY` cases (kustomize
// blocks, runs out of memory or writes outside -o DIR) are not run.
func TestHostileCatalogueDifferential(t *testing.T) {
	kz := kustomize582(t)
	for _, c := range readHostileCases(t) {
		if strings.HasPrefix(c.Kustomize, "stricter") {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			dir, args := materialize(t, c)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, kz, args...)
			cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "xdg"), "HOME="+dir)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			switch {
			case ctx.Err() != nil:
				t.Errorf("%s: kustomize did not finish: mark the case stricter", c.Desc)
			case strings.HasPrefix(c.Kustomize, "fails"):
				if err == nil {
					t.Errorf("%s: kustomize succeeds where kpipe fails:\n%.500s", c.Desc, stdout.String())
				}
			case c.Kustomize == "same":
				t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
				code, out, errOut := kpipe(t, args...)
				if err != nil || code != 0 || out != stdout.String() {
					t.Errorf("%s: kustomize (%v) and kpipe (exit %d, %s) differ:\n%s\n---\n%s", c.Desc, err, code, errOut, stdout.String(), out)
				}
			default:
				t.Fatalf("unknown kustomize expectation %q", c.Kustomize)
			}
		})
	}
}
