// Package cache is kpipe's on-disk, content-addressed store of build
// results, on BadgerDB.
//
// The store maps a Key (the digest of everything that can change a result:
// see KeyBuilder) to the digest of the value's content, and that digest to
// the content. A value is verified against its digest on every read; a
// mismatch counts as a miss, is reported as a warning, and the bad entry is
// deleted, so a corrupt entry can never change a build's output.
//
// The store never fails a build: a directory locked by another process is
// waited for a short while and then left alone (the build runs without a
// cache, with a warning); a directory Badger cannot open is rebuilt from
// scratch, with a warning.
package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Key prefixes in the Badger keyspace.
const (
	prefixRef  = "r/" // r/<key> -> header + content digest
	prefixBlob = "b/" // b/<content digest> -> content
	prefixMeta = "m/" // m/<name> -> metadata (last run, file index)
)

// formatVersion changes when the layout of entries changes; older
// directories are cleared when opened.
const formatVersion = "kpipe-cache-1"

// Options configure Open.
type Options struct {
	// Dir is the cache directory; see DefaultDir.
	Dir string
	// MaxSize caps the on-disk size in bytes; Close prunes the oldest
	// entries when the store grew past it. Zero means DefaultMaxSize.
	MaxSize int64
	// LockWait is how long Open waits for a directory locked by another
	// kpipe process before giving up on the cache. Zero means 10 seconds.
	LockWait time.Duration
	// Warn receives warnings; nil discards them.
	Warn func(msg string)
}

// DefaultMaxSize is the size cap when Options.MaxSize is zero: 2 GiB.
const DefaultMaxSize = 2 << 30

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
// nothing: every method works on it.
type Store struct {
	db   *badger.DB
	opts Options

	hits, misses, puts atomic.Int64

	mu      sync.Mutex
	pending *badger.WriteBatch
}

// Open opens (creating if needed) the cache in opts.Dir. It returns a nil
// store, after a warning, when the cache cannot be used; it never fails.
func Open(ctx context.Context, opts Options) *Store {
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	if opts.MaxSize == 0 {
		opts.MaxSize = DefaultMaxSize
	}
	if opts.LockWait == 0 {
		opts.LockWait = 10 * time.Second
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		opts.Warn(fmt.Sprintf("cache: cannot create %s: %v; building without a cache", opts.Dir, err))
		return nil
	}
	deadline := time.Now().Add(opts.LockWait)
	for {
		db, err := openDB(opts.Dir)
		if err == nil {
			s := &Store{db: db, opts: opts}
			if s.checkFormat() {
				return s
			}
			opts.Warn(fmt.Sprintf("cache: %s was written by another version of kpipe's cache format; clearing it", opts.Dir))
			if err := db.DropAll(); err == nil {
				s.setFormat()
				return s
			}
			db.Close()
			err = errors.New("clearing old format failed")
		}
		switch {
		case isLocked(err):
			if time.Now().After(deadline) || ctx.Err() != nil {
				opts.Warn(fmt.Sprintf("cache: %s is in use by another process; building without a cache", opts.Dir))
				return nil
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		default:
			opts.Warn(fmt.Sprintf("cache: %s is unreadable (%v); rebuilding it", opts.Dir, firstLine(err)))
			if rerr := resetDir(opts.Dir); rerr != nil {
				opts.Warn(fmt.Sprintf("cache: cannot rebuild %s: %v; building without a cache", opts.Dir, rerr))
				return nil
			}
			db, err := openDB(opts.Dir)
			if err != nil {
				opts.Warn(fmt.Sprintf("cache: cannot open %s: %v; building without a cache", opts.Dir, firstLine(err)))
				return nil
			}
			s := &Store{db: db, opts: opts}
			s.setFormat()
			return s
		}
	}
}

// openDB opens Badger with settings sized for a build cache: small
// memtables and caches (a build's working set is small), no logging.
func openDB(dir string) (*badger.DB, error) {
	o := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithMemTableSize(8 << 20).
		WithNumMemtables(2).
		WithBlockCacheSize(4 << 20).
		WithIndexCacheSize(4 << 20).
		WithValueLogFileSize(64 << 20).
		WithValueThreshold(1 << 10).
		WithNumCompactors(2).
		WithNumVersionsToKeep(1).
		WithDetectConflicts(false)
	return badger.Open(o)
}

// isLocked reports whether err is Badger's "directory in use" error.
func isLocked(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "Cannot acquire directory lock") ||
		strings.Contains(err.Error(), "resource temporarily unavailable"))
}

// resetDir empties a cache directory.
func resetDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func (s *Store) checkFormat() bool {
	v, ok := s.GetMeta("format")
	if !ok {
		// A new directory, or one never written: claim it.
		empty := true
		_ = s.db.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false})
			defer it.Close()
			it.Rewind()
			empty = !it.Valid()
			return nil
		})
		if empty {
			s.setFormat()
		}
		return empty
	}
	return string(v) == formatVersion
}

