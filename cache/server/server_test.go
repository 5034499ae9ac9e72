package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/cache/badger"
	"github.com/kpipe/kpipe/cache/remote"
	"github.com/kpipe/kpipe/cache/remote/backend"
	"github.com/kpipe/kpipe/cache/server/servertest"
)

// TestMain doubles as the server process the crash tests start and kill:
// with KPIPE_TEST_SERVE_DIR set it serves that directory on 127.0.0.1
// (its address written to KPIPE_TEST_SERVE_ADDR) until SIGTERM.
func TestMain(m *testing.M) {
	if dir := os.Getenv("KPIPE_TEST_SERVE_DIR"); dir != "" {
		os.Exit(serveChild(dir, os.Getenv("KPIPE_TEST_SERVE_ADDR")))
	}
	os.Exit(m.Run())
}

func serveChild(dir, addrFile string) int {
	s, err := Open(Options{Dir: dir, MaxSize: 1 << 30, Log: func(m string) { fmt.Fprintln(os.Stderr, m) }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(addrFile+".tmp", []byte(l.Addr().String()), 0o600); err != nil {
		return 1
	}
	os.Rename(addrFile+".tmp", addrFile)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := s.Serve(ctx, l, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// child is a server running in a process of its own.
type child struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
	out  *bytes.Buffer
}

func startChild(t *testing.T, dir string) *child {
	t.Helper()
	addr := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KPIPE_TEST_SERVE_DIR="+dir, "KPIPE_TEST_SERVE_ADDR="+addr)
	c := &child{cmd: cmd, done: make(chan struct{}), out: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(c.done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-c.done })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(addr); err == nil {
			c.url = "http://" + string(b)
			return c
		}
		select {
		case <-c.done:
			t.Fatalf("the server exited: %s", c.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// start runs a server in this process on 127.0.0.1 (a free port) and
// stops it when the test ends; it returns the server and its URL.
func start(t *testing.T, o Options) (*Server, string) {
	s, url, _ := startStop(t, o)
	return s, url
}

// startStop is start that also returns a function stopping the server.
func startStop(t *testing.T, o Options) (*Server, string, func()) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = filepath.Join(t.TempDir(), "store")
	}
	if o.MaxSize == 0 {
		o.MaxSize = 256 << 20
	}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l, nil) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return s, "http://" + l.Addr().String(), stop
}

func do(t *testing.T, method, url string, body []byte, header ...string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func hexSum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// record returns a kpipe action record for key holding value inline, as
// kpipe's client uploads one.
func record(t *testing.T, key cache.Key, value []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	s := cache.Open(t.Context(), cache.Options{Dir: dir})
	s.Put(key, value)
	s.Close()
	b, err := os.ReadFile(filepath.Join(dir, "v2", hex.EncodeToString(key[:])[:1], hex.EncodeToString(key[:])+"-a"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProtocol(t *testing.T) {
	_, url := start(t, Options{MaxObject: 1 << 20})
	content := []byte("kind: ConfigMap\nmetadata:\n  name: x\n")
	name := hexSum(content)
	if code, _ := do(t, "GET", url+"/cas/"+name, nil); code != 404 {
		t.Fatalf("GET of a missing object: %d", code)
	}
	if code, _ := do(t, "HEAD", url+"/cas/"+name, nil); code != 404 {
		t.Fatalf("HEAD of a missing object: %d", code)
	}
	if code, b := do(t, "PUT", url+"/cas/"+name, content); code != 200 {
		t.Fatalf("PUT: %d %s", code, b)
	}
	if code, b := do(t, "GET", url+"/cas/"+name, nil); code != 200 || !bytes.Equal(b, content) {
		t.Fatalf("GET: %d %q", code, b)
	}
	req, _ := http.NewRequest("HEAD", url+"/cas/"+name, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 || resp.ContentLength != int64(len(content)) {
		t.Fatalf("HEAD: %v %v", resp, err)
	}
	// A corrupt upload is refused and nothing is stored.
	bad := hexSum([]byte("other"))
	if code, _ := do(t, "PUT", url+"/cas/"+bad, content); code != 400 {
		t.Errorf("PUT of a body that does not hash to its name: %d", code)
	}
	if code, _ := do(t, "GET", url+"/cas/"+bad, nil); code != 404 {
		t.Errorf("a refused upload was stored: %d", code)
	}
	for _, n := range []string{strings.ToUpper(name), name[:63], name + "0", name[:30] + "/" + name[31:], "zz" + name[2:]} {
		if code, _ := do(t, "GET", url+"/cas/"+n, nil); code != 400 {
			t.Errorf("GET /cas/%s: %d, want 400", n, code)
		}
	}
	if code, _ := do(t, "PUT", url+"/cas/"+hexSum(make([]byte, 2<<20)), make([]byte, 2<<20)); code != 413 {
		t.Errorf("PUT over --max-object: %d", code)
	}
	if code, _ := do(t, "DELETE", url+"/cas/"+name, nil); code != 405 {
		t.Errorf("DELETE: %d", code)
	}
	// Action records: a kpipe record for its key, or 400.
	k := cache.NewKey("test", "node").String("x").Sum()
	rec := record(t, k, content)
	kh := hex.EncodeToString(k[:])
	if code, b := do(t, "PUT", url+"/ac/"+kh, rec); code != 200 {
		t.Fatalf("PUT /ac/: %d %s", code, b)
	}
	if code, b := do(t, "GET", url+"/ac/"+kh, nil); code != 200 || !bytes.Equal(b, rec) {
		t.Fatalf("GET /ac/: %d", code)
	}
	other := cache.NewKey("test", "node").String("y").Sum()
	for what, body := range map[string][]byte{
		"another key's record": rec,
		"not a record":         []byte("hello"),
		"a damaged value":      append(bytes.Clone(rec[:len(rec)-1]), 'X'),
	} {
		name := hex.EncodeToString(other[:])
		if what == "a damaged value" {
			name = kh
		}
		if code, _ := do(t, "PUT", url+"/ac/"+name, body); code != 400 {
			t.Errorf("PUT /ac/ of %s: %d", what, code)
		}
	}
	if code, b := do(t, "GET", url+"/ac/"+kh, nil); code != 200 || !bytes.Equal(b, rec) {
		t.Errorf("a refused upload replaced a record: %d", code)
	}
	if code, b := do(t, "GET", url+"/healthz", nil); code != 200 || string(b) != "ok\n" {
		t.Errorf("/healthz: %d %q", code, b)
	}
	m := scrape(t, url)
	for name, want := range map[string]float64{
		`kpipe_cache_hits_total{kind="cas"}`:                          2,
		`kpipe_cache_misses_total{kind="cas"}`:                        3,
		`kpipe_cache_uploads_total{kind="ac"}`:                        1,
		`kpipe_cache_uploads_refused_total{reason="digest_mismatch"}`: 1,
		`kpipe_cache_uploads_refused_total{reason="not_a_record"}`:    3,
		`kpipe_cache_uploads_refused_total{reason="too_large"}`:       1,
		`kpipe_cache_store_objects`:                                   2,
		// (Objects kept in Badger's tables count a quarter more than
		// their bytes: see package badger.)
		`kpipe_cache_store_bytes`: float64(len(content) + len(content)/4 + len(rec) + len(rec)/4 + 2*160),
	} {
		if m[name] != want {
			t.Errorf("%s = %v, want %v", name, m[name], want)
		}
	}
}

// scrape reads /metrics, checking every line is a comment or a sample.
func scrape(t *testing.T, url string, header ...string) map[string]float64 {
	t.Helper()
	code, b := do(t, "GET", url+"/metrics", nil, header...)
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "# HELP ") || strings.HasPrefix(l, "# TYPE ") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("/metrics line %q is not a sample", l)
		}
		m[l[:i]] = v
	}
	return m
}

func TestTokens(t *testing.T) {
	const readTok, writeTok = "read-token-0123456789", "write-token-0123456789"
	_, url := start(t, Options{ReadTokens: []string{readTok}, WriteTokens: []string{writeTok}})
	content := []byte("data")
	name := hexSum(content)
	for _, tc := range []struct {
		what   string
		method string
		header []string
		want   int
	}{
		{"no token reads", "GET", nil, 401},
		{"no token writes", "PUT", nil, 401},
		{"an unknown token", "GET", []string{"Authorization", "Bearer not-a-token-at-all"}, 401},
		{"a read token writes", "PUT", []string{"Authorization", "Bearer " + readTok}, 403},
		{"a write token writes", "PUT", []string{"Authorization", "Bearer " + writeTok}, 200},
		{"a read token reads", "GET", []string{"Authorization", "Bearer " + readTok}, 200},
		{"a write token reads", "GET", []string{"Authorization", "Bearer " + writeTok}, 200},
	} {
		var body []byte
		if tc.method == "PUT" {
			body = content
		}
		if code, _ := do(t, tc.method, url+"/cas/"+name, body, tc.header...); code != tc.want {
			t.Errorf("%s: %d, want %d", tc.what, code, tc.want)
		}
	}
	// kpipe's client: the token from its options (KPIPE_REMOTE_CACHE_TOKEN)
	// or the URL's userinfo; errors never show it.
	ctx := context.Background()
	for _, tc := range []struct {
		url, token string
		read, put  bool
	}{
		{url, readTok, true, false},
		{url, writeTok, true, true},
		{strings.Replace(url, "://", "://"+writeTok+"@", 1), "", true, true},
		{strings.Replace(url, "://", "://ci:"+readTok+"@", 1), "", true, false},
		{url, "", false, false},
	} {
		b, err := backend.Open(tc.url, remote.Options{Token: tc.token})
		if err != nil {
			t.Fatal(err)
		}
		_, gerr := b.Get(ctx, remote.CAS, name)
		perr := b.Put(ctx, remote.CAS, hexSum([]byte("x")), []byte("x"))
		if (gerr == nil) != tc.read || (perr == nil) != tc.put {
			t.Errorf("client with %s, token %v: get %v, put %v", b, tc.token != "", gerr, perr)
		}
		for _, err := range []error{gerr, perr} {
			if err != nil && (strings.Contains(err.Error(), readTok) || strings.Contains(err.Error(), writeTok)) {
				t.Errorf("an error shows the token: %v", err)
			}
		}
		if strings.Contains(b.String(), "token") {
			t.Errorf("the client's name shows the token: %s", b)
		}
	}
	m := scrape(t, url)
	if m["kpipe_cache_requests_unauthorized_total"] < 3 || m["kpipe_cache_requests_forbidden_total"] < 2 {
		t.Errorf("auth counts: %v %v", m["kpipe_cache_requests_unauthorized_total"], m["kpipe_cache_requests_forbidden_total"])
	}
}

func TestReadTokenFile(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, fmt.Sprint(len(s)))
		os.WriteFile(p, []byte(s), 0o600)
		return p
	}
	toks, err := ReadTokenFile(write("# ci runners\nfirst-token-0123456789\n\n  second-token-0123456789  \n"))
	if err != nil || len(toks) != 2 || toks[1] != "second-token-0123456789" {
		t.Fatalf("ReadTokenFile = %q, %v", toks, err)
	}
	for _, bad := range []string{"", "# nothing\n", "short\n"} {
		if _, err := ReadTokenFile(write(bad)); err == nil || strings.Contains(err.Error(), "short\n") {
			t.Errorf("token file %q: %v", bad, err)
		}
	}
}

// An object damaged in the server's store is a miss (and goes), never
// wrong bytes.
func TestDamagedObjectIsAMiss(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	content := bytes.Repeat([]byte("resource\n"), 100)
	name := hexSum(content)
	k := cache.NewKey("test", "node").String("x").Sum()
	rec := record(t, k, content)
	_, url, stop := startStop(t, Options{Dir: dir})
	do(t, "PUT", url+"/cas/"+name, content)
	do(t, "PUT", url+"/ac/"+hex.EncodeToString(k[:]), rec)
	stop()
	// Change the stored bytes through the store itself.
	poison(t, dir, func(db *badger.DB) {
		var n [32]byte
		hex.Decode(n[:], []byte(name))
		db.Put(objectKey(1, n), append(bytes.Clone(content[:len(content)-1]), '!'))
		db.Put(objectKey(0, k), append(bytes.Clone(rec[:len(rec)-1]), '!'))
	})
	_, url = start(t, Options{Dir: dir})
	if code, _ := do(t, "GET", url+"/cas/"+name, nil); code != 404 {
		t.Errorf("a poisoned /cas/ object: %d", code)
	}
	if code, _ := do(t, "GET", url+"/ac/"+hex.EncodeToString(k[:]), nil); code != 404 {
		t.Errorf("a poisoned /ac/ record: %d", code)
	}
	m := scrape(t, url)
	if m["kpipe_cache_damaged_objects_total"] != 2 || m["kpipe_cache_store_objects"] != 0 {
		t.Errorf("damaged %v, objects left %v", m["kpipe_cache_damaged_objects_total"], m["kpipe_cache_store_objects"])
	}
}

// poison opens the store of a stopped server directly and changes it.
func poison(t *testing.T, dir string, f func(db *badger.DB)) {
	t.Helper()
	db, err := badger.Open(badger.Options{Dir: filepath.Join(dir, "badger")})
	if err != nil {
		t.Fatal(err)
	}
	f(db)
	db.Close()
}

// The store stays under --max-size when filled with twice as much.
func TestMaxSizeHolds(t *testing.T) {
	const max = 4 << 20
	_, url := start(t, Options{MaxSize: max, MaxObject: 256 << 10})
	for i := range 2 * max / (32 << 10) {
		b := bytes.Repeat([]byte(fmt.Sprintf("%08d", i)), 32<<10/8)
		if code, _ := do(t, "PUT", url+"/cas/"+hexSum(b), b); code != 200 {
			t.Fatalf("PUT %d: %d", i, code)
		}
		if m := scrape(t, url); m["kpipe_cache_store_bytes"] > max {
			t.Fatalf("after %d uploads the store holds %v bytes, over %d", i+1, m["kpipe_cache_store_bytes"], max)
		}
	}
	m := scrape(t, url)
	if m["kpipe_cache_evictions_total"] == 0 {
		t.Error("no eviction")
	}
}

// Slow and abandoned clients cost nothing once the timeouts pass: no
// goroutine, no memory left behind, and others are served meanwhile.
func TestSlowClientsAreCutOff(t *testing.T) {
	s, url := start(t, Options{HeaderTimeout: 300 * time.Millisecond, BodyTimeout: 500 * time.Millisecond,
		IdleTimeout: 500 * time.Millisecond, MaxObject: 8 << 20, MaxUploadBytes: 16 << 20})
	addr := strings.TrimPrefix(url, "http://")
	base := settle(0)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 150 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		switch i % 3 {
		case 0: // headers never finished
			fmt.Fprintf(c, "GET /cas/%s HTTP/1.1\r\nHost: x\r\n", strings.Repeat("0", 64))
		case 1: // a body announced and never sent
			fmt.Fprintf(c, "PUT /cas/%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\nabc", strings.Repeat("1", 64), 8<<20)
		case 2: // connected, silent
		}
	}
	// Others are still served while those hang (the upload budget is
	// two of those bodies: the rest wait for it, and get 503).
	if code, _ := do(t, "GET", url+"/healthz", nil); code != 200 {
		t.Fatalf("/healthz while slow clients hang: %d", code)
	}
	time.Sleep(2 * time.Second)
	if n := settle(base + 5); n > base+5 {
		t.Errorf("%d goroutines after the timeouts, %d before the slow clients", n, base)
	}
	if m := scrape(t, url); m["kpipe_cache_requests_in_flight"] != 0 || m["kpipe_cache_store_objects"] != 0 {
		t.Errorf("in flight %v, objects %v", m["kpipe_cache_requests_in_flight"], m["kpipe_cache_store_objects"])
	}
	_ = s
}

// settle waits (up to 5 s) for the goroutine count to fall to at most
// want, and returns it.
func settle(want int) int {
	n := 0
	for range 50 {
		n = runtime.NumGoroutine()
		if n <= want {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return n
}

// Uploads from 64 clients, the server killed with SIGKILL in the middle:
// after a restart every upload that was answered 200 is served and
// verifies; nothing half-written is ever served.
func TestKillDuringUploadStorm(t *testing.T) {
	skipSignals(t)
	dir := filepath.Join(t.TempDir(), "store")
	c := startChild(t, dir)
	var mu sync.Mutex
	acked := map[string][]byte{}
	sent := map[string][]byte{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range 64 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// Sizes from a few bytes to 200 KiB: inline and value-log
				// values both.
				b := bytes.Repeat([]byte(fmt.Sprintf("w%d-%d ", w, i)), 1+(w*977+i*131)%20000)
				name := hexSum(b)
				mu.Lock()
				sent[name] = b
				mu.Unlock()
				req, _ := http.NewRequest("PUT", c.url+"/cas/"+name, bytes.NewReader(b))
				resp, err := client.Do(req)
				if err != nil {
					return // the server is gone
				}
				resp.Body.Close()
				if resp.StatusCode == 200 {
					mu.Lock()
					acked[name] = b
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(3 * time.Second)
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	close(stop)
	wg.Wait()
	if len(acked) < 64 {
		t.Fatalf("only %d uploads acknowledged before the kill", len(acked))
	}
	_, url := start(t, Options{Dir: dir})
	missing, wrong := 0, 0
	for name, b := range acked {
		code, got := do(t, "GET", url+"/cas/"+name, nil)
		if code != 200 {
			missing++
		} else if !bytes.Equal(got, b) {
			wrong++
		}
	}
	// What was sent and not acknowledged is there whole, or not at all.
	partial := 0
	for name, b := range sent {
		if _, ok := acked[name]; ok {
			continue
		}
		if code, got := do(t, "GET", url+"/cas/"+name, nil); code == 200 && !bytes.Equal(got, b) {
			partial++
		}
	}
	if missing+wrong+partial != 0 {
		t.Errorf("after kill -9 and a restart, of %d acknowledged uploads %d are missing and %d wrong; %d unacknowledged ones served wrong", len(acked), missing, wrong, partial)
	}
	t.Logf("%d uploads acknowledged before the kill, %d sent", len(acked), len(sent))
	if m := scrape(t, url); m["kpipe_cache_damaged_objects_total"] != 0 {
		t.Errorf("%v damaged objects found after the restart", m["kpipe_cache_damaged_objects_total"])
	}
}

// SIGTERM lets an upload in flight finish (answered 200, stored) and
// closes the store cleanly: the process exits 0.
func TestTermDrainsUploads(t *testing.T) {
	skipSignals(t)
	dir := filepath.Join(t.TempDir(), "store")
	c := startChild(t, dir)
	body := bytes.Repeat([]byte("x"), 1<<20)
	code, name := servertest.UploadAcrossSignal(c.url, body, func() { c.cmd.Process.Signal(syscall.SIGTERM) })
	if code != 200 {
		t.Fatalf("the upload in flight at SIGTERM: %d", code)
	}
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not exit after SIGTERM")
	}
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d after SIGTERM: %s", code, c.out)
	}
	_, url := start(t, Options{Dir: dir})
	if code, got := do(t, "GET", url+"/cas/"+name, nil); code != 200 || !bytes.Equal(got, body) {
		t.Errorf("the drained upload: %d, %d bytes", code, len(got))
	}
}

func TestDirectoryChecks(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600)
	if _, err := Open(Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("a directory with other files: %v", err)
	}
	store := filepath.Join(t.TempDir(), "store")
	s, err := Open(Options{Dir: store})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Open(Options{Dir: store}); err == nil || !strings.Contains(err.Error(), store) {
		t.Errorf("a store another server holds: %v", err)
	}
	if fi, err := os.Stat(store); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("store mode %v %v", fi.Mode(), err)
	}
}

func skipSignals(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sends SIGKILL and SIGTERM")
	}
}

// Over TLS, with a certificate made here: the client that trusts it is
// served; a plain HTTP request to the TLS port is not.
func TestTLS(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	s, err := Open(Options{Dir: filepath.Join(t.TempDir(), "store"), MaxSize: 256 << 20, WriteTokens: []string{serveToken}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l, &tls.Config{Certificates: []tls.Certificate{cert}}) }()
	defer func() { cancel(); <-done }()
	pool := x509.NewCertPool()
	parsed, _ := x509.ParseCertificate(der)
	pool.AddCert(parsed)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	body := []byte("over tls")
	req, _ := http.NewRequest("PUT", "https://"+l.Addr().String()+"/cas/"+hexSum(body), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+serveToken)
	resp, err := client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("PUT over TLS: %v %v", resp, err)
	}
	resp.Body.Close()
	if resp, err := http.Get("http://" + l.Addr().String() + "/healthz"); err == nil && resp.StatusCode == 200 {
		t.Error("plain HTTP was served on the TLS port")
	}
}

const serveToken = "a-write-token-0123456789"
