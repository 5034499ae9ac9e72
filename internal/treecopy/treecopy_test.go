package treecopy

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestCopy: files, modes, directories and symlinks are copied; .git is
// not.
func TestCopy(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for p, body := range map[string]string{"a.yaml": "a: 1\n", "d/e/b.yaml": "b\n", ".git/HEAD": "ref\n", "x/.git/config": "c\n"} {
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(src, "a.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := 2
	if runtime.GOOS != "windows" {
		if err := os.Symlink("d/e/b.yaml", filepath.Join(src, "link.yaml")); err != nil {
			t.Fatal(err)
		}
		want++
	}
	n, err := Copy(src, filepath.Join(dst, "out"))
	if err != nil || n != want {
		t.Fatalf("Copy = %d, %v; want %d files", n, err, want)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "out/d/e/b.yaml")); err != nil || string(b) != "b\n" {
		t.Fatalf("d/e/b.yaml: %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "out/a.yaml")); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o755) {
		t.Fatalf("a.yaml: %v, %v", fi, err)
	}
	for _, p := range []string{".git", "x/.git"} {
		if _, err := os.Stat(filepath.Join(dst, "out", p)); !os.IsNotExist(err) {
			t.Errorf("%s copied (%v)", p, err)
		}
	}
	if runtime.GOOS != "windows" {
		if l, err := os.Readlink(filepath.Join(dst, "out/link.yaml")); err != nil || l != "d/e/b.yaml" {
			t.Errorf("link.yaml: %q, %v", l, err)
		}
	}
}
