package batch

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// writeIfChanged writes an output only when its content differs, and
// replaces what is not kpipe's to read as its own (a symlink) with a
// file, leaving the symlink's target as it was.
func TestWriteIfChanged(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out", "app.yaml")
	for _, c := range []struct {
		data string
		want bool
	}{{"a: 1\n", true}, {"a: 1\n", false}, {"a: 2\n", true}, {"a: 2\nb: 3\n", true}, {"a: 2\n", true}} {
		wrote, err := writeIfChanged(p, []byte(c.data))
		if err != nil || wrote != c.want {
			t.Fatalf("writing %q: wrote %v, %v; want %v", c.data, wrote, err, c.want)
		}
		if b, _ := os.ReadFile(p); string(b) != c.data {
			t.Fatalf("after writing %q the file holds %q", c.data, b)
		}
	}
	if runtime.GOOS == "windows" {
		return
	}
	target := filepath.Join(dir, "elsewhere.yaml")
	if err := os.WriteFile(target, []byte("a: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if wrote, err := writeIfChanged(p, []byte("a: 2\n")); err != nil || !wrote {
		t.Errorf("over a symlink: wrote %v, %v; want a file written", wrote, err)
	}
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the output is not a regular file now: %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "a: 2\n" {
		t.Errorf("the symlink's target changed: %q", b)
	}
}
