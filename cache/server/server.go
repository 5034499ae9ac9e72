// Package server is the cache server (command kpipe-cache-server, which
// `kpipe cache serve` hands over to): a shared cache server for a CI
// fleet, speaking the protocol kpipe's --remote-cache http://... speaks
// (Bazel's HTTP cache protocol: GET, HEAD and PUT on /ac/<hex> and
// /cas/<hex>, 404 a miss), with its objects in a Badger database
// (package cache/badger) that it owns for as long as it runs.
//
// What it stores is verified: a /cas/ upload must hash to its name, an
// /ac/ upload must be a kpipe action record for its key (cache.CheckRecord),
// and both are checked again when served, so that an object damaged on
// disk is a miss (and deleted), never wrong bytes. An upload is answered
// 2xx only once it is synced to disk. Access is by bearer tokens (read,
// or read and write), over TLS when given a certificate. The store is
// bounded (Options.MaxSize) by evicting the least recently used objects;
// its start reads nothing but Badger's own state, whatever it holds.
//
// It imports cache (CheckRecord, Key), cache/badger and cache/remote (the
// batch existence request's path and format); the command
// kpipe-cache-server (cmd/kpipe-cache-server) uses it. The kpipe command
// must not (it would link Badger: see cache/doc.go).
package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"
	"golang.org/x/sync/semaphore"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/cache/badger"
	"github.com/kpipe/kpipe/cache/remote"
)

