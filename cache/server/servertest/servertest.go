// Package servertest holds what the tests of kpipe's cache server share,
// wherever the server runs (in the test, as kpipe-cache-server, or handed
// over to by kpipe cache serve): reading one of its metrics, an upload
// that a signal interrupts, and a buffer its log can be written to while a
// test reads it. For tests only; it imports nothing of kpipe.
package servertest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Metric reads the sample named name from the server's /metrics at url;
// ok is false when the server does not report it.
func Metric(t testing.TB, url, name string) (v float64, ok bool) {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("/metrics: %s: %v", name, err)
			}
			return f, true
		}
	}
	return 0, false
}

// UploadAcrossSignal uploads body to url's /cas/ under its digest, calls
// signal once half of it is sent and the request is in the server's
// handler, sends the rest, and returns the status the server answered
// (-1 when the request failed) and the object's name.
func UploadAcrossSignal(url string, body []byte, signal func()) (status int, name string) {
	sum := sha256.Sum256(body)
	name = hex.EncodeToString(sum[:])
	pr, pw := io.Pipe()
	req, err := http.NewRequest("PUT", url+"/cas/"+name, pr)
	if err != nil {
		return -1, name
	}
	req.ContentLength = int64(len(body))
	res := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- -1
			return
		}
		resp.Body.Close()
		res <- resp.StatusCode
	}()
	pw.Write(body[:len(body)/2])
	time.Sleep(200 * time.Millisecond) // the request is in the handler
	signal()
	time.Sleep(200 * time.Millisecond)
	pw.Write(body[len(body)/2:])
	pw.Close()
	return <-res, name
}

// Buffer is a bytes.Buffer for one writer and readers at once (a server's
// log, read while it runs).
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
