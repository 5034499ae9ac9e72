package fetch

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tgz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// An archive entry outside the directory is refused, and nothing is
// written outside it.
func TestUntarRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../evil.yaml", "hello/../../evil.yaml", "/etc/evil.yaml"} {
		root := t.TempDir()
		err := untar(tgz(t, map[string]string{name: "x"}), filepath.Join(root, "into"))
		if err == nil || !strings.Contains(err.Error(), "outside the archive") {
			t.Errorf("%s: err = %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(root, "evil.yaml")); err == nil {
			t.Errorf("%s: written outside", name)
		}
	}
	dir := t.TempDir()
	if err := untar(tgz(t, map[string]string{"hello/Chart.yaml": "name: hello\n"}), dir); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "hello", "Chart.yaml")); err != nil || string(data) != "name: hello\n" {
		t.Errorf("unpacked %q, %v", data, err)
	}
}

// The tree digest changes with any file's content or name.
func TestTreeDigest(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	d1, err := treeDigest(dir)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(dir, "a"), []byte("2"), 0o644)
	d2, _ := treeDigest(dir)
	_ = os.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	d3, _ := treeDigest(dir)
	if d1 == d2 || d2 == d3 || d1 == d3 {
		t.Errorf("digests %s %s %s should differ", d1, d2, d3)
	}
}

func TestIsExactChartVersion(t *testing.T) {
	for v, want := range map[string]bool{"1.2.3": true, "v1.2.3": true, "1.2.3-rc.1": true, "1.2.3+build": true,
		"": false, "^1.2": false, "1.x": false, ">=1.0.0": false, "1.2": false, "~1.2.3": false} {
		if IsExactChartVersion(v) != want {
			t.Errorf("IsExactChartVersion(%q) = %v", v, !want)
		}
	}
}

func TestIsCommitID(t *testing.T) {
	for ref, want := range map[string]bool{strings.Repeat("a", 40): true, strings.Repeat("0", 64): true,
		strings.Repeat("a", 39): false, strings.Repeat("A", 40): false, "v1": false, "": false} {
		if IsCommitID(ref) != want {
			t.Errorf("IsCommitID(%q) = %v", ref, !want)
		}
	}
}
