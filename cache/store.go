package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure Open.
type Options struct {
	// Dir is the cache directory; see DefaultDir.
	Dir string
	// MaxSize bounds the directory's size on disk, as du counts it, in
	// bytes; Close trims the least recently used files when the cache grew
	// past it. Zero means defaultMaxSize (2 GiB).
	MaxSize int64
	// Warn receives warnings, one call at a time; nil discards them. A
	// process gets at most one about the directory (it cannot be used, or
	// cannot be written to) and, with a remote cache, one about the remote
	// failing and a few about objects it refused.
	Warn func(msg string)
	// Now is the clock (nil: time.Now); tests move it.
	Now func() time.Time
	// Pack gathers the files a run writes and writes them a few hundred
	// at a time as one pack file, linked under each file's name
	// (pack.go): creating files is most of what filling a cache costs.
	// What was written is visible to other processes after Flush or
	// Close (and whenever a pack fills up); without Pack, when Put
	// returns. (Files only.)
	Pack bool
	// KV, when set, keeps the entries in the key-value store it opens
	// rather than a file per entry: for one process that holds the store
	// for a long life (an embedder rendering all day, the cache server).
	// Package cache/badger's OpenKV is one: a Badger database under
	// <Dir>/badger, bounded by MaxSize with the least recently used
	// entries evicted as it writes. Such a store is one process's at a
	// time: another that opens the directory meanwhile warns and goes on
	// without a cache. See doc.go for which store serves whom. (Pack does
	// not apply.)
	KV func(KVOptions) (KV, error)
}

// defaultMaxSize is the size bound when Options.MaxSize is zero: 2 GiB.
const defaultMaxSize = 2 << 30

// DefaultDir is $XDG_CACHE_HOME/kpipe, or ~/.cache/kpipe.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "kpipe"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the cache directory: %w (set --cache-dir or XDG_CACHE_HOME)", err)
	}
	return filepath.Join(home, ".cache", "kpipe"), nil
}

// Store is an open cache. A nil *Store is a valid, empty cache that stores
// nothing: every method works on it. A Store is safe for concurrent use,
// and any number of processes may use one directory at once.
type Store struct {
	objects        // the backend: *disk or *kvObjects
	files   *disk  // the directory's backend (no Options.KV), else nil
	dir     string // Options.Dir
	opts    Options
	remote  *remoteLayer // nil without a remote cache (SetRemote)
	// created: Open made the directory a cache (it held no marker).
	created bool

	hits, misses, puts atomic.Int64
}

// Open opens the cache in opts.Dir, creating it (mode 0700) when missing.
// It reads nothing but the directory's marker, so it costs the same
// whatever the cache holds. It returns nil, after one warning naming the
// directory and the cause, when the directory cannot be a cache (it cannot
// be created, or holds files kpipe did not create); it never fails.
func Open(ctx context.Context, opts Options) *Store {
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	} else {
		// Warnings come from concurrent lookups and writes: one at a time.
		var mu sync.Mutex
		warn := opts.Warn
		opts.Warn = func(msg string) { mu.Lock(); defer mu.Unlock(); warn(msg) }
	}
	if opts.MaxSize == 0 {
		opts.MaxSize = defaultMaxSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	created, err := claim(opts.Dir)
	if err != nil {
		opts.Warn(fmt.Sprintf("cache: not using %s: %v; building without a cache", opts.Dir, err))
		return nil
	}
	// A directory this process made a cache is fresh unless it held
	// entries of a cache whose marker was lost.
	fresh := false
	if created {
		_, err := os.Lstat(filepath.Join(opts.Dir, layoutDir))
		fresh = errors.Is(err, fs.ErrNotExist)
	}
	s := &Store{dir: opts.Dir, opts: opts, created: created}
	if opts.KV != nil {
		kv, err := openKV(opts)
		if err != nil {
			opts.Warn(fmt.Sprintf("cache: not using %s: %v; building without a cache", opts.Dir, err))
			return nil
		}
		s.objects = kv
		return s
	}
	d := &disk{warn: opts.Warn, fresh: fresh, now: opts.Now}
	d.setDir(opts.Dir)
	if opts.Pack && packsSupported {
		d.pack = &packer{background: make(chan struct{}, 1)}
	}
	s.objects, s.files = d, d
	return s
}

// Dir returns the cache directory ("" for a nil store).
func (s *Store) Dir() string {
	if s == nil {
		return ""
	}
	return s.dir
}

