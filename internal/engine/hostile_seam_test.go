package engine

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kpipe/kpipe/internal/gitfs"
	"github.com/kpipe/kpipe/internal/hostiletest"
	"github.com/kpipe/kpipe/loaders"
)

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
	cases, err := hostiletest.Load("../../testdata/hostile")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			diskOnly, err := c.Write(dir)
			if err != nil {
				t.Fatal(err)
			}
			r := loaders.RootOnly
			opts := Options{Jobs: 2, PluginEnviron: pluginEnv(dir)}
			for _, a := range c.Args {
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
			case c.Want == "ok" || strings.Contains(c.Want, "writes only directly"): // (the latter: -o DIR's business)
				if strings.HasPrefix(onDisk, "error: ") {
					t.Fatalf("on disk: %s", onDisk)
				}
			case !strings.HasPrefix(onDisk, "error: ") || !strings.Contains(onDisk, c.Want):
				t.Fatalf("on disk: %.300s\nwant a failure mentioning %q", onDisk, c.Want)
			}
			trees := map[string]loaders.FS{"memory": loaders.NewFS(memTree(t, dir), dir)}
			if !diskOnly || !strings.Contains(strings.Join(c.Setup, " "), "fifo") {
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
