//go:build unix

package loaders

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kpipe/kpipe/internal/fsread"
)

// Resolve's quick path (lstatBelow) must find what filepath.EvalSymlinks
// finds, whatever symlinks sit between the root and the file.
func TestResolveMatchesEvalSymlinks(t *testing.T) {
	top, mk, link := symlinkTree(t)
	mk("repo/base/cm.yaml", "a")
	mk("repo/overlay/kustomization.yaml", "b")
	mk("outside/secret.yaml", "c")
	link("../base", "repo/overlay/base-link")                    // a directory symlink below the root
	link("cm.yaml", "repo/base/cm-link.yaml")                    // a file symlink in a sibling
	link("../../outside", "repo/overlay/out")                    // a symlink leaving the tree
	link(filepath.Join(top, "repo"), filepath.Join("repo-link")) // the root reached through a link
	root := filepath.Join(top, "repo/overlay")
	l, err := New(Disk, root, RootOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"kustomization.yaml", "../base/cm.yaml", "base-link/cm.yaml", "../base/cm-link.yaml",
		"out/secret.yaml", "../base", ".", "missing.yaml", "../missing/x.yaml", "kustomization.yaml/x",
		filepath.Join(top, "repo-link/base/cm.yaml"), filepath.Join(top, "outside/secret.yaml"), "/",
	} {
		real, kind, err := l.Resolve(p)
		want, werr := filepath.EvalSymlinks(l.Abs(p))
		if (err != nil) != (werr != nil) {
			t.Errorf("Resolve(%q): error %v; EvalSymlinks: %v", p, err, werr)
			continue
		}
		if err == nil && real != want {
			t.Errorf("Resolve(%q) = %q; EvalSymlinks gives %q", p, real, want)
		}
		if st, serr := os.Stat(want); err == nil && serr == nil && (kind == Dir) != st.IsDir() {
			t.Errorf("Resolve(%q): kind %v, but IsDir is %v", p, kind, st.IsDir())
		}
	}
}

// ReadFileStat's quick path (a file named in the root's directory or an
// ancestor's, opened without following a symlink) reads what resolving
// the path, checking the restriction and reading the real path read, and
// fails as that fails, under either restriction.
func TestReadFileStatMatchesResolveThenRead(t *testing.T) {
	top, mk, link := symlinkTree(t)
	mk("repo/overlay/kustomization.yaml", "k")
	mk("repo/overlay/sub/patch.yaml", "p")
	mk("repo/top.yaml", "t")
	mk("outside/secret.yaml", "s")
	link("kustomization.yaml", "repo/overlay/in-link.yaml")               // a symlink to a file beside it
	link("../../outside/secret.yaml", "repo/overlay/out-link.yaml")       // a symlink leaving the root
	link("overlay/kustomization.yaml", "repo/top-link.yaml")              // a symlink in an ancestor
	link(filepath.Join(top, "repo/overlay/sub"), "repo/overlay/dir-link") // a symlink to a directory
	root := filepath.Join(top, "repo/overlay")
	for _, r := range []Restriction{RootOnly, None} {
		l, err := New(Disk, root, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{
			"kustomization.yaml", "in-link.yaml", "out-link.yaml", "sub/patch.yaml", "sub", "dir-link",
			"missing.yaml", "../top.yaml", "../top-link.yaml", filepath.Join(top, "outside/secret.yaml"),
		} {
			data, real, _, err := l.ReadFileStat(p)
			wdata, wreal, werr := slowRead(l, p)
			if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
				t.Errorf("restriction %v, %q: error %v, want %v", r, p, err, werr)
				continue
			}
			if err == nil && (real != wreal || string(data) != string(wdata)) {
				t.Errorf("restriction %v, %q: read %q at %s, want %q at %s", r, p, data, real, wdata, wreal)
			}
		}
	}
}

// slowRead reads p as ReadFileStat does without its quick path: under
// LoadRestrictionsNone a path that is missing or a directory fails as
// reading the joined path fails (kustomize reads it with no restrictor in
// between).
func slowRead(l *Loader, p string) ([]byte, string, error) {
	real, kind, err := l.Resolve(p)
	if l.restriction == None && (err != nil || kind == Dir) {
		_, err := os.ReadFile(l.Abs(p))
		return nil, real, err
	}
	if err != nil {
		return nil, real, err
	}
	if kind == Dir {
		return nil, real, fmt.Errorf("'%s' must resolve to a file", real)
	}
	if err := l.check(real); err != nil {
		return nil, real, err
	}
	data, err := fsread.File(real)
	return data, real, err
}

// symlinkTree returns a new symlink-free directory, and functions that
// write a file (and its directories) and make a symlink below it.
func symlinkTree(t *testing.T) (top string, mk func(p, content string), link func(target, p string)) {
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk = func(p, content string) {
		t.Helper()
		p = filepath.Join(top, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link = func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(top, p)); err != nil {
			t.Fatal(err)
		}
	}
	return top, mk, link
}
