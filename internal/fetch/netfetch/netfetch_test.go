package netfetch

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/fetch"
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

// Get returns a 2xx body, and another status as a *fetch.StatusError in
// kustomize's wording.
func TestGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok.yaml" {
			w.Write([]byte("kind: ConfigMap\n"))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	n := New(nil)
	data, err := n.Get(context.Background(), srv.URL+"/ok.yaml")
	if err != nil || string(data) != "kind: ConfigMap\n" {
		t.Fatalf("Get = %q, %v", data, err)
	}
	_, err = n.Get(context.Background(), srv.URL+"/missing.yaml")
	var se *fetch.StatusError
	if !errors.As(err, &se) || se.Code != 404 || se.URL != srv.URL+"/missing.yaml" || err.Error() != "HTTP Error: status code 404 (Not Found)" {
		t.Errorf("Get of a missing file: %#v, %v", err, err)
	}
}
