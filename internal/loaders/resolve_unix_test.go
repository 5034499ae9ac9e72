//go:build unix

package loaders

import (
	"os"
	"path/filepath"
	"testing"
)

// Resolve's quick path (lstatBelow) must find what filepath.EvalSymlinks
// finds, whatever symlinks sit between the root and the file.
func TestResolveMatchesEvalSymlinks(t *testing.T) {
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p, content string) {
		t.Helper()
		p = filepath.Join(top, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(top, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("repo/base/cm.yaml", "a")
	mk("repo/overlay/kustomization.yaml", "b")
	mk("outside/secret.yaml", "c")
	link("../base", "repo/overlay/base-link")                    // a directory symlink below the root
	link("cm.yaml", "repo/base/cm-link.yaml")                    // a file symlink in a sibling
	link("../../outside", "repo/overlay/out")                    // a symlink leaving the tree
	link(filepath.Join(top, "repo"), filepath.Join("repo-link")) // the root reached through a link
	root := filepath.Join(top, "repo/overlay")
	l, err := New(root, RootOnly)
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