// An entry file ("-a") is one line of fixed size: the format, the key, the
// content's digest and size, the time it was written and its flags; a
// value of at most inlineMax bytes follows the line in the same file, a
// larger one is in its content file ("-d").
//
//	v2 <key hex> <digest hex> <size, 20 digits> <unix nanoseconds, 20 digits> <flags>\n
const entrySize = 3 + 2*(2*sha256.Size+1) + 2*21 + 1 + 1

// inlineMax is the largest value kept in its entry file, after the line,
// instead of in a content file of its own: most values (manifests, small
// nodes and outputs) are a few kilobytes, and a file costs a block on
// disk and, on some file systems, far more to create than to fill.
const inlineMax = 16 << 10

// Entry flags.
const (
	flagPlain     = '-'
	flagSensitive = 's' // a Secret's data, or a plugin's output: never uploaded by default
)

// entry is a parsed entry line.
type entry struct {
	digest    [sha256.Size]byte
	size      int64
	time      int64
	sensitive bool
}

func formatEntry(key Key, digest [sha256.Size]byte, size, t int64, sensitive bool) []byte {
	return appendEntry(make([]byte, 0, entrySize), key, digest, size, t, sensitive)
}

// appendEntry appends formatEntry's line to dst: "v2 <key> <digest>
// <size> <time> <flag>\n", the numbers right-aligned in 20 columns (as
// fmt's %20d writes them).
func appendEntry(dst []byte, key Key, digest [sha256.Size]byte, size, t int64, sensitive bool) []byte {
	flag := byte(flagPlain)
	if sensitive {
		flag = flagSensitive
	}
	dst = append(dst, "v2 "...)
	dst = hex.AppendEncode(dst, key[:])
	dst = append(dst, ' ')
	dst = hex.AppendEncode(dst, digest[:])
	for _, n := range []int64{size, t} {
		var num [24]byte
		d := strconv.AppendInt(num[:0], n, 10)
		dst = append(dst, ' ')
		for i := len(d); i < 20; i++ {
			dst = append(dst, ' ')
		}
		dst = append(dst, d...)
	}
	return append(dst, ' ', flag, '\n')
}

// parseEntry reads an entry line; false on any defect (a miss).
func parseEntry(key Key, data []byte) (entry, bool) {
	var e entry
	if len(data) != entrySize || data[entrySize-1] != '\n' || !bytes.HasPrefix(data, []byte("v2 ")) {
		return e, false
	}
	f := bytes.Fields(data)
	if len(f) != 6 || len(f[1]) != 2*sha256.Size || len(f[2]) != 2*sha256.Size || len(f[5]) != 1 {
		return e, false
	}
	var k Key
	if _, err := hex.Decode(k[:], f[1]); err != nil || k != key {
		return e, false // not the entry asked for
	}
	if _, err := hex.Decode(e.digest[:], f[2]); err != nil {
		return e, false
	}
	var err error
	if e.size, err = strconv.ParseInt(string(f[3]), 10, 64); err != nil || e.size < 0 {
		return e, false
	}
	if e.time, err = strconv.ParseInt(string(f[4]), 10, 64); err != nil {
		return e, false
	}
	switch f[5][0] {
	case flagPlain:
	case flagSensitive:
		e.sensitive = true
	default:
		return e, false
	}
	return e, true
}

// Get returns the value stored under key, verified against its digest. A
// missing, partial, unreadable or corrupt entry is a miss, silently: the
// caller computes the value again.
func (s *Store) Get(key Key) ([]byte, bool) {
	v, _, ok := s.GetDigest(key)
	return v, ok
}

// GetDigest is Get that also returns the value's SHA-256 (Digest), which
// the entry records and Get verifies anyway.
func (s *Store) GetDigest(key Key) ([]byte, Key, bool) {
	v, d, ok := s.lookup(key, false)
	if !ok {
		return nil, Key{}, false
	}
	return v.data, d, true
}

// lookup is GetDigest and Open: the directory's entry (with stream, a big
// one left in its file), else the remote's, counted as a hit or a miss.
func (s *Store) lookup(key Key, stream bool) (*Value, Key, bool) {
	if s == nil {
		return nil, Key{}, false
	}
	v, d, ok := s.getValue(key, stream)
	switch {
	case ok && s.remote != nil:
		s.remote.ensure(key)
	case s.remote != nil:
		var data []byte
		if data, ok = s.fetchRemote(key); ok {
			v, d = &Value{data: data}, Digest(data)
		}
	}
	if ok {
		s.hits.Add(1)
	} else {
		s.misses.Add(1)
	}
	return v, d, ok
}

