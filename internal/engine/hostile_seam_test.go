package engine

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kpipe/kpipe/internal/gitfs"
	"github.com/kpipe/kpipe/loaders"
)

// hostileCase is one tree of testdata/hostile (see its README.md; the CLI
// builds each one in cmd/kpipe's TestHostileCatalogue).
type hostileCase struct {
	name, want  string
	args, setup []string
	files       map[string][]byte
}

var hostileSection = regexp.MustCompile(`(?m)^-- (.+) --\n`)

func hostileCases(t *testing.T) []hostileCase {
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
		locs := hostileSection.FindAllSubmatchIndex(data, -1)
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
			switch k {
			case "want":
				c.want = v
			case "args":
				c.args = strings.Fields(v)
			case "setup":
				c.setup = append(c.setup, v)
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// writeHostile writes the case's tree (with testdata/hostile/outside
// beside it) under dir; false when it needs what only a disk holds (a
// FIFO).
func (c hostileCase) write(t *testing.T, dir string) (onDiskOnly bool) {
	t.Helper()
	files := map[string][]byte{}
	shared, _ := filepath.Glob("../../testdata/hostile/outside/*")
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
		var err error
		switch f[0] {
		case "rm":
			err = os.Remove(p)
		case "symlink":
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Symlink(filepath.FromSlash(f[2]), p)
			}
			onDiskOnly = onDiskOnly || strings.HasPrefix(f[2], "/dev/")
		case "fifo":
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = exec.Command("mkfifo", p).Run()
			}
			onDiskOnly = true
		default:
			t.Fatalf("unknown setup %q", s)
		}
		if err != nil {
			t.Fatalf("setup %q: %v", s, err)
		}
	}
	return onDiskOnly
}

// memTree is what lies under dir, as an fstest.MapFS (FIFOs left out).
func memTree(t *testing.T, dir string) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			m[rel] = &fstest.MapFile{Data: []byte(filepath.ToSlash(target)), Mode: fs.ModeSymlink | 0o777}
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = &fstest.MapFile{Data: data, Mode: 0o644}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// gitTree commits what lies under dir (its git directory kept apart) and
// returns the commit's tree.
func gitTree(t *testing.T, dir string) *gitfs.FS {
	t.Helper()
	gitDir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", gitDir}, {"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", "tree"}} {
		cmd := exec.Command("git", append([]string{"--git-dir=" + gitDir, "--work-tree=" + dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	repo, err := gitfs.Open(context.Background(), gitDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	_, root, err := repo.Commit("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return repo.Tree(root)
}

// TestHostileTreesThroughEachSeam builds every tree of testdata/hostile
// read from disk, from a git commit of it and from memory, both mounted
// where the disk holds it: each fails (or builds) as on disk, with the
// same error word for word (the load restrictor's refusals, symlinks
// leaving the root, alias bombs, cycles, bad names). What only a disk
// can hold (a FIFO, a link to /dev/zero, which names nothing in the
// other trees) must fail there too.
func TestHostileTreesThroughEachSeam(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed (apt-get install git)")
	}
	if runtime.GOOS == "windows" {
		t.Skip("symlinks, FIFOs and devices")
	}
	for _, c := range hostileCases(t) {
		t.Run(c.name, func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			diskOnly := c.write(t, dir)
			r := loaders.RootOnly
			opts := Options{Jobs: 2, PluginEnviron: pluginEnv(dir)}
			for _, a := range c.args {
				switch a {
				case "LoadRestrictionsNone":
					r = loaders.None
				case "--enable-alpha-plugins":
					opts.EnableAlphaPlugins = true
				case "--enable-exec":
					opts.EnableExec = true
				}
			}
			build := func(fsys loaders.FS) string {
				g, errs := LoadContext(context.Background(), []string{filepath.Join(dir, "k")}, LoadOptions{FS: fsys, Restriction: r})
				res := NewBuilder(g, opts).Run(context.Background(), errs)[0]
				if res.Err != nil {
					return "error: " + res.Err.Error()
				}
				return string(res.YAML)
			}
			onDisk := build(loaders.Disk)
			switch {
			case c.want == "ok" || strings.Contains(c.want, "writes only directly"): // (the latter: -o DIR's business)
				if strings.HasPrefix(onDisk, "error: ") {
					t.Fatalf("on disk: %s", onDisk)
				}
			case !strings.HasPrefix(onDisk, "error: ") || !strings.Contains(onDisk, c.want):
				t.Fatalf("on disk: %.300s\nwant a failure mentioning %q", onDisk, c.want)
			}
			trees := map[string]loaders.FS{"memory": loaders.NewFS(memTree(t, dir), dir)}
			if !diskOnly || !strings.Contains(strings.Join(c.setup, " "), "fifo") {
				trees["git"] = loaders.NewFS(gitTree(t, dir), dir)
			}
			for name, fsys := range trees {
				got := build(fsys)
				switch {
				case diskOnly:
					if !strings.HasPrefix(got, "error: ") {
						t.Errorf("%s: what only a disk holds builds:\n%.300s", name, got)
					}
				case got != onDisk:
					t.Errorf("%s:\n%.500s\non disk:\n%.500s", name, got, onDisk)
				}
			}
		})
	}
}
