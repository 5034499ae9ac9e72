package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/fetch/netfetch"
)

// A file downloaded by a Fetcher with a Net is kept: a Fetcher without
// one reads it --offline, and fails online naming the URL and ErrNoNet.
func TestFileWithoutNet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("kind: ConfigMap\n"))
	}))
	defer srv.Close()
	url := srv.URL + "/cm.yaml"
	dir := t.TempDir()
	ctx := context.Background()

	_, err := fetch.New(fetch.Options{Dir: dir}).File(ctx, url)
	if !errors.Is(err, fetch.ErrNoNet) || err.Error() != url+": this kpipe binary has no network support" {
		t.Fatalf("online without a Net: %v", err)
	}
	if _, err := fetch.New(fetch.Options{Dir: dir, Offline: true}).File(ctx, url); err == nil {
		t.Fatal("offline read of a file never downloaded succeeded")
	}
	if data, err := fetch.New(fetch.Options{Dir: dir, Net: netfetch.New(nil)}).File(ctx, url); err != nil || string(data) != "kind: ConfigMap\n" {
		t.Fatalf("download: %q, %v", data, err)
	}
	if data, err := fetch.New(fetch.Options{Dir: dir, Offline: true}).File(ctx, url); err != nil || string(data) != "kind: ConfigMap\n" {
		t.Fatalf("offline read without a Net: %q, %v", data, err)
	}
}
