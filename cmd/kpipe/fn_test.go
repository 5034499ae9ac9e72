package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// copyTree copies the files under src into dst, keeping their modes.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, st.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readTree maps each file under dir to its content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The seed's nginx example end to end: `kpipe fn run DIR` finds the Nginx
// config by its function annotation and runs its script, which wraps
// itself with `kpipe fn wrap -- $0` to read NAME and REPLICAS from the
// config; the Service and Deployment land in config/NAME_KIND.yaml, the
// config file is left as it was (comments included), and a second run
// changes nothing.
func TestFnRunNginx(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "kpipe")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KPIPE_TEST_AS_KPIPE", "1")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	dir := t.TempDir()
	copyTree(t, "testdata/nginx", dir)
	before := readTree(t, dir)

	code, out, errOut := kpipe(t, "fn", "run", dir)
	if code != 1 || !strings.Contains(errOut, "--enable-exec") || !strings.Contains(errOut, "nginx.yaml") {
		t.Errorf("without --enable-exec: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut = kpipe(t, "fn", "run", dir, "--enable-exec")
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	got := readTree(t, dir)
	want := readTree(t, "testdata/nginx-expected")
	for name, content := range before {
		want[name] = content
	}
	var names []string
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(got) != len(want) {
		t.Errorf("files %v, want %d files", names, len(want))
	}
	for name, content := range want {
		if got[name] != content {
			t.Errorf("%s:\n%s\nwant\n%s", name, got[name], content)
		}
	}

	code, _, errOut = kpipe(t, "fn", "run", dir, "--enable-exec")
	if code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errOut)
	}
	if again := readTree(t, dir); len(again) != len(got) || again["config/my-instance_deployment.yaml"] != got["config/my-instance_deployment.yaml"] {
		t.Errorf("second run changed the files")
	}
}
