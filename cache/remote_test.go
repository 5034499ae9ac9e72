package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpipe/kpipe/cache/remote"
	"github.com/kpipe/kpipe/cache/remote/backend"
	"github.com/kpipe/kpipe/cache/remote/remotetest"
)

// servers runs f against each kind of real remote server.
func servers(t *testing.T, f func(t *testing.T, start func(t *testing.T) *remotetest.Server)) {
	t.Run("nginx", func(t *testing.T) {
		f(t, func(t *testing.T) *remotetest.Server { return remotetest.StartNginx(t, remotetest.NginxOptions{}) })
	})
	t.Run("minio", func(t *testing.T) {
		f(t, func(t *testing.T) *remotetest.Server { return remotetest.StartMinIO(t) })
	})
}

type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(m string) { w.mu.Lock(); w.msgs = append(w.msgs, m); w.mu.Unlock() }
func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

// runner opens a store in a new, empty directory with the remote behind it.
func runner(t *testing.T, url string, o RemoteOptions, w *warnings) *Store {
	t.Helper()
	b, err := backend.Open(url, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := Open(context.Background(), Options{Dir: t.TempDir(), Warn: w.add})
	if s == nil {
		t.Fatal(w.list())
	}
	o.Backend = b
	s.SetRemote(context.Background(), o)
	return s
}

// serverHolds reports whether any file the server stored holds needle.
func serverHolds(t *testing.T, srv *remotetest.Server, needle []byte) bool {
	found := false
	_ = filepath.WalkDir(srv.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, needle) {
				found = true
			}
		}
		return nil
	})
	return found
}

// Two runners with empty directories share one server: what the first
// writes, the second reads, verified, into its own directory; sensitive
// entries stay home unless allowed; a reader never writes.
func TestRemoteSharedBetweenRunners(t *testing.T) {
	servers(t, func(t *testing.T, start func(t *testing.T) *remotetest.Server) {
		srv := start(t)
		var w warnings
		large := bytes.Repeat([]byte("large value "), 4096) // past inlineMax: content in /cas/
		secret := []byte("password=s3cr3t-literal-value")
		first := runner(t, srv.URL, RemoteOptions{Write: true}, &w)
		first.Put(key("small"), []byte("replicas: 3"))
		first.Put(key("large"), large)
		first.PutSensitive(key("secret"), secret)
		first.Close()
		st := first.RemoteStats()
		if st.Uploads != 2 || st.BytesUp == 0 {
			t.Errorf("first runner's stats %+v, want 2 uploads (the sensitive entry stays)", st)
		}
		if serverHolds(t, srv, []byte("s3cr3t-literal")) {
			t.Error("the sensitive value reached the server without --remote-cache-sensitive")
		}

		second := runner(t, srv.URL, RemoteOptions{}, &w)
		if v, ok := second.Get(key("small")); !ok || string(v) != "replicas: 3" {
			t.Errorf("small: %q, %v", v, ok)
		}
		if !second.Has(key("large")) {
			t.Error("Has(large) is false")
		}
		if v, ok := second.Get(key("large")); !ok || !bytes.Equal(v, large) {
			t.Errorf("large: %d bytes, %v", len(v), ok)
		}
		if _, ok := second.Get(key("secret")); ok {
			t.Error("the sensitive entry was served")
		}
		second.Put(key("from-reader"), []byte("x"))
		second.Close()
		st = second.RemoteStats()
		if st.Hits != 2 || st.Misses != 1 || st.Uploads != 0 || st.BytesDown < int64(len(large)) {
			t.Errorf("second runner's stats %+v, want 2 hits, 1 miss, no upload", st)
		}
		// What was fetched is in the second runner's own directory now.
		if !second.has(key("small")) || !second.has(key("large")) {
			t.Error("fetched entries were not written to the local cache")
		}
		third := runner(t, srv.URL, RemoteOptions{}, &w)
		if _, ok := third.Get(key("from-reader")); ok {
			t.Error("a read-only runner uploaded")
		}
		third.Close()

		// Allowed explicitly, the sensitive entry travels, and stays
		// sensitive in the reader's cache.
		trusted := runner(t, srv.URL, RemoteOptions{Write: true, Sensitive: true}, &w)
		trusted.PutSensitive(key("secret"), secret)
		trusted.Close()
		if !serverHolds(t, srv, []byte("s3cr3t-literal")) {
			t.Error("the check cannot see uploads: the secret sent with Sensitive is not in the server's files")
		}
		reader := runner(t, srv.URL, RemoteOptions{}, &w)
		if v, ok := reader.Get(key("secret")); !ok || !bytes.Equal(v, secret) {
			t.Errorf("sensitive entry with Sensitive: %q, %v", v, ok)
		}
		if files, _ := reader.uploadable(false); len(files) != 0 {
			t.Errorf("the fetched sensitive entry lost its flag: uploadable %v", files)
		}
		reader.Close()
		if m := w.list(); len(m) != 0 {
			t.Errorf("warnings: %v", m)
		}
	})
}

