package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/cache/remote"
	"github.com/kpipe/kpipe/cache/remote/backend"
)

// withRemote opens the cache in dir with the server at url behind it,
// writing (Write), as a runner with --remote-cache-write does.
func withRemote(t *testing.T, dir, url string) *cache.Store {
	t.Helper()
	b, err := backend.Open(url, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := cache.Open(context.Background(), cache.Options{Dir: dir, Warn: func(m string) { t.Errorf("warning: %s", m) }})
	if s == nil {
		t.Fatal("the cache did not open")
	}
	s.SetRemote(context.Background(), cache.RemoteOptions{Backend: b, Write: true})
	return s
}

// serverHas reports whether the server at url holds kind/name.
func serverHas(t *testing.T, url string, kind remote.Kind, name []byte) bool {
	t.Helper()
	code, _ := do(t, "HEAD", url+"/"+string(kind)+"/"+hex.EncodeToString(name), nil)
	return code == 200
}

// A runner whose own cache holds what it needs builds nothing, and so
// wrote nothing to the remote: write-through sends what it finds in its
// directory and the remote lacks, after one existence check for many
// entries, and nothing the remote has. A large entry whose record the
// remote holds but whose content it lost gets its content alone; a
// sensitive entry stays home.
func TestWriteThroughSendsWhatTheRemoteLacks(t *testing.T) {
	_, url := start(t, Options{})
	dir := t.TempDir()
	small := cache.NewKey("test", "small").Sum()
	large := cache.NewKey("test", "large").Sum()
	secret := cache.NewKey("test", "secret").Sum()
	largeValue := bytes.Repeat([]byte("large value "), 4096) // past the inline bound: content in /cas/
	local := cache.Open(context.Background(), cache.Options{Dir: dir})
	local.Put(small, []byte("small value"))
	local.Put(large, largeValue)
	local.PutSensitive(secret, []byte("password=hunter2-literal"))
	local.Close()

	run := func() cache.RemoteStats {
		t.Helper()
		s := withRemote(t, dir, url)
		if v, ok := s.Get(small); !ok || string(v) != "small value" {
			t.Fatalf("Get(small) = %q, %v", v, ok)
		}
		if !s.Has(large) {
			t.Fatal("Has(large) is false")
		}
		if _, ok := s.Get(secret); !ok {
			t.Fatal("Get(secret) missed")
		}
		s.Flush()
		st := s.RemoteStats()
		s.Close()
		return st
	}
	first := run()
	if first.Uploads != 2 || first.Checked != 2 || first.Present != 0 || first.Hits != 0 {
		t.Errorf("first run: %+v; want 2 entries checked and uploaded", first)
	}
	sum := sha256.Sum256(largeValue)
	for _, o := range []struct {
		kind remote.Kind
		name []byte
		want bool
	}{{remote.AC, small[:], true}, {remote.AC, large[:], true}, {remote.CAS, sum[:], true}, {remote.AC, secret[:], false}} {
		if got := serverHas(t, url, o.kind, o.name); got != o.want {
			t.Errorf("server holds %s/%x: %v, want %v", o.kind, o.name[:6], got, o.want)
		}
	}
	m := scrape(t, url)
	again := run()
	if again.Uploads != 0 || again.Checked != 2 || again.Present != 2 {
		t.Errorf("second run: %+v; want both found on the remote, nothing sent", again)
	}
	if n := scrape(t, url); n[`kpipe_cache_uploads_total{kind="ac"}`] != m[`kpipe_cache_uploads_total{kind="ac"}`] ||
		n[`kpipe_cache_uploads_total{kind="cas"}`] != m[`kpipe_cache_uploads_total{kind="cas"}`] {
		t.Errorf("the second run uploaded again: %v then %v", m, n)
	}

	// A server that holds the large entry's record but not its content.
	_, url2 := start(t, Options{})
	rec, err := os.ReadFile(filepath.Join(dir, "v2", hex.EncodeToString(large[:])[:1], hex.EncodeToString(large[:])+"-a"))
	if err != nil {
		t.Fatal(err)
	}
	if code, b := do(t, "PUT", url2+"/ac/"+hex.EncodeToString(large[:]), rec); code != 200 {
		t.Fatalf("PUT of the record: %d %s", code, b)
	}
	s := withRemote(t, dir, url2)
	s.Has(large)
	s.Close()
	m2 := scrape(t, url2)
	if m2[`kpipe_cache_uploads_total{kind="cas"}`] != 1 || m2[`kpipe_cache_uploads_total{kind="ac"}`] != 1 || !serverHas(t, url2, remote.CAS, sum[:]) {
		t.Errorf("the lost content was not sent alone: %v", m2)
	}
}

// A server that does not know the batch request (an nginx, a
// bazel-remote, an older kpipe) is asked with a HEAD for each entry.
func TestWriteThroughWithoutTheBatchRequest(t *testing.T) {
	s, err := Open(Options{Dir: filepath.Join(t.TempDir(), "store"), MaxSize: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	var batches atomic.Int64
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == remote.MissingPath {
			batches.Add(1)
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close(); s.Close() })
	url := "http://" + l.Addr().String()

	dir := t.TempDir()
	local := cache.Open(context.Background(), cache.Options{Dir: dir})
	var keys []cache.Key
	for i := 0; i < 20; i++ {
		k := cache.NewKey("test", "entry").String(strconv.Itoa(i)).Sum()
		local.Put(k, []byte(strings.Repeat("v", i+1)))
		keys = append(keys, k)
	}
	local.Close()
	for round := 0; round < 2; round++ {
		st := withRemote(t, dir, url)
		for _, k := range keys {
			st.Has(k)
		}
		st.Flush()
		rs := st.RemoteStats()
		st.Close()
		if want := map[int]int64{0: 20, 1: 0}[round]; rs.Uploads != want || rs.Checked != 20 || rs.Present != 20-want {
			t.Errorf("round %d: %+v; want %d uploads", round, rs, want)
		}
	}
	if n := batches.Load(); n != 2 {
		t.Errorf("the batch request was tried %d times in 2 runs; once a run is enough to learn the server has none", n)
	}
	for _, k := range keys {
		if !serverHas(t, url, remote.AC, k[:]) {
			t.Errorf("the server lacks %x", k[:6])
		}
	}
}

// The batch existence request: objects one a line, the missing ones
// back after the header line; a malformed line is 400, and a read token
// may ask.
func TestMissingRequest(t *testing.T) {
	const readTok, writeTok = "read-token-0123456789", "write-token-0123456789"
	_, url := start(t, Options{ReadTokens: []string{readTok}, WriteTokens: []string{writeTok}})
	content := []byte("held")
	if code, _ := do(t, "PUT", url+"/cas/"+hexSum(content), content, "Authorization", "Bearer "+writeTok); code != 200 {
		t.Fatalf("PUT: %d", code)
	}
	absent := hexSum([]byte("absent"))
	body := "cas/" + hexSum(content) + "\ncas/" + absent + "\nac/" + absent + "\n"
	if code, _ := do(t, "POST", url+remote.MissingPath, []byte(body)); code != 401 {
		t.Errorf("without a token: %d", code)
	}
	code, b := do(t, "POST", url+remote.MissingPath, []byte(body), "Authorization", "Bearer "+readTok)
	if want := remote.MissingHeader + "\ncas/" + absent + "\nac/" + absent + "\n"; code != 200 || string(b) != want {
		t.Errorf("POST %s: %d %q, want %q", remote.MissingPath, code, b, want)
	}
	for _, bad := range []string{"cas/" + absent[:63] + "\n", "x/" + absent + "\n", "cas/" + strings.ToUpper(absent) + "\n"} {
		if code, _ := do(t, "POST", url+remote.MissingPath, []byte(bad), "Authorization", "Bearer "+readTok); code != 400 {
			t.Errorf("POST of %q: %d, want 400", bad, code)
		}
	}
	if code, _ := do(t, "GET", url+remote.MissingPath, nil, "Authorization", "Bearer "+readTok); code != 405 {
		t.Errorf("GET %s: %d, want 405", remote.MissingPath, code)
	}
}