// Options configure Open. Zero values take the defaults named.
type Options struct {
	// Dir is the server's directory: created 0700 when missing, marked
	// with CACHEDIR.TAG, the database under Dir/badger. A directory that
	// holds other files and no marker is refused.
	Dir string
	// MaxSize bounds the bytes the store holds (objects and a small
	// overhead each); the least recently used objects are evicted to stay
	// under it. Default 10 GiB.
	MaxSize int64
	// MaxObject is the largest object accepted (bigger: 413). Default
	// 64 MiB.
	MaxObject int64
	// ReadTokens may read; WriteTokens may read and write. With neither,
	// anyone who reaches the server may read and write.
	ReadTokens, WriteTokens []string
	// MaxUploadBytes bounds the bytes of uploads held in memory at once
	// (each upload counts its Content-Length; one that cannot get its
	// share within BodyTimeout is answered 503). Default 4 x MaxObject.
	MaxUploadBytes int64
	// MaxConns bounds the connections served at once (more wait in the
	// listen queue). Default 1024.
	MaxConns int
	// HeaderTimeout bounds reading a request's headers (default 10 s),
	// BodyTimeout reading its body and writing the answer (default 2 min),
	// IdleTimeout an idle kept-alive connection (default 2 min).
	HeaderTimeout, BodyTimeout, IdleTimeout time.Duration
	// DrainTimeout bounds the wait for requests in flight at shutdown
	// (default 30 s).
	DrainTimeout time.Duration
	// Log receives the server's messages, one line each; nil discards
	// them.
	Log func(msg string)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Server is an open cache server.
type Server struct {
	opts    Options
	db      *badger.DB
	read    [][sha256.Size]byte // SHA-256 of each read token
	write   [][sha256.Size]byte // of each write token
	uploads *semaphore.Weighted
	start   time.Time
	opened  time.Duration // what opening the store took
	m       metrics
}

// metrics are the counts /metrics serves.
type metrics struct {
	hits, misses      [2]atomic.Int64 // by kind: ac, cas
	bytesOut, bytesIn atomic.Int64
	uploads           [2]atomic.Int64
	damaged           atomic.Int64 // objects found damaged when served (deleted)
	inFlight          atomic.Int64
	refused           [nReasons]atomic.Int64
	unauthorized      atomic.Int64
	forbidden         atomic.Int64
	storeErrors       atomic.Int64
}

// Reasons an upload is refused, as /metrics labels them.
const (
	refusedName = iota
	refusedDigest
	refusedRecord
	refusedTooLarge
	refusedLength
	refusedBusy
	refusedDiskFull
	nReasons
)

var reasonNames = [nReasons]string{"bad_name", "digest_mismatch", "not_a_record", "too_large", "no_length", "busy", "disk_full"}

var kindNames = [2]string{"ac", "cas"}

const markerName = "CACHEDIR.TAG"

const marker = "Signature: 8a477f597d28d172789f06886806bc55\n" +
	"# This file is a cache directory tag created by kpipe cache serve.\n" +
	"# The server's store is in badger/; stop the server before deleting it.\n"

// Open opens the store in o.Dir. It fails, naming the directory and the
// problem, when the directory cannot be the server's (damaged, locked by
// another server, holding other files).
func Open(o Options) (*Server, error) {
	if o.Dir == "" {
		return nil, errors.New("no store directory given (--dir)")
	}
	if o.MaxSize == 0 {
		o.MaxSize = 10 << 30
	}
	if o.MaxObject == 0 {
		o.MaxObject = 64 << 20
	}
	if o.MaxObject > o.MaxSize/2 {
		return nil, fmt.Errorf("the largest object (%d bytes) must be at most half the store's size bound (%d bytes)", o.MaxObject, o.MaxSize)
	}
	if o.MaxUploadBytes == 0 {
		o.MaxUploadBytes = 4 * o.MaxObject
	}
	if o.MaxUploadBytes < o.MaxObject {
		o.MaxUploadBytes = o.MaxObject
	}
	if o.MaxConns == 0 {
		o.MaxConns = 1024
	}
	if o.HeaderTimeout == 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.BodyTimeout == 0 {
		o.BodyTimeout = 2 * time.Minute
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = func(string) {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	t0 := time.Now()
	if err := claim(o.Dir); err != nil {
		return nil, fmt.Errorf("store %s: %w", o.Dir, err)
	}
	db, err := badger.Open(badger.Options{
		Dir:     filepath.Join(o.Dir, "badger"),
		MaxSize: o.MaxSize,
		Sync:    true,
		Log:     o.Log,
		Now:     o.Now,
		// A server's store is big: a larger block cache serves hot
		// objects from memory.
		BlockCacheSize: 64 << 20,
	})
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, db: db, uploads: semaphore.NewWeighted(o.MaxUploadBytes), start: o.Now(), opened: time.Since(t0)}
	for _, t := range o.ReadTokens {
		s.read = append(s.read, sha256.Sum256([]byte(t)))
	}
	for _, t := range o.WriteTokens {
		s.write = append(s.write, sha256.Sum256([]byte(t)))
	}
	return s, nil
}

// claim makes dir the server's directory, or says why it cannot be.
func claim(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return unwrapPath(err)
	}
	if _, err := os.Stat(filepath.Join(dir, markerName)); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return unwrapPath(err)
	}
	var foreign []string
	for _, e := range entries {
		if e.Name() != "badger" {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		if len(foreign) > 3 {
			foreign = append(foreign[:3], "...")
		}
		return fmt.Errorf("it holds files kpipe did not create (%s); use an empty or new directory", strings.Join(foreign, ", "))
	}
	_ = os.Chmod(dir, 0o700)
	return unwrapPath(os.WriteFile(filepath.Join(dir, markerName), []byte(marker), 0o600))
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Store describes the store for the start-up line: what it holds and
// what opening it took.
func (s *Server) Store() string {
	return fmt.Sprintf("%d objects, %.1f MiB of %.1f MiB, opened in %.1f ms", s.db.Count(),
		float64(s.db.Size())/(1<<20), float64(s.opts.MaxSize)/(1<<20), float64(s.opened)/1e6)
}

// Authenticated says whether the server asks for tokens.
func (s *Server) Authenticated() bool { return len(s.read)+len(s.write) > 0 }

// Close closes the store (Serve does when it returns).
func (s *Server) Close() error { return s.db.Close() }

// Serve answers requests on l (over TLS when tlsConfig is not nil) until
// ctx is done, then stops accepting, waits up to DrainTimeout for the
// requests in flight (uploads are answered once they are on disk) and
// closes the store. It returns nil after such a shutdown.
func (s *Server) Serve(ctx context.Context, l net.Listener, tlsConfig *tls.Config) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.opts.HeaderTimeout,
		ReadTimeout:       s.opts.HeaderTimeout + s.opts.BodyTimeout,
		WriteTimeout:      s.opts.HeaderTimeout + 2*s.opts.BodyTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    16 << 10,
		TLSConfig:         tlsConfig,
		ErrorLog:          nil,
	}
	l = netutil.LimitListener(l, s.opts.MaxConns)
	errc := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			errc <- hs.ServeTLS(l, "", "")
		} else {
			errc <- hs.Serve(l)
		}
	}()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		dctx, cancel := context.WithTimeout(context.Background(), s.opts.DrainTimeout)
		if serr := hs.Shutdown(dctx); serr != nil {
			s.opts.Log(fmt.Sprintf("requests still in flight after %s were cut off", s.opts.DrainTimeout))
			_ = hs.Close()
		}
		cancel()
		<-errc
	}
	if cerr := s.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("closing the store: %w", cerr)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Handler is the server's HTTP handler: /ac/, /cas/, /healthz, /metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", s.healthz)
	mux.HandleFunc("/metrics", s.metrics)
	mux.HandleFunc("/ac/", func(w http.ResponseWriter, r *http.Request) { s.object(w, r, 0) })
	mux.HandleFunc("/cas/", func(w http.ResponseWriter, r *http.Request) { s.object(w, r, 1) })
	mux.HandleFunc(remote.MissingPath, s.missing)
	return mux
}