// Objects changed on the server (a record's inline value, a content
// object, a record pointing at other content) are refused with a warning
// naming them, and are misses.
func TestRemotePoisonedObjectsRefused(t *testing.T) {
	servers(t, func(t *testing.T, start func(t *testing.T) *remotetest.Server) {
		srv := start(t)
		var w warnings
		large := bytes.Repeat([]byte("L"), inlineMax+100)
		first := runner(t, srv.URL, RemoteOptions{Write: true}, &w)
		first.Put(key("small"), []byte("image: app:v1"))
		first.Put(key("large"), large)
		first.Put(key("other"), []byte("image: evil:v6"))
		first.Close()
		b, _ := backend.Open(srv.URL, remote.Options{})
		ctx := context.Background()
		hexKey := func(k Key) string { return hex.EncodeToString(k[:]) }

		// The inline value changed, the record left as it was.
		rec, err := b.Get(ctx, remote.AC, hexKey(key("small")))
		if err != nil {
			t.Fatal(err)
		}
		_ = b.Put(ctx, remote.AC, hexKey(key("small")), bytes.Replace(rec, []byte("app:v1"), []byte("app:v6"), 1))
		// The content object changed.
		d := sha256.Sum256(large)
		_ = b.Put(ctx, remote.CAS, hex.EncodeToString(d[:]), append(large[:len(large)-1:len(large)-1], 'X'))
		// A record copied to another key's name.
		rec, _ = b.Get(ctx, remote.AC, hexKey(key("other")))
		_ = b.Put(ctx, remote.AC, hexKey(key("moved")), rec)

		second := runner(t, srv.URL, RemoteOptions{}, &w)
		for _, k := range []string{"small", "large", "moved"} {
			if v, ok := second.Get(key(k)); ok {
				t.Errorf("%s: poisoned object served: %q", k, v[:min(len(v), 40)])
			}
		}
		second.Close()
		if st := second.RemoteStats(); st.Refused != 3 || st.Hits != 0 {
			t.Errorf("stats %+v, want 3 refused", st)
		}
		msgs := strings.Join(w.list(), "\n")
		for _, want := range []string{"refused ac/" + hexKey(key("small")), "refused cas/" + hex.EncodeToString(d[:]), "refused ac/" + hexKey(key("moved"))} {
			if !strings.Contains(msgs, want) {
				t.Errorf("no warning %q in:\n%s", want, msgs)
			}
		}
	})
}

// A server that stops answering is one warning; the store goes on as a
// local cache.
func TestRemoteDownIsOneWarning(t *testing.T) {
	servers(t, func(t *testing.T, start func(t *testing.T) *remotetest.Server) {
		srv := start(t)
		var w warnings
		s := runner(t, srv.URL, RemoteOptions{Write: true}, &w)
		s.Put(key("before"), []byte("1"))
		srv.Stop()
		for i := range 20 {
			k := key(string(rune('a' + i)))
			if _, ok := s.Get(k); ok {
				t.Fatal("hit on a stopped server")
			}
			s.Put(k, []byte("v"))
			if v, ok := s.Get(k); !ok || string(v) != "v" {
				t.Fatalf("the local cache stopped working: %q, %v", v, ok)
			}
		}
		s.Close()
		msgs := w.list()
		if len(msgs) != 1 || !strings.Contains(msgs[0], "going on without it") || strings.Contains(msgs[0], "\n") {
			t.Errorf("warnings %q, want one line", msgs)
		}
		if !s.RemoteStats().Failed {
			t.Error("stats do not say the remote failed")
		}
	})
}

// A server that refuses writes (403 Forbidden) is one warning for a
// writing runner.
func TestRemoteForbiddenIsOneWarning(t *testing.T) {
	srv := remotetest.StartNginx(t, remotetest.NginxOptions{ReadOnly: true})
	var w warnings
	s := runner(t, srv.URL, RemoteOptions{Write: true}, &w)
	for i := range 10 {
		s.Put(key(string(rune('a'+i))), []byte("v"))
	}
	s.Close()
	if msgs := w.list(); len(msgs) != 1 || !strings.Contains(msgs[0], "403") {
		t.Errorf("warnings %q, want one naming 403", msgs)
	}
}

// A server that accepts connections and never answers (hung) is one
// warning after the request timeout; the store goes on locally.
func TestRemoteHungServerIsOneWarning(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	b, err := backend.Open("http://"+l.Addr().String()+"/cache", remote.Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var w warnings
	s := Open(context.Background(), Options{Dir: t.TempDir(), Warn: w.add})
	s.SetRemote(context.Background(), RemoteOptions{Backend: b, Write: true})
	for i := range 10 {
		k := key(string(rune('a' + i)))
		if _, ok := s.Get(k); ok {
			t.Fatal("hit from a hung server")
		}
		s.Put(k, []byte("v"))
	}
	s.Close()
	if msgs := w.list(); len(msgs) != 1 || !strings.Contains(msgs[0], "going on without it") {
		t.Errorf("warnings %q, want one", msgs)
	}
	if v, ok := s.Get(key("a")); !ok || string(v) != "v" {
		t.Errorf("local cache: %q, %v", v, ok)
	}
}
