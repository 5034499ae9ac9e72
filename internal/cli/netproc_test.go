package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/fetch/netfetch"
)

// serveNet answers concurrent requests, in any order, as kpipe-full's
// fetch.Net would in-process: bodies, HTTP statuses as *fetch.StatusError
// (their code and text), errors by their text, archives unpacked.
func TestServeNetAnswersAsNetfetch(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		io.WriteString(w, "body of "+r.URL.Path)
	}))
	defer web.Close()

	reqR, reqW := io.Pipe()
	ansR, ansW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serveNet(context.Background(), netfetch.New(nil), reqR, ansW); ansW.Close() }()
	c := &netClient{pending: map[uint64]chan netAnswer{}, in: reqW}
	c.start.Do(func() {}) // connected by hand below, not started
	go c.read(ansR, func() error { return <-done })
	p := procNet{c}

	var wg sync.WaitGroup
	for _, path := range []string{"/a", "/b", "/c", "/d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, err := p.Get(context.Background(), web.URL+path)
			if err != nil || string(data) != "body of "+path {
				t.Errorf("get %s: %q, %v", path, data, err)
			}
		}()
	}
	wg.Wait()
	_, err := p.Get(context.Background(), web.URL+"/missing")
	var se *fetch.StatusError
	if !errors.As(err, &se) || se.Code != 404 || se.Text != "Not Found" || se.URL != web.URL+"/missing" {
		t.Errorf("a 404: %#v", err)
	}
	_, want := netfetch.New(nil).Get(context.Background(), "http://127.0.0.1:1/x")
	if _, err := p.Get(context.Background(), "http://127.0.0.1:1/x"); err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("a refused connection: %v, in-process %v", err, want)
	}

	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "chart/Chart.yaml", Mode: 0o644, Size: 5, Typeflag: tar.TypeReg})
	tw.Write([]byte("name\n"))
	tw.Close()
	zw.Close()
	dir := t.TempDir()
	if err := p.Untar(buf.Bytes(), dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "chart", "Chart.yaml")); err != nil || string(b) != "name\n" {
		t.Errorf("unpacked: %q, %v", b, err)
	}
	if err := p.Untar([]byte("not gzip"), dir); err == nil {
		t.Error("a broken archive unpacked")
	}
	reqW.Close()
}