func (s *Store) setFormat() { s.PutMeta("format", []byte(formatVersion)) }

// Dir returns the cache directory ("" for a nil store).
func (s *Store) Dir() string {
	if s == nil {
		return ""
	}
	return s.opts.Dir
}

// Get returns the value stored under key, verified against its content
// digest. A missing, unreadable or corrupt entry is a miss.
func (s *Store) Get(key Key) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	var value []byte
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(refKey(key))
		if err != nil {
			return err
		}
		ref, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		if len(ref) != refSize {
			return errCorrupt
		}
		digest := ref[8:]
		item, err = txn.Get(blobKey(digest))
		if err != nil {
			if errors.Is(err, badger.ErrKeyNotFound) {
				return errCorrupt
			}
			return err
		}
		value, err = item.ValueCopy(nil)
		if err != nil {
			return err
		}
		if sum := sha256.Sum256(value); !bytes.Equal(sum[:], digest) {
			return errCorrupt
		}
		return nil
	})
	switch {
	case err == nil:
		s.hits.Add(1)
		return value, true
	case errors.Is(err, errCorrupt):
		s.opts.Warn(fmt.Sprintf("cache: entry %s failed verification; ignoring and removing it", key))
		_ = s.db.Update(func(txn *badger.Txn) error { return txn.Delete(refKey(key)) })
	case !errors.Is(err, badger.ErrKeyNotFound):
		s.opts.Warn(fmt.Sprintf("cache: reading %s: %v", key, err))
	}
	s.misses.Add(1)
	return nil, false
}

var errCorrupt = errors.New("cache entry does not match its digest")

// refSize is the size of a ref: 8 bytes of creation time, 32 of digest.
const refSize = 8 + sha256.Size

// Put stores value under key. Writes are batched; Flush or Close commits
// them. Errors are reported as warnings: a cache write never fails a build.
func (s *Store) Put(key Key, value []byte) {
	if s == nil {
		return
	}
	digest := sha256.Sum256(value)
	ref := make([]byte, refSize)
	binary.BigEndian.PutUint64(ref, uint64(time.Now().Unix()))
	copy(ref[8:], digest[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = s.db.NewWriteBatch()
	}
	// Values may be shared by many keys; rewriting one is harmless.
	if err := s.pending.Set(blobKey(digest[:]), value); err != nil {
		s.opts.Warn(fmt.Sprintf("cache: writing %s: %v", key, err))
		return
	}
	if err := s.pending.Set(refKey(key), ref); err != nil {
		s.opts.Warn(fmt.Sprintf("cache: writing %s: %v", key, err))
		return
	}
	s.puts.Add(1)
}

// Flush commits the pending writes.
func (s *Store) Flush() {
	if s == nil {
		return
	}
	s.mu.Lock()
	wb := s.pending
	s.pending = nil
	s.mu.Unlock()
	if wb != nil {
		if err := wb.Flush(); err != nil {
			s.opts.Warn(fmt.Sprintf("cache: committing writes: %v", err))
		}
	}
}

// GetMeta reads a metadata value such as the file index or the last run's
// statistics. Metadata is advisory and not verified: callers validate it.
func (s *Store) GetMeta(name string) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	var v []byte
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(prefixMeta + name))
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		return err
	})
	return v, err == nil
}

// PutMeta writes a metadata value at once.
func (s *Store) PutMeta(name string, v []byte) {
	if s == nil {
		return
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(prefixMeta+name), v) }); err != nil {
		s.opts.Warn(fmt.Sprintf("cache: writing %s: %v", name, err))
	}
}

// Counts returns the hits, misses and writes of this process so far.
func (s *Store) Counts() (hits, misses, puts int64) {
	if s == nil {
		return 0, 0, 0
	}
	return s.hits.Load(), s.misses.Load(), s.puts.Load()
}

// Close commits pending writes, prunes the store when it outgrew its size
// cap, and closes it.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	s.Flush()
	if size := s.Size(); size > s.opts.MaxSize {
		if _, err := s.Prune(s.opts.MaxSize * 3 / 4); err != nil {
			s.opts.Warn(fmt.Sprintf("cache: pruning: %v", err))
		}
	}
	return s.db.Close()
}

// Size returns the bytes the store's files take on disk.
func (s *Store) Size() int64 {
	if s == nil {
		return 0
	}
	lsm, vlog := s.db.Size()
	return lsm + vlog
}

func refKey(k Key) []byte     { return append([]byte(prefixRef), k[:]...) }
func blobKey(d []byte) []byte { return append([]byte(prefixBlob), d...) }
func (k Key) String() string  { return fmt.Sprintf("%x", k[:8]) }
func (k Key) Bytes() []byte   { return k[:] }
func (k Key) IsZero() bool    { return k == Key{} }

// Has reports whether an entry exists for key, without reading or
// verifying its value (Get does both).
func (s *Store) Has(key Key) bool {
	if s == nil {
		return false
	}
	err := s.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(refKey(key))
		return err
	})
	return err == nil
}