// missing answers the batch existence request (remote.MissingPath): a
// POST naming objects one a line, answered with remote.MissingHeader and
// the ones the store does not hold. A writer asks it before uploading
// what its local cache found, so that it sends only what is missing.
// Reading is enough to ask.
func (s *Server) missing(w http.ResponseWriter, r *http.Request) {
	s.m.inFlight.Add(1)
	defer s.m.inFlight.Add(-1)
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !s.allowed(w, r, false) {
		return
	}
	// "cas/" and 64 hex digits and a newline: at most 69 bytes a line.
	const maxLine = 4 + 2*sha256.Size + 1
	body, err := io.ReadAll(io.LimitReader(r.Body, remote.MaxMissing*maxLine+1))
	if err != nil {
		http.Error(w, "the body was cut short", http.StatusBadRequest)
		return
	}
	if len(body) > remote.MaxMissing*maxLine {
		http.Error(w, fmt.Sprintf("at most %d objects a request", remote.MaxMissing), http.StatusRequestEntityTooLarge)
		return
	}
	var out strings.Builder
	out.WriteString(remote.MissingHeader + "\n")
	for _, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
		if line == "" {
			continue
		}
		kindName, hexName, _ := strings.Cut(line, "/")
		kind := slices.Index(kindNames[:], kindName)
		if kind < 0 || !validName(hexName) {
			http.Error(w, "each line is ac/<name> or cas/<name>, a name 64 lowercase hex characters", http.StatusBadRequest)
			return
		}
		var name [sha256.Size]byte
		hex.Decode(name[:], []byte(hexName))
		_, ok, err := s.db.Stat(objectKey(kind, name))
		if err != nil {
			s.storeFailed(w, "reading", err)
			return
		}
		if !ok {
			out.WriteString(line + "\n")
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, out.String())
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "ok\n")
}

