package cli

import (
	"encoding/json"
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

// build-all's "changed" follows the output, not the cache: after kpipe
// cache clear (a CI runner with an empty cache), roots whose output file
// is byte-identical are not changed and not rewritten; without an output
// directory, the previous --report file is what a root's output is
// compared with. An edited root is the one changed.
func TestBuildAllChangedFollowsTheOutput(t *testing.T) {
	tree := t.TempDir()
	writeFiles(t, tree, map[string]string{
		"a/kustomization.yaml": "resources:\n- cm.yaml\n",
		"a/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"b/kustomization.yaml": "resources:\n- cm.yaml\n",
		"b/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
	})
	t.Chdir(tree)
	cache := filepath.Join(t.TempDir(), "cache")
	changed := func(what, report string, args ...string) []string {
		t.Helper()
		code, _, stderr := kpipe(t, append([]string{"build-all", ".", "--cache-dir", cache, "--report", report}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", what, code, stderr)
		}
		data, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Roots []struct {
				Path    string
				Changed bool
			}
		}
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, rr := range r.Roots {
			if rr.Changed {
				out = append(out, rr.Path)
			}
		}
		return out
	}
	clear := func() {
		if code, _, stderr := kpipe(t, "cache", "clear", "--cache-dir", cache); code != 0 {
			t.Fatalf("cache clear: exit %d\n%s", code, stderr)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	report := filepath.Join(t.TempDir(), "report.json")
	if got := changed("first", report, "--out-dir", out); strings.Join(got, ",") != "a,b" {
		t.Errorf("first run: changed %v, want a,b", got)
	}
	before := snapshot(t, out)
	clear()
	if got := changed("empty cache", report, "--out-dir", out); len(got) != 0 {
		t.Errorf("after cache clear: changed %v, want none", got)
	}
	if after := snapshot(t, out); after != before {
		t.Errorf("identical outputs were rewritten:\n%s\nwas\n%s", after, before)
	}
	writeFiles(t, tree, map[string]string{"b/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b2\n"})
	clear()
	if got := changed("b edited", report, "--out-dir", out); strings.Join(got, ",") != "b" {
		t.Errorf("b edited: changed %v, want b", got)
	}

	// No output directory: compared with the previous report.
	report2 := filepath.Join(t.TempDir(), "report.json")
	changed("no out-dir, first", report2)
	clear()
	if got := changed("no out-dir, empty cache", report2); len(got) != 0 {
		t.Errorf("no out-dir, after cache clear: changed %v, want none", got)
	}
	writeFiles(t, tree, map[string]string{"a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a2\n"})
	if got := changed("no out-dir, a edited", report2); strings.Join(got, ",") != "a" {
		t.Errorf("no out-dir, a edited: changed %v, want a", got)
	}
}

// build-all's help says what a run without --out-dir is for, and, next to
// --prune, that a base left without its overlay becomes a root.
func TestBuildAllHelpSaysWhatItDoes(t *testing.T) {
	_, help, _ := kpipe(t, "build-all", "--help")
	help = strings.Join(strings.Fields(help), " ")
	for _, want := range []string{
		"Without --out-dir, every root is built and nothing is written: a check that every root still builds",
		"the base becomes a root itself, and its output is written",
		"--check",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("build-all --help lacks %q", want)
		}
	}
}