// GetLocal is Get from the directory only, without asking a remote cache
// or counting a hit or miss (for records PutLocal wrote).
func (s *Store) GetLocal(key Key) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	v, _, ok := s.get(key)
	return v, ok
}

func (s *Store) get(key Key) ([]byte, Key, bool) {
	v, d, ok := s.getValue(key, false)
	if !ok {
		return nil, Key{}, false
	}
	return v.data, d, true
}

// getValue reads key's entry and checks its content against the digest
// the entry records. With stream, content bigger than streamChunk is left
// in its file, checked by reading it through in pieces (see Value).
func (s *Store) getValue(key Key, stream bool) (*Value, Key, bool) {
	kh := hex.EncodeToString(key[:])
	ap := s.name(kh, sufAction)
	line, err := s.read(ap)
	if err != nil || len(line) < entrySize {
		return nil, Key{}, false
	}
	e, ok := parseEntry(key, line[:entrySize])
	if !ok {
		return nil, Key{}, false
	}
	if e.size <= inlineMax {
		// A value kept inline, after the line (nothing, for an empty one).
		value := line[entrySize:]
		if int64(len(value)) != e.size || sha256.Sum256(value) != e.digest {
			return nil, Key{}, false
		}
		s.markUsed(ap)
		return &Value{data: value}, e.digest, true
	}
	dh := hex.EncodeToString(e.digest[:])
	dp := s.name(dh, sufData)
	var v *Value
	if stream && e.size > streamChunk {
		v, err = s.openChecked(dp, e)
	} else {
		var value []byte
		value, err = s.read(dp)
		if err == nil && (int64(len(value)) != e.size || sha256.Sum256(value) != e.digest) {
			err = errDamaged
		}
		v = &Value{data: value}
	}
	if err != nil {
		return nil, Key{}, false
	}
	s.markUsed(ap)
	s.markUsed(dp)
	return v, e.digest, true
}

// fetchRemote reads key's entry from the remote cache, verified, and
// writes it to the directory.
func (s *Store) fetchRemote(key Key) ([]byte, bool) {
	v, sensitive, ok := s.remote.fetch(key)
	if ok {
		s.remote.ensured.Store(key, struct{}{}) // the remote has it
		s.put(key, v, sensitive, false)
	}
	return v, ok
}

// localEntry reads key's entry from the directory as write-through
// sends it (remoteLayer.checkAll): its line and its value, checked
// against the line's digest.
func (s *Store) localEntry(key Key) (localEntry, bool) {
	line, err := s.read(s.name(hex.EncodeToString(key[:]), sufAction))
	if err != nil || len(line) < entrySize {
		return localEntry{}, false
	}
	e, ok := parseEntry(key, line[:entrySize])
	if !ok {
		return localEntry{}, false
	}
	value := line[entrySize:]
	if e.size > inlineMax {
		if value, err = s.read(s.name(hex.EncodeToString(e.digest[:]), sufData)); err != nil {
			return localEntry{}, false
		}
	}
	if int64(len(value)) != e.size || sha256.Sum256(value) != e.digest {
		return localEntry{}, false
	}
	return localEntry{line: line[:entrySize:entrySize], value: value, digest: e.digest, sensitive: e.sensitive}, true
}

// Has reports whether an entry exists for key, with content of the right
// size, without reading the content (Get reads and verifies it). With a
// remote cache, an entry only the remote holds is fetched (and verified)
// into the directory first.
func (s *Store) Has(key Key) bool {
	if s == nil {
		return false
	}
	if s.has(key) {
		if s.remote != nil {
			s.remote.ensure(key)
		}
		return true
	}
	if s.remote != nil {
		_, ok := s.fetchRemote(key)
		return ok
	}
	return false
}

// has is Has without the remote.
func (s *Store) has(key Key) bool {
	line, err := s.read(s.name(hex.EncodeToString(key[:]), sufAction))
	if err != nil || len(line) < entrySize {
		return false
	}
	e, ok := parseEntry(key, line[:entrySize])
	if !ok {
		return false
	}
	if e.size <= inlineMax {
		return int64(len(line)) == entrySize+e.size
	}
	n, ok := s.size(s.name(hex.EncodeToString(e.digest[:]), sufData))
	return ok && n == e.size
}

// Put stores value under key. Errors are reported as one warning: a cache
// write never fails a build. With Options.Pack the entry may wait in
// memory for its pack (this store reads it from there); Flush or Close
// writes it. The store keeps value, not a copy, until then (and the
// remote cache until its upload): the caller must not change it.
func (s *Store) Put(key Key, value []byte) { s.put(key, value, false, true) }

