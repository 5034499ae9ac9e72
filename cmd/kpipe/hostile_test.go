package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// hostileCase is one case of testdata/hostile (see its README.md).
type hostileCase struct {
	name, desc, want, kustomize string
	args, setup                 []string
	files                       map[string][]byte
}

var txtarFile = regexp.MustCompile(`(?m)^-- (.+) --\n`)

// readHostileCases parses testdata/hostile/*.txtar: a header of `key:
// value` lines, then `-- path --` sections, as golang.org/x/tools/txtar
// writes them (a dozen lines here rather than a module for them).
func readHostileCases(t *testing.T) []hostileCase {
	t.Helper()
	paths, err := filepath.Glob("../../testdata/hostile/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	var cases []hostileCase
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := hostileCase{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), files: map[string][]byte{}}
		locs := txtarFile.FindAllSubmatchIndex(data, -1)
		head := data
		if len(locs) > 0 {
			head = data[:locs[0][0]]
		}
		for i, l := range locs {
			end := len(data)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			c.files[string(data[l[2]:l[3]])] = data[l[1]:end]
		}
		for _, line := range strings.Split(string(head), "\n") {
			k, v, _ := strings.Cut(line, ": ")
			switch {
			case strings.HasPrefix(line, "# "):
				c.desc = line[2:]
			case k == "want":
				c.want = v
			case k == "kustomize":
				c.kustomize = v
			case k == "args":
				c.args = strings.Fields(v)
			case k == "setup":
				c.setup = append(c.setup, v)
			}
		}
		if c.want == "" || c.kustomize == "" {
			t.Fatalf("%s: a case needs want: and kustomize: lines", p)
		}
		cases = append(cases, c)
	}
	return cases
}

// materialize writes the case's tree (with testdata/hostile/outside beside
// it) into a new directory and returns it with the arguments to build it.
func (c hostileCase) materialize(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	shared, err := filepath.Glob("../../testdata/hostile/outside/*")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, p := range shared {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files["outside/"+filepath.Base(p)] = b
	}
	for p, b := range c.files {
		files[p] = bytes.ReplaceAll(b, []byte("ABS"), []byte(filepath.ToSlash(dir)))
	}
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range c.setup {
		f := strings.Fields(s)
		p := filepath.Join(dir, filepath.FromSlash(f[1]))
		switch f[0] {
		case "rm":
			err = os.Remove(p)
		case "symlink":
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Symlink(filepath.FromSlash(f[2]), p)
			}
			if err != nil && runtime.GOOS == "windows" {
				t.Skip("no symlinks:", err)
			}
		case "fifo":
			if runtime.GOOS == "windows" {
				t.Skip("no FIFOs on windows")
			}
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = exec.Command("mkfifo", p).Run()
			}
		default:
			t.Fatalf("unknown setup %q", s)
		}
		if err != nil {
			t.Fatalf("setup %q: %v", s, err)
		}
		if strings.Contains(s, "/dev/") && runtime.GOOS == "windows" {
			t.Skip("no devices on windows")
		}
	}
	args := []string{"build", filepath.Join(dir, "k")}
	for _, a := range c.args {
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
		t.Run(c.name, func(t *testing.T) {
			dir, args := c.materialize(t)
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
				t.Fatalf("%s: kpipe did not finish (blocked on the input?)", c.desc)
			}
			if c.want == "ok" {
				if r.code != 0 {
					t.Errorf("%s: exit %d, stderr %s", c.desc, r.code, r.errOut)
				}
				return
			}
			if r.code == 0 || !strings.Contains(r.errOut, c.want) || r.out != "" {
				t.Errorf("%s: exit %d, stdout %.200q, stderr %.2000s\nwant a failure mentioning %q", c.desc, r.code, r.out, r.errOut, c.want)
			}
			if entries, _ := os.ReadDir(filepath.Join(dir, "out")); len(entries) > 1 {
				t.Errorf("%s: files written to the out dir", c.desc)
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
		if strings.HasPrefix(c.kustomize, "stricter") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			dir, args := c.materialize(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, kz, args...)
			cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "xdg"), "HOME="+dir)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			switch {
			case ctx.Err() != nil:
				t.Errorf("%s: kustomize did not finish: mark the case stricter", c.desc)
			case strings.HasPrefix(c.kustomize, "fails"):
				if err == nil {
					t.Errorf("%s: kustomize succeeds where kpipe fails:\n%.500s", c.desc, stdout.String())
				}
			case c.kustomize == "same":
				t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
				code, out, errOut := kpipe(t, args...)
				if err != nil || code != 0 || out != stdout.String() {
					t.Errorf("%s: kustomize (%v) and kpipe (exit %d, %s) differ:\n%s\n---\n%s", c.desc, err, code, errOut, stdout.String(), out)
				}
			default:
				t.Fatalf("unknown kustomize expectation %q", c.kustomize)
			}
		})
	}
}
