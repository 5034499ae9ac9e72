package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// nginxEnv makes the test binary answer as kpipe on PATH, for the nginx
// example's script, which calls `kpipe fn wrap`.
func nginxEnv(t *testing.T) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "kpipe")); err != nil {
		t.Skip("no symlinks:", err)
	}
	return append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// The seed's nginx example end to end: `kpipe fn run .` in the example
// finds the Nginx config by its function annotation and runs its script
// (the exec path is relative to the directory fn run starts in, as in
// kustomize), which wraps itself with `kpipe fn wrap -- $0` to read NAME
// and REPLICAS from the config; the Service and Deployment land in
// config/NAME_KIND.yaml, the config file keeps its bytes (comments
// included), and a second run changes nothing.
func TestFnRunNginx(t *testing.T) {
	env := nginxEnv(t)
	dir := filepath.Join(t.TempDir(), "pkg")
	copyTree(t, "testdata/nginx", dir)
	before := readTree(t, dir)

	o := runFnIn(t, kpipeBin(t), dir, env, ".")
	if o.exit != 1 || !strings.Contains(o.stderr, "--enable-exec") || !strings.Contains(o.stderr, "nginx.yaml") {
		t.Errorf("without --enable-exec: exit %d, stderr %q", o.exit, o.stderr)
	}
	o = runFnIn(t, kpipeBin(t), dir, env, ".", "--enable-exec")
	if o.exit != 0 || o.stdout != "" || o.stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", o.exit, o.stdout, o.stderr)
	}
	want := readTree(t, "testdata/nginx-expected")
	for name, content := range before {
		want[name] = content
	}
	if len(o.files) != len(want) {
		t.Errorf("files %v, want %d files", unionKeys(o.files, nil), len(want))
	}
	for name, content := range want {
		if o.files[name] != content {
			t.Errorf("%s:\n%s\nwant\n%s", name, o.files[name], content)
		}
	}
	again := runFnIn(t, kpipeBin(t), dir, env, ".", "--enable-exec")
	if again.exit != 0 || fmt.Sprint(again.files) != fmt.Sprint(o.files) {
		t.Errorf("second run: exit %d, files changed: %v", again.exit, again.files)
	}
}

// TestFnRunNginxDifferential runs the nginx example with kustomize v5.8.2's
// fn run (the script still calling `kpipe fn wrap`) and with kpipe's: the
// same files, twice over.
func TestFnRunNginxDifferential(t *testing.T) {
	kz := []string{kustomize582(t)}
	env := nginxEnv(t)
	var outcomes [2][2]fnOutcome
	for i, bin := range [][]string{kz, kpipeBin(t)} {
		dir := filepath.Join(t.TempDir(), "pkg")
		copyTree(t, "testdata/nginx", dir)
		for run := 0; run < 2; run++ {
			outcomes[i][run] = runFnIn(t, bin, dir, env, ".", "--enable-exec")
		}
	}
	for run := 0; run < 2; run++ {
		compareFn(t, outcomes[0][run], outcomes[1][run])
	}
}