// PutSensitive stores value under key like Put, marked sensitive: it holds
// a Secret's data or a plugin's output. Sensitive entries are never sent
// to a remote cache unless the user allows it, and no message prints them.
func (s *Store) PutSensitive(key Key, value []byte) { s.put(key, value, true, true) }

// PutLocal stores value under key in the directory only: never sent to a
// remote cache (records that describe this machine's builds, such as
// --explain's).
func (s *Store) PutLocal(key Key, value []byte) { s.put(key, value, false, false) }

// put writes an entry to the directory and, when send is set, hands it to
// the remote cache (which uploads it if its options allow).
// PutDigest is Put, or PutSensitive when sensitive is true, for a value
// whose SHA-256 the caller has computed (digest == Digest(value)), which
// the store then does not compute again.
func (s *Store) PutDigest(key Key, value []byte, digest Key, sensitive bool) {
	s.putDigest(key, value, digest, sensitive, true)
}

func (s *Store) put(key Key, value []byte, sensitive, send bool) {
	if s == nil {
		return
	}
	s.putDigest(key, value, sha256.Sum256(value), sensitive, send)
}

func (s *Store) putDigest(key Key, value []byte, digest Key, sensitive, send bool) {
	if s == nil {
		return
	}
	line := formatEntry(key, digest, int64(len(value)), s.opts.Now().UnixNano(), sensitive)
	if send && s.remote != nil {
		s.remote.send(key, line[:len(line):len(line)], value, digest, sensitive)
	}
	if s.failed() {
		return
	}
	ap := s.name(hex.EncodeToString(key[:]), sufAction)
	if len(value) <= inlineMax {
		// The value follows the line in the entry file. (Not copied behind
		// it: the pack writes the two one after the other.)
		s.writeContent(ap, content{line, value})
		if !s.failed() {
			s.puts.Add(1)
		}
		return
	}
	dp := s.name(hex.EncodeToString(digest[:]), sufData)
	// Data before entry: an entry never names content not yet written.
	// Equal content shares one file; an existing one with the right content
	// is kept and marked used.
	if old, err := s.read(dp); err == nil && len(old) == len(value) && sha256.Sum256(old) == digest {
		s.markUsed(dp)
	} else {
		s.write(dp, value)
	}
	s.write(ap, line)
	if !s.failed() {
		s.puts.Add(1)
	}
}

// Flush writes what waits to be written (with Options.Pack) and waits
// for the uploads to the remote cache queued so far.
func (s *Store) Flush() {
	if s == nil {
		return
	}
	s.flushPack()
	if s.remote != nil {
		s.remote.flush()
	}
}

// counts returns the hits, misses and writes of this process so far.
func (s *Store) counts() (hits, misses, puts int64) {
	if s == nil {
		return 0, 0, 0
	}
	return s.hits.Load(), s.misses.Load(), s.puts.Load()
}

// Close writes what waits in a pack (Options.Pack; without it every write
// is whole when Put returns), waits for the remote cache's uploads, and
// trims the cache when this process's writes may have taken it past its
// size bound.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	s.flushPack()
	if s.remote != nil {
		s.remote.close()
	}
	if s.files != nil {
		s.trimIfNeeded()
	}
	return s.objects.close()
}

// String is the key's short form, for messages.
func (k Key) String() string { return fmt.Sprintf("%x", k[:8]) }

// bytes returns the key's bytes.
func (k Key) bytes() []byte { return k[:] }

// IsZero reports whether k is the zero key.
func (k Key) IsZero() bool { return k == Key{} }

// CheckRecord says whether record is a whole kpipe action record for key,
// as a remote cache holds it under ac/<key>: an entry line naming key and,
// when the value follows the line, a value that matches the line's size
// and SHA-256. A cache server refuses an upload that is not (the client
// checks what it reads again, whatever the server says).
func CheckRecord(key Key, record []byte) error {
	if len(record) < entrySize {
		return fmt.Errorf("not a kpipe action record (%d bytes, a record is at least %d)", len(record), entrySize)
	}
	e, ok := parseEntry(key, record[:entrySize])
	if !ok {
		return errors.New("not a kpipe action record for this key")
	}
	if len(record) > entrySize || e.size == 0 {
		value := record[entrySize:]
		if int64(len(value)) != e.size || sha256.Sum256(value) != e.digest {
			return errors.New("its value does not match the record's size and SHA-256")
		}
	} else if e.size <= inlineMax {
		return errors.New("its value is missing (a value this small follows the line)")
	}
	return nil
}