// object serves one /ac/ (kind 0) or /cas/ (kind 1) request.
func (s *Server) object(w http.ResponseWriter, r *http.Request, kind int) {
	s.m.inFlight.Add(1)
	defer s.m.inFlight.Add(-1)
	write := r.Method == http.MethodPut
	if !s.allowed(w, r, write) {
		return
	}
	hexName := r.URL.Path[len(kindNames[kind])+2:]
	var name [sha256.Size]byte
	if !validName(hexName) {
		if write {
			s.m.refused[refusedName].Add(1)
			drain(r)
		}
		http.Error(w, "an object name is 64 lowercase hex characters", http.StatusBadRequest)
		return
	}
	hex.Decode(name[:], []byte(hexName))
	key := objectKey(kind, name)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.get(w, r, kind, name, key)
	case http.MethodPut:
		s.put(w, r, kind, name, key)
	default:
		w.Header().Set("Allow", "GET, HEAD, PUT")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// objectKey is the object's name in the store: the suffix letter of the
// kind of file kpipe's cache keeps it in ("a" for an entry, "d" for
// content) and the name's bytes, as a Badger-backed cache.Store names it.
func objectKey(kind int, name [sha256.Size]byte) []byte {
	k := make([]byte, 1+sha256.Size)
	k[0] = "ad"[kind]
	copy(k[1:], name[:])
	return k
}

func validName(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// verify says what is wrong with an object's bytes ("" when nothing).
func verify(kind int, name [sha256.Size]byte, data []byte) string {
	if kind == 1 {
		if sha256.Sum256(data) != name {
			return "the body's SHA-256 is not its name"
		}
		return ""
	}
	if err := cache.CheckRecord(cache.Key(name), data); err != nil {
		return err.Error()
	}
	return ""
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, kind int, name [sha256.Size]byte, key []byte) {
	if r.Method == http.MethodHead {
		size, ok, err := s.db.Stat(key)
		if err != nil {
			s.storeFailed(w, "reading", err)
			return
		}
		if !ok {
			s.m.misses[kind].Add(1)
			http.NotFound(w, r)
			return
		}
		s.m.hits[kind].Add(1)
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.WriteHeader(http.StatusOK)
		return
	}
	data, ok, err := s.db.Get(key)
	if err != nil {
		// Damage a checksum found: a miss, and the object goes.
		s.m.damaged.Add(1)
		s.opts.Log(fmt.Sprintf("%s/%x: %v; deleted", kindNames[kind], name[:6], err))
		_ = s.db.Delete(key)
		ok = false
	}
	if ok {
		if why := verify(kind, name, data); why != "" {
			s.m.damaged.Add(1)
			s.opts.Log(fmt.Sprintf("%s/%x is damaged in the store (%s); deleted", kindNames[kind], name[:6], why))
			_ = s.db.Delete(key)
			ok = false
		}
	}
	if !ok {
		s.m.misses[kind].Add(1)
		http.NotFound(w, r)
		return
	}
	s.m.hits[kind].Add(1)
	s.m.bytesOut.Add(int64(len(data)))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

func (s *Server) put(w http.ResponseWriter, r *http.Request, kind int, name [sha256.Size]byte, key []byte) {
	n := r.ContentLength
	switch {
	case n < 0:
		s.m.refused[refusedLength].Add(1)
		http.Error(w, "an upload needs a Content-Length", http.StatusLengthRequired)
		return
	case n > s.opts.MaxObject:
		s.m.refused[refusedTooLarge].Add(1)
		http.Error(w, fmt.Sprintf("the object is %d bytes; this server takes at most %d (--max-object)", n, s.opts.MaxObject), http.StatusRequestEntityTooLarge)
		return
	}
	// Content already here needs no second copy (its name is its hash).
	if kind == 1 {
		if _, ok, err := s.db.Stat(key); err == nil && ok {
			drain(r)
			w.WriteHeader(http.StatusOK)
			return
		}
	}
	// A share of the memory for uploads, waited for at most BodyTimeout.
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.BodyTimeout)
	err := s.uploads.Acquire(ctx, max(n, 1))
	cancel()
	if err != nil {
		s.m.refused[refusedBusy].Add(1)
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many uploads at once; try again", http.StatusServiceUnavailable)
		return
	}
	defer s.uploads.Release(max(n, 1))
	data := make([]byte, 0, n)
	buf := bytes.NewBuffer(data)
	got, err := buf.ReadFrom(io.LimitReader(r.Body, n+1))
	if err != nil || got != n {
		// A client gone or too slow (the body timeout closed the
		// connection): nothing is stored.
		http.Error(w, "the body was cut short", http.StatusBadRequest)
		return
	}
	data = buf.Bytes()
	if why := verify(kind, name, data); why != "" {
		reason := refusedDigest
		if kind == 0 {
			reason = refusedRecord
		}
		s.m.refused[reason].Add(1)
		http.Error(w, why, http.StatusBadRequest)
		return
	}
	err = s.db.Put(key, data)
	switch {
	case errors.Is(err, badger.ErrDiskFull):
		s.m.refused[refusedDiskFull].Add(1)
		http.Error(w, "the server's disk is almost full", http.StatusInsufficientStorage)
		return
	case errors.Is(err, badger.ErrTooBig):
		s.m.refused[refusedTooLarge].Add(1)
		http.Error(w, "the object is too big for the store", http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		s.storeFailed(w, "writing", err)
		return
	}
	s.m.uploads[kind].Add(1)
	s.m.bytesIn.Add(n)
	w.WriteHeader(http.StatusOK)
}

func (s *Server) storeFailed(w http.ResponseWriter, what string, err error) {
	s.m.storeErrors.Add(1)
	s.opts.Log(fmt.Sprintf("%s the store: %v", what, err))
	http.Error(w, "the server's store failed", http.StatusInternalServerError)
}

// drain reads what is left of a short body so the connection can serve
// the next request.
func drain(r *http.Request) { _, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10)) }

// allowed checks the request's token: reads need a read or write token,
// writes a write token (when the server has tokens). It answers 401 or
// 403 itself.
func (s *Server) allowed(w http.ResponseWriter, r *http.Request, write bool) bool {
	if !s.Authenticated() {
		return true
	}
	tok, ok := token(r)
	if !ok {
		s.m.unauthorized.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer realm="kpipe cache"`)
		http.Error(w, "a token is needed (Authorization: Bearer ...)", http.StatusUnauthorized)
		return false
	}
	h := sha256.Sum256([]byte(tok))
	if matches(s.write, h) {
		return true
	}
	if matches(s.read, h) {
		if !write {
			return true
		}
		s.m.forbidden.Add(1)
		http.Error(w, "this token may only read", http.StatusForbidden)
		return false
	}
	s.m.unauthorized.Add(1)
	w.Header().Set("WWW-Authenticate", `Bearer realm="kpipe cache", error="invalid_token"`)
	http.Error(w, "unknown token", http.StatusUnauthorized)
	return false
}

// token is the request's bearer token, or the password (else the user
// name) of its basic credentials: clients that only know a URL's
// userinfo send those.
func token(r *http.Request) (string, bool) {
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		t := strings.TrimSpace(a[7:])
		return t, t != ""
	}
	if u, p, ok := r.BasicAuth(); ok {
		if p == "" {
			p = u
		}
		return p, p != ""
	}
	return "", false
}

func matches(set [][sha256.Size]byte, h [sha256.Size]byte) bool {
	found := 0
	for _, t := range set {
		found |= subtle.ConstantTimeCompare(t[:], h[:])
	}
	return found == 1
}

// metrics serves the counts in Prometheus' text format.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	var b strings.Builder
	family := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	family("kpipe_cache_hits_total", "counter", "Objects served.")
	for k, n := range kindNames {
		fmt.Fprintf(&b, "kpipe_cache_hits_total{kind=%q} %d\n", n, s.m.hits[k].Load())
	}
	family("kpipe_cache_misses_total", "counter", "Objects asked for and not held (or found damaged).")
	for k, n := range kindNames {
		fmt.Fprintf(&b, "kpipe_cache_misses_total{kind=%q} %d\n", n, s.m.misses[k].Load())
	}
	family("kpipe_cache_uploads_total", "counter", "Objects stored.")
	for k, n := range kindNames {
		fmt.Fprintf(&b, "kpipe_cache_uploads_total{kind=%q} %d\n", n, s.m.uploads[k].Load())
	}
	family("kpipe_cache_uploads_refused_total", "counter", "Uploads refused, by reason.")
	for i, n := range reasonNames {
		fmt.Fprintf(&b, "kpipe_cache_uploads_refused_total{reason=%q} %d\n", n, s.m.refused[i].Load())
	}
	family("kpipe_cache_requests_unauthorized_total", "counter", "Requests without a known token (401).")
	fmt.Fprintf(&b, "kpipe_cache_requests_unauthorized_total %d\n", s.m.unauthorized.Load())
	family("kpipe_cache_requests_forbidden_total", "counter", "Writes with a read-only token (403).")
	fmt.Fprintf(&b, "kpipe_cache_requests_forbidden_total %d\n", s.m.forbidden.Load())
	family("kpipe_cache_bytes_served_total", "counter", "Object bytes sent.")
	fmt.Fprintf(&b, "kpipe_cache_bytes_served_total %d\n", s.m.bytesOut.Load())
	family("kpipe_cache_bytes_received_total", "counter", "Object bytes stored.")
	fmt.Fprintf(&b, "kpipe_cache_bytes_received_total %d\n", s.m.bytesIn.Load())
	objects, bytes := s.db.Evictions()
	family("kpipe_cache_evictions_total", "counter", "Least recently used objects evicted to stay under --max-size.")
	fmt.Fprintf(&b, "kpipe_cache_evictions_total %d\n", objects)
	family("kpipe_cache_evicted_bytes_total", "counter", "Bytes evicted to stay under --max-size.")
	fmt.Fprintf(&b, "kpipe_cache_evicted_bytes_total %d\n", bytes)
	family("kpipe_cache_damaged_objects_total", "counter", "Objects found damaged when served (deleted, served as misses).")
	fmt.Fprintf(&b, "kpipe_cache_damaged_objects_total %d\n", s.m.damaged.Load())
	family("kpipe_cache_store_errors_total", "counter", "Reads and writes the store failed.")
	fmt.Fprintf(&b, "kpipe_cache_store_errors_total %d\n", s.m.storeErrors.Load())
	family("kpipe_cache_store_bytes", "gauge", "Bytes the store holds, as --max-size counts them.")
	fmt.Fprintf(&b, "kpipe_cache_store_bytes %d\n", s.db.Size())
	family("kpipe_cache_store_max_bytes", "gauge", "The store's bound (--max-size).")
	fmt.Fprintf(&b, "kpipe_cache_store_max_bytes %d\n", s.opts.MaxSize)
	family("kpipe_cache_store_objects", "gauge", "Objects the store holds.")
	fmt.Fprintf(&b, "kpipe_cache_store_objects %d\n", s.db.Count())
	family("kpipe_cache_store_disk_bytes", "gauge", "What the store's files take on disk.")
	fmt.Fprintf(&b, "kpipe_cache_store_disk_bytes %d\n", s.db.DiskSize())
	family("kpipe_cache_requests_in_flight", "gauge", "Object requests being served.")
	fmt.Fprintf(&b, "kpipe_cache_requests_in_flight %d\n", s.m.inFlight.Load())
	family("kpipe_cache_uptime_seconds", "gauge", "Seconds since the server started.")
	fmt.Fprintf(&b, "kpipe_cache_uptime_seconds %.0f\n", s.opts.Now().Sub(s.start).Seconds())
	io.WriteString(w, b.String())
}

// minTokenLength is the shortest token accepted: a token is a password
// that every runner holds.
const minTokenLength = 16

// ReadTokenFile reads the tokens in path: one a line, blank lines and
// lines starting with # left out. A file without a token, or with one
// shorter than 16 characters, is an error naming the file (never the
// token).
func ReadTokenFile(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, unwrapPath(err))
	}
	var out []string
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if len(l) < minTokenLength {
			return nil, fmt.Errorf("token file %s, line %d: a token must have at least %d characters", path, i+1, minTokenLength)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("token file %s holds no token", path)
	}
	return out, nil
}
