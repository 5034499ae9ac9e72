package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBuildAllCheck: build-all --check compares the rendered outputs
// committed under --out-dir with the sources and writes nothing there:
// exit 0 when they match; exit 1 naming the root whose output was edited
// by hand or is missing, and the output no root renders any more. With
// or without a cache, the same answers.
func TestBuildAllCheck(t *testing.T) {
	tree := t.TempDir()
	writeFiles(t, tree, map[string]string{
		"a/kustomization.yaml": "resources:\n- cm.yaml\n",
		"a/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"b/kustomization.yaml": "resources:\n- cm.yaml\nnamePrefix: b-\n",
		"b/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
	})
	t.Chdir(tree)
	for _, cacheArgs := range [][]string{{"--cache-dir", filepath.Join(t.TempDir(), "c")}, {"--no-cache"}} {
		out := filepath.Join(t.TempDir(), "rendered")
		if code, _, stderr := kpipe(t, append([]string{"build-all", ".", "--out-dir", out}, cacheArgs...)...); code != 0 {
			t.Fatalf("build-all: exit %d\n%s", code, stderr)
		}
		before := snapshot(t, out)
		check := func(what string, wantCode int, want ...string) {
			t.Helper()
			code, stdout, stderr := kpipe(t, append([]string{"build-all", ".", "--out-dir", out, "--check"}, cacheArgs...)...)
			if code != wantCode || stdout != "" {
				t.Errorf("%s: exit %d (want %d), stdout %q\n%s", what, code, wantCode, stdout, stderr)
			}
			for _, w := range want {
				if !strings.Contains(stderr, w) {
					t.Errorf("%s: stderr lacks %q:\n%s", what, w, stderr)
				}
			}
		}
		check("clean", 0)
		if after := snapshot(t, out); after != before {
			t.Errorf("--check changed the output directory:\n%s\nwas\n%s", after, before)
		}

		a := filepath.Join(out, "a.yaml")
		if err := os.WriteFile(a, []byte("edited: by hand\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		check("edited", 1, "out of date: ", "a.yaml (the output of a)")
		if data, _ := os.ReadFile(a); string(data) != "edited: by hand\n" {
			t.Errorf("--check rewrote the edited output: %q", data)
		}
		if err := os.Remove(a); err != nil {
			t.Fatal(err)
		}
		check("missing", 1, "a.yaml (the output of a)")
		if _, err := os.Stat(a); err == nil {
			t.Error("--check wrote the missing output")
		}
		if code, _, stderr := kpipe(t, append([]string{"build-all", ".", "--out-dir", out}, cacheArgs...)...); code != 0 {
			t.Fatalf("build-all: exit %d\n%s", code, stderr)
		}
		if err := os.WriteFile(filepath.Join(out, "gone.yaml"), []byte("a: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "NOTES.md"), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		check("orphan", 1, "no root renders gone.yaml any more")
		if err := os.Remove(filepath.Join(out, "gone.yaml")); err != nil {
			t.Fatal(err)
		}
		check("clean again, with a file of the user's", 0)
	}
	if code, _, stderr := kpipe(t, "build-all", ".", "--check"); code == 0 || !strings.Contains(stderr, "--check needs --out-dir") {
		t.Errorf("--check without --out-dir: exit %d\n%s", code, stderr)
	}
}

// snapshot describes every file under dir: name, size and modification
// time.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s %d\n", p, fi.ModTime().Format(time.RFC3339Nano), fi.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
