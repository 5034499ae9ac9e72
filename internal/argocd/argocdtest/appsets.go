package argocdtest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// AppSetCase is one ApplicationSet case.
type AppSetCase struct {
	ID      string
	YAML    []byte
	Repos   map[string]string
	Args    []string
	Result  map[string]any
	Exit    int
	Missing string
}

// HasArg reports an oracle flag.
func (c *AppSetCase) HasArg(name string) bool {
	for _, a := range c.Args {
		if a == "-"+name {
			return true
		}
	}
	return false
}

// AppSetCases returns the kept ApplicationSet cases and the corpus's.
func AppSetCases(t testing.TB) []*AppSetCase {
	seen := map[string]bool{}
	var out []*AppSetCase
	corpus := CorpusDir()
	add := func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if seen[e.Name()] || !e.IsDir() {
				continue
			}
			seen[e.Name()] = true
			d := filepath.Join(dir, e.Name())
			c := &AppSetCase{ID: e.Name(), Repos: map[string]string{}}
			var err error
			if c.YAML, err = os.ReadFile(filepath.Join(d, "appset.yaml")); err != nil {
				t.Fatal(err)
			}
			var cj struct {
				Repos map[string]string `json:"repos"`
				Args  []string          `json:"args"`
			}
			readJSON(t, filepath.Join(d, "case.json"), &cj)
			readJSON(t, filepath.Join(d, "result.json"), &c.Result)
			ex, _ := os.ReadFile(filepath.Join(d, "exit"))
			c.Exit, _ = strconv.Atoi(strings.TrimSpace(string(ex)))
			c.Args = cj.Args
			for u, r := range cj.Repos {
				if !exists(r) && strings.HasSuffix(r, "/repos/synthetic") {
					r = filepath.Join(Testdata(), "synthetic")
				}
				if exists(r) {
					c.Repos[u] = r
				} else {
					c.Missing = r
				}
			}
			out = append(out, c)
		}
	}
	if corpus != "" {
		add(filepath.Join(corpus, "appsets"))
	}
	add(filepath.Join(Testdata(), "appsets"))
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Tracked lists the files git tracks in dir when dir is the top of a
// work tree, else every file under it (as `git add -A` in a copy would
// track them), slash paths.
func Tracked(t testing.TB, dir string) []string {
	if top, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").Output(); err == nil {
		a, _ := filepath.EvalSymlinks(strings.TrimSpace(string(top)))
		b, _ := filepath.EvalSymlinks(dir)
		if a == b {
			out, err := exec.Command("git", "-C", dir, "ls-files", "-z").Output()
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			for _, f := range bytes.Split(out, []byte{0}) {
				if len(f) > 0 {
					files = append(files, string(f))
				}
			}
			return files
		}
	}
	var files []string
	fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files
}
