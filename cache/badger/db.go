// Package badger is kpipe's BadgerDB store for a process that owns its
// cache for a long life: the cache server (package cache/server, command
// kpipe-cache-server) and an embedder that opened its cache with
// kpipe.BadgerStore. It keeps named objects (bytes the caller verifies)
// in one Badger v4 database, with a byte bound enforced by evicting the
// least recently used objects, and a start that reads nothing but
// Badger's own state and one counter record, whatever the store holds.
// OpenKV opens it as a cache.KV, the seam through which a cache.Store
// keeps its entries in it (cache.Options.KV).
//
// It imports, of kpipe, only package cache (for the KV seam it serves);
// package cache/server and the public package kpipe use it. Package cache
// and the kpipe command (cmd/kpipe) must not: linking Badger costs every
// process its package initialisation (see cache/doc.go), and the CLI's
// short processes keep the file store.
//
// # Keys
//
// Badger's keys are a one-byte prefix and the caller's object name:
//
//	o<name>                 the object's bytes (up to blobThreshold)
//	b<name>                 or where they are: a blob file (see Blobs)
//	m<name>                 its access time (unix nanoseconds) and size, 16 bytes
//	t<access time><name>    the LRU index: every object once, oldest first
//	g<file>                 a blob file to delete (its object is gone)
//	!totals                 the bytes and objects the store holds, 16 bytes
//	!blobs                  the disk the blob files take, 8 bytes
//	!format                 "kpipe-badgerdb 1"
//
// Access times are kept in the database itself (an LRU over keys by
// access time, not Badger's TTL, which expires by age whatever the use):
// a read refreshes an object's time when it is older than
// Options.TouchInterval, so an object read all day is never evicted, and
// the eviction walks the t index from its oldest key. Nothing is loaded at
// start: the totals are one record, written in the same transaction as the
// changes they count, so they survive a crash exactly as the objects do.
//
// # Blobs
//
// An object bigger than blobThreshold is a file of its own under
// <Dir>/blobs/ (as bazel-remote keeps its blobs), and Badger holds only
// where it is. Badger's value log, where such values lived, frees a file
// only once its compactions have counted half of it as garbage, so under
// churn the disk held twice the bound; a blob's space comes back when
// its file is deleted, right after the commit that forgot it. A blob is
// written to blobs/tmp/ (and synced, with Options.Sync) before its commit,
// renamed into place after it, and the upload answered after that: an
// acknowledged object survives a crash. A crash before the commit leaves
// a file in blobs/tmp/, removed at the next Open; one between the commit
// and the rename, a file that Open renames into place (its name says
// whose it is). An object whose file is missing all the same (the disk
// lost it) is a read error, a miss for the caller. A deleted blob's file name
// is recorded (g<file>) in the transaction that forgets it, and removed
// after the commit is synced; Open removes what a crash left recorded.
// Open thus reads what was in flight, never the whole directory.
//
// # Writes
//
// Every change goes through one writer goroutine, which gathers the
// changes waiting at that moment into one transaction (a group commit),
// syncs the database when Options.Sync is set, and only then answers
// them: a Put that returned nil survives a kill -9 of the process a moment
// later (and, with Sync, the loss of power). Badger's transactions are
// atomic on replay, so a crash leaves every object whole or absent.
//
// # Defence
//
// Badger panics in its own goroutines on some damage (a corrupt table read
// by a compaction), where recover cannot help. Open checks what can be
// checked cheaply first (the directory holds nothing but Badger's files;
// MANIFEST replays; every table it names exists and is not empty) and
// refuses a damaged directory with a message naming the file; blocks and
// values are checksummed on every read, so damage found later is an error
// (a miss), not wrong bytes. Writes stop, with ErrDiskFull, while the disk
// has less than Options.MinFree free: Badger maps its logs into memory, and
// a write through a mapping to a full disk is a SIGBUS.
package badger

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"google.golang.org/protobuf/proto"

	"github.com/kpipe/kpipe/cache"
)

// Options configure Open.
type Options struct {
	// Dir is the database directory (created 0700 when missing). It must
	// be empty, or hold a database this package made.
	Dir string
	// MaxSize bounds the bytes the store holds (Size): a write that takes
	// it past the bound evicts the least recently used objects down to
	// 15/16 of it. Zero means no bound. What an object counts is what it
	// takes on disk: an object kept as a file (Blobs), its file's blocks
	// (as bazel-remote counts its files); one kept in Badger's tables,
	// its bytes and a quarter (heldInTables); each, objOverhead more.
	MaxSize int64
	// Sync makes every commit reach the disk before the writes it holds
	// are answered (a server's uploads); without it a write survives the
	// process being killed, not the machine losing power.
	Sync bool
	// TouchInterval is how stale an object's access time may get before a
	// read refreshes it (zero: one minute).
	TouchInterval time.Duration
	// MemTableSize is Badger's memtable size, the write-ahead log a crash
	// replays (zero: a 64th of MaxSize, from 2 to 16 MiB; 16 MiB without
	// a bound); BlockCacheSize its block cache (zero: 32 MiB).
	MemTableSize, BlockCacheSize int64
	// MinFree is the free disk space below which writes are refused with
	// ErrDiskFull (zero: 4 memtables and 2 value log files).
	MinFree int64
	// Log receives Badger's errors, one line each; nil discards them.
	Log func(msg string)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// ErrDiskFull is the error of a write refused because the disk is almost
// full.
var ErrDiskFull = errors.New("the disk is almost full")

// ErrClosed is the error of a call after Close.
var ErrClosed = cache.ErrKVClosed

// ErrTooBig is the error of a Put of an object bigger than the store's
// bound.
var ErrTooBig = cache.ErrKVTooBig

const (
	formatKey   = "!format"
	formatValue = "kpipe-badgerdb 1"
	totalsKey   = "!totals"
	// objOverhead is what an object costs beyond its bytes, in Size:
	// its name three times (o, m and t keys), the meta record and
	// Badger's per-key overhead, roughly.
	objOverhead = 160
	// valueThreshold: values up to this size live in the LSM tables, whose
	// space comes back with compaction; bigger ones in the value log,
	// reclaimed by the value log GC, which frees a file once compactions
	// have found half of it garbage. (Badger's largest, 1 MiB, tried on
	// a fill of twice the bound with values up to 1 MiB: uploads 5 times
	// slower, 900 MiB of heap in compactions.)
	valueThreshold = 64 << 10
	vlogFileSize   = 64 << 20
	// blobThreshold: bigger objects are files of their own (Blobs). Kept
	// in Badger's tables, objects of 1 to 64 KiB filled three times over
	// left the store at 1.33x its bound a minute later (and compactions
	// took 870 MiB of heap); as files they take what their blocks take.
	blobThreshold = 4 << 10
	blobsKey      = "!blobs"
	blobsDir      = "blobs"
)

// DB is an open store. It is safe for concurrent use.
type DB struct {
	bdb  *badger.DB
	opts Options

	ops     chan *op
	touches chan []byte
	quit    chan struct{}
	wg      sync.WaitGroup

	mu     sync.RWMutex // guards closed against sends on ops
	closed bool

	bytes, count atomic.Int64 // committed totals
	blobDisk     atomic.Int64 // what the blob files take on disk (committed)
	blobs        string       // <Dir>/blobs
	graves       []string     // the writer's: blob files to delete once their commit is synced
	buried       [][]byte     // the writer's: g keys of files deleted, to forget in the next commit
	evictions    atomic.Int64
	evictedBytes atomic.Int64
	cursor       []byte // the writer's: the t key the eviction reached
	free         freeCheck
	lastGC       time.Time
	wroteSinceGC bool
}

type opKind int

const (
	opPut opKind = iota
	opDelete
	opBarrier // nothing to write: answered once what was queued before it is
)

type op struct {
	kind  opKind
	name  []byte
	value []byte      // nil for a blob
	blob  *blob       // an object kept as a file (Blobs)
	done  chan error  // Put and Delete wait on it
	then  func(error) // or PutAsync's callback
}

// blob is an object kept as a file: written to tmp, renamed to file
// (relative to the blobs directory) once its pointer is committed.
type blob struct {
	tmp, file   string
	size, alloc int64 // the object's bytes; what the file takes on disk
}

// Open opens (creating it when missing) the store in o.Dir. A directory
// that is damaged, locked by another process or holds other files is
// refused with an error naming it and the problem.
func Open(o Options) (db *DB, err error) {
	if o.TouchInterval == 0 {
		o.TouchInterval = time.Minute
	}
	if o.MemTableSize == 0 {
		// A memtable's log, and the level 0 tables flushed from them,
		// take the disk beside the objects: a 64th of the bound, at most
		// 16 MiB (at least 2).
		o.MemTableSize = 16 << 20
		if o.MaxSize > 0 {
			o.MemTableSize = min(max(o.MaxSize/64, 2<<20), 16<<20)
		}
	}
	if o.BlockCacheSize == 0 {
		o.BlockCacheSize = 32 << 20
	}
	if o.MinFree == 0 {
		o.MinFree = 4*o.MemTableSize + 2*vlogFileSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = func(string) {}
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("store %s: %w", o.Dir, unwrapPath(err))
	}
	bo := badger.DefaultOptions(o.Dir).
		WithLogger(logger{o.Log}).
		WithMetricsEnabled(false). // its metrics are process-wide expvars
		WithMemTableSize(o.MemTableSize).
		WithNumMemtables(3).
		WithNumLevelZeroTables(2). // (5 by default: level 0 is where deleted objects wait longest)
		WithBlockCacheSize(o.BlockCacheSize).
		WithIndexCacheSize(16 << 20).
		WithValueThreshold(min(valueThreshold, o.MemTableSize*15/100/2)). // at most half a batch

		WithValueLogFileSize(vlogFileSize).
		WithNumCompactors(2).
		WithNumGoroutines(2).
		WithDetectConflicts(false). // one writer
		WithChecksumVerificationMode(options.OnBlockRead).
		WithVerifyValueChecksum(true).
		WithCompression(options.None). // values are mostly compressed YAML already small; CPU matters more
		WithSyncWrites(false)          // the writer syncs a whole batch (Sync)
	if err := check(o.Dir, bo); err != nil {
		return nil, fmt.Errorf("store %s: %w", o.Dir, err)
	}
	bdb, err := openBadger(bo)
	if err != nil {
		return nil, fmt.Errorf("store %s: %s", o.Dir, oneLine(err))
	}
	db = &DB{bdb: bdb, opts: o, ops: make(chan *op, 1024), touches: make(chan []byte, 4096), quit: make(chan struct{}), lastGC: o.Now(),
		blobs: filepath.Join(o.Dir, blobsDir)}
	if err := db.load(); err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("store %s: %w", o.Dir, err)
	}
	if err := db.openBlobs(); err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("store %s: blobs: %w", o.Dir, unwrapPath(err))
	}
	db.wg.Add(1)
	go db.writer()
	return db, nil
}

// openBadger is badger.Open with a panic in this goroutine made an error.
func openBadger(bo badger.Options) (db *badger.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("badger panicked opening it: %v", r)
		}
	}()
	return badger.Open(bo)
}

// load checks the format record and reads the totals.
func (db *DB) load() error {
	return db.view(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(formatKey))
		if errors.Is(err, badger.ErrKeyNotFound) {
			if db.anyKey(txn) {
				return errors.New("a Badger database kpipe did not make (no format record); use an empty directory")
			}
			return db.bdb.Update(func(w *badger.Txn) error { return w.Set([]byte(formatKey), []byte(formatValue)) })
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		if string(v) != formatValue {
			return fmt.Errorf("format %q, this kpipe reads %q", v, formatValue)
		}
		item, err = txn.Get([]byte(totalsKey))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		if err != nil || len(v) != 16 {
			return fmt.Errorf("damaged totals record (%d bytes)", len(v))
		}
		db.bytes.Store(int64(binary.BigEndian.Uint64(v)))
		db.count.Store(int64(binary.BigEndian.Uint64(v[8:])))
		item, err = txn.Get([]byte(blobsKey))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if v, err = item.ValueCopy(nil); err != nil || len(v) != 8 {
			return fmt.Errorf("damaged blob totals record (%d bytes)", len(v))
		}
		db.blobDisk.Store(int64(binary.BigEndian.Uint64(v)))
		return nil
	})
}

// maxTmpName bounds the object names a blob's temporary file names
// (newBlob): the cache's are 33 bytes.
const maxTmpName = 64

// openBlobs prepares the blobs directory after what a crash may have
// left: a file in blobs/tmp whose object was committed (the crash came
// between the commit and the rename; its name says which object) is
// renamed into place, any other (an upload not committed) removed; the
// files of forgotten objects still recorded (g keys) are removed. All of
// it is what was in flight, not what the store holds.
func (db *DB) openBlobs() error {
	tmp := filepath.Join(db.blobs, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := db.recoverBlob(filepath.Join(tmp, e.Name())); err != nil {
			return err
		}
	}
	var graves [][]byte
	err = db.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{'g'}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			graves = append(graves, it.Item().KeyCopy(nil))
		}
		return nil
	})
	if err != nil || len(graves) == 0 {
		return err
	}
	for _, g := range graves {
		if err := removeBlob(db.blobs, string(g[1:])); err != nil {
			return err
		}
	}
	return db.bdb.Update(func(txn *badger.Txn) error {
		for _, g := range graves {
			if err := txn.Delete(g); err != nil {
				return err
			}
		}
		return nil
	})
}

// recoverBlob renames the temporary blob file tmp into place when its
// object's record names it, and removes it otherwise.
func (db *DB) recoverBlob(tmp string) error {
	base, nameHex, _ := strings.Cut(filepath.Base(tmp), ".")
	name, herr := hex.DecodeString(nameHex)
	var b *blob
	if herr == nil && nameHex != "" && len(base) > 2 {
		if err := db.view(func(txn *badger.Txn) error { b, _ = blobOf(txn, name); return nil }); err != nil {
			return err
		}
	}
	if b == nil || b.file != base[:2]+"/"+base {
		return os.Remove(tmp)
	}
	dir := filepath.Join(db.blobs, base[:2])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, base)); err != nil {
		return err
	}
	return syncDir(dir)
}

// removeBlob deletes a blob file; one already gone is no error.
func removeBlob(dir, file string) error {
	if !validBlobFile(file) {
		return fmt.Errorf("a blob file name %q that this store does not make", file)
	}
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(file))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// validBlobFile checks a blob's file name as the store makes them
// (newBlob): "xx/<64 hex>-<16 hex>", so that no record can name a file
// elsewhere.
func validBlobFile(f string) bool {
	dir, base, ok := strings.Cut(f, "/")
	if !ok || len(dir) != 2 || len(base) != 64+1+16 || base[:2] != dir || base[64] != '-' {
		return false
	}
	return strings.Trim(base[:64]+base[65:], "0123456789abcdef") == ""
}

// newBlob writes value, an object too big for Badger, to a new file in
// blobs/tmp (synced with Options.Sync); the writer renames it into place
// once the object's pointer is committed.
func (db *DB) newBlob(name, value []byte) (*blob, error) {
	h := sha256.Sum256(name)
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil, err
	}
	base := hex.EncodeToString(h[:]) + "-" + hex.EncodeToString(r[:])
	tmp := base
	if len(name) <= maxTmpName {
		tmp += "." + hex.EncodeToString(name) // for openBlobs, after a crash
	}
	b := &blob{tmp: filepath.Join(db.blobs, "tmp", tmp), file: base[:2] + "/" + base, size: int64(len(value))}
	f, err := os.OpenFile(b.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(value)
	if err == nil && db.opts.Sync {
		err = f.Sync()
	}
	var fi os.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(b.tmp)
		return nil, err
	}
	b.alloc = max(allocated(fi), b.size)
	return b, nil
}

// encodeBlob is the pointer record of a blob: its size, its disk and its
// file name.
func encodeBlob(b *blob) []byte {
	v := make([]byte, 16, 16+len(b.file))
	binary.BigEndian.PutUint64(v, uint64(b.size))
	binary.BigEndian.PutUint64(v[8:], uint64(b.alloc))
	return append(v, b.file...)
}

// errDamagedBlob is decodeBlob's error.
var errDamagedBlob = errors.New("damaged blob record")

func decodeBlob(v []byte) (*blob, error) {
	if len(v) < 16 || !validBlobFile(string(v[16:])) {
		return nil, fmt.Errorf("%w (%d bytes)", errDamagedBlob, len(v))
	}
	return &blob{size: int64(binary.BigEndian.Uint64(v)), alloc: int64(binary.BigEndian.Uint64(v[8:])), file: string(v[16:])}, nil
}

func (db *DB) anyKey(txn *badger.Txn) bool {
	it := txn.NewIterator(badger.IteratorOptions{})
	defer it.Close()
	it.Rewind()
	return it.Valid()
}

// view runs f in a read transaction; a panic in it (Badger's, reading
// damaged data in this goroutine) is an error.
func (db *DB) view(f func(txn *badger.Txn) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("badger panicked: %v", r)
		}
	}()
	return db.bdb.View(f)
}

// Get returns the object's bytes; found is false for an object the store
// does not hold. An error is a read that failed (damage found by a
// checksum, a closed store): a miss too, for the caller.
func (db *DB) Get(name []byte) (value []byte, found bool, err error) {
	var atime int64
	var b *blob
	err = db.view(func(txn *badger.Txn) error {
		item, err := txn.Get(prefixed('o', name))
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
			if b, err = blobOf(txn, name); b == nil || err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			if value, err = item.ValueCopy(nil); err != nil {
				return err
			}
		}
		found = true
		if m, err := txn.Get(prefixed('m', name)); err == nil {
			_ = m.Value(func(v []byte) error {
				if len(v) >= 16 {
					atime = int64(binary.BigEndian.Uint64(v))
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if b != nil {
		value, err = os.ReadFile(filepath.Join(db.blobs, filepath.FromSlash(b.file)))
		switch {
		case errors.Is(err, os.ErrNotExist):
			// Deleted since (evicted, replaced): a miss. Still named by
			// the object: lost in a crash before it was in place.
			var now *blob
			_ = db.view(func(txn *badger.Txn) error { now, _ = blobOf(txn, name); return nil })
			if now != nil && now.file == b.file {
				return nil, false, fmt.Errorf("its blob file %s is missing", b.file)
			}
			return nil, false, nil
		case err != nil:
			return nil, false, err
		case int64(len(value)) != b.size:
			return nil, false, fmt.Errorf("its blob file %s holds %d bytes, its record says %d", b.file, len(value), b.size)
		}
	}
	if found {
		db.touch(name, atime)
	}
	return value, found, nil
}

// blobOf reads name's blob record; nil when the object is not a blob.
func blobOf(txn *badger.Txn, name []byte) (*blob, error) {
	item, err := txn.Get(prefixed('b', name))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := item.ValueCopy(nil)
	if err != nil {
		return nil, err
	}
	return decodeBlob(v)
}

// Stat returns the size of the object, without reading it, and refreshes
// its access time as Get does.
func (db *DB) Stat(name []byte) (size int64, found bool, err error) {
	var atime int64
	err = db.view(func(txn *badger.Txn) error {
		m, err := txn.Get(prefixed('m', name))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return m.Value(func(v []byte) error {
			if len(v) >= 16 {
				atime = int64(binary.BigEndian.Uint64(v))
				size = int64(binary.BigEndian.Uint64(v[8:]))
				found = true
			}
			return nil
		})
	})
	if err != nil {
		return 0, false, err
	}
	if found {
		db.touch(name, atime)
	}
	return size, found, nil
}

// touch asks the writer to refresh name's access time when it is stale;
// the request is dropped when the writer is busy (the time stays older
// than it is: the object may be evicted a little early).
func (db *DB) touch(name []byte, atime int64) {
	if db.opts.Now().UnixNano()-atime < int64(db.opts.TouchInterval) {
		return
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return
	}
	select {
	case db.touches <- append([]byte(nil), name...):
	default:
	}
}

// Put stores the object under name (replacing one of that name) and
// returns once it is committed (and synced, with Options.Sync). The
// store keeps no reference to value.
func (db *DB) Put(name, value []byte) error {
	if db.opts.MaxSize > 0 && int64(len(value))+objOverhead > db.opts.MaxSize {
		return ErrTooBig
	}
	if db.free.low(db.opts.Dir, db.opts.MinFree, db.opts.Now()) {
		return ErrDiskFull
	}
	o, err := db.putOp(name, value)
	if err != nil {
		return err
	}
	err = db.send(o)
	o.failed(err)
	return err
}

// putOp is the operation that puts value under name: a big value is
// written to its blob file first, here, in the caller's goroutine (so
// that uploads write their files at once, and the writer only commits).
func (db *DB) putOp(name, value []byte) (*op, error) {
	o := &op{kind: opPut, name: append([]byte(nil), name...), value: value}
	if len(value) > blobThreshold {
		b, err := db.newBlob(name, value)
		if err != nil {
			return nil, err
		}
		o.value, o.blob = nil, b
	}
	return o, nil
}

// failed removes the file of a blob whose put failed (never renamed into
// place: the writer renames only what it answers nil).
func (o *op) failed(err error) {
	if err != nil && o.blob != nil {
		_ = os.Remove(o.blob.tmp)
	}
}

// PutAsync is Put that returns at once (unless the writer is behind by
// more than a thousand writes): then is called, from the writer
// goroutine, once the object is committed or failed. The store keeps
// value until then; the caller must not change it.
func (db *DB) PutAsync(name, value []byte, then func(error)) {
	if db.opts.MaxSize > 0 && int64(len(value))+objOverhead > db.opts.MaxSize {
		then(ErrTooBig)
		return
	}
	if db.free.low(db.opts.Dir, db.opts.MinFree, db.opts.Now()) {
		then(ErrDiskFull)
		return
	}
	o, err := db.putOp(name, value)
	if err != nil {
		then(err)
		return
	}
	o.then = func(err error) { o.failed(err); then(err) }
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		o.then(ErrClosed)
		return
	}
	db.ops <- o
	db.mu.RUnlock()
}

// Barrier returns once every write queued before the call (Put,
// PutAsync, Delete) is committed and its callback has run.
func (db *DB) Barrier() {
	_ = db.send(&op{kind: opBarrier})
}

// Delete removes the object, when the store holds it.
func (db *DB) Delete(name []byte) error {
	return db.send(&op{kind: opDelete, name: append([]byte(nil), name...)})
}

func (db *DB) send(o *op) error {
	o.done = make(chan error, 1)
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		return ErrClosed
	}
	db.ops <- o
	db.mu.RUnlock()
	return <-o.done
}

// Size is the bytes the store holds, as Options.MaxSize counts them:
// what its objects take on disk, and a fixed overhead for each.
func (db *DB) Size() int64 { return db.bytes.Load() }

// Count is the number of objects.
func (db *DB) Count() int64 { return db.count.Load() }

// Evictions returns the objects evicted to keep the bound, and their
// bytes, since Open.
func (db *DB) Evictions() (objects, bytes int64) {
	return db.evictions.Load(), db.evictedBytes.Load()
}

// DiskSize is what the database's files take on disk, as du counts them
// (Badger's logs are sparse files of a fixed length while open), and its
// blob files (as the records of the blobs committed count them).
func (db *DB) DiskSize() int64 {
	entries, err := os.ReadDir(db.opts.Dir)
	if err != nil {
		return 0
	}
	n := db.blobDisk.Load() // (blobs/ is not walked: it may hold millions of files)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && e.Name() != blobsDir {
			n += allocated(fi)
		}
	}
	return n
}

// Each calls f with the name of every object whose name starts with
// prefix, in name order, until f returns false. Objects written during
// the walk may or may not be seen.
func (db *DB) Each(prefix []byte, f func(name []byte) bool) error {
	return db.view(func(txn *badger.Txn) error {
		// Objects kept in Badger (o) and as blobs (b), merged in name
		// order.
		var its [2]*badger.Iterator
		for i, c := range []byte{'o', 'b'} {
			p := prefixed(c, prefix)
			its[i] = txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: false})
			defer its[i].Close()
			its[i].Seek(p)
		}
		for its[0].Valid() || its[1].Valid() {
			i := 0
			switch {
			case !its[0].Valid():
				i = 1
			case its[1].Valid() && string(its[1].Item().Key()[1:]) < string(its[0].Item().Key()[1:]):
				i = 1
			}
			name := its[i].Item().KeyCopy(nil)[1:]
			its[i].Next()
			if !f(name) {
				break
			}
		}
		return nil
	})
}

// Close writes what waits, stops the writer and closes the database.
// Calls after Close return ErrClosed.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	close(db.quit)
	db.mu.Unlock()
	db.wg.Wait()
	return db.bdb.Close()
}

// writer applies the changes in batches (see the package doc).
func (db *DB) writer() {
	defer db.wg.Done()
	gc := time.NewTicker(time.Minute)
	defer gc.Stop()
	for {
		var batch []*op
		var touches [][]byte
		select {
		case o := <-db.ops:
			batch = append(batch, o)
		case t := <-db.touches:
			touches = append(touches, t)
		case <-gc.C:
			db.gc()
			continue
		case <-db.quit:
			// Sends on ops stopped (closed is set): drain what waits.
			for {
				select {
				case o := <-db.ops:
					batch := []*op{o}
				more:
					for len(batch) < 512 {
						select {
						case o := <-db.ops:
							batch = append(batch, o)
						default:
							break more
						}
					}
					db.commit(batch, nil)
					continue
				default:
				}
				return
			}
		}
		size := 0
	gather:
		for len(batch) < 512 && size < 8<<20 {
			select {
			case o := <-db.ops:
				batch = append(batch, o)
				size += len(o.value)
			case t := <-db.touches:
				touches = append(touches, t)
			default:
				break gather
			}
		}
		db.commit(batch, touches)
	}
}

// totals is a change to the counts, and the blob files a change forgot.
type totals struct {
	bytes, count, blobDisk int64
	graves                 []string
}

// commit applies a batch in as few transactions as Badger allows, syncs
// when asked, answers the operations and evicts when over the bound.
func (db *DB) commit(batch []*op, touches [][]byte) {
	if db.opts.MaxSize > 0 {
		// Room first: the store never holds more than its bound, not even
		// between a commit and the eviction that follows it. (A put that
		// replaces an object counts twice here: room to spare.)
		incoming := int64(0)
		for _, o := range batch {
			switch {
			case o.kind == opPut && o.blob != nil:
				incoming += o.blob.alloc + objOverhead
			case o.kind == opPut:
				incoming += heldInTables(int64(len(o.value))) + objOverhead
			}
		}
		if db.bytes.Load()+incoming > db.opts.MaxSize {
			// The reads gathered with this batch refresh their objects
			// before the eviction picks the oldest: an object read while
			// a write was waiting is not the least recently used.
			if len(touches) > 0 && db.apply(nil, touches) == nil {
				touches = nil
			}
			db.evict(max(0, db.opts.MaxSize-db.opts.MaxSize/16-incoming))
		}
	}
	err := db.apply(batch, touches)
	if err == nil && db.opts.MaxSize > 0 && db.bytes.Load() > db.opts.MaxSize {
		// A batch bigger than the room (a small bound): before the answer.
		db.evict(db.opts.MaxSize - db.opts.MaxSize/16)
	}
	if err == nil && db.opts.Sync && (len(batch) > 0 || len(db.graves) > 0) {
		err = db.bdb.Sync()
	}
	errs := make([]error, len(batch))
	if err == nil {
		db.placeBlobs(batch, errs)
		// Forgotten blobs' files go once the commit that forgot them is
		// on disk; their g records in the next commit.
		for _, f := range db.graves {
			if rerr := removeBlob(db.blobs, f); rerr != nil {
				db.opts.Log(fmt.Sprintf("deleting blob %s: %v", f, rerr))
				continue
			}
			db.buried = append(db.buried, prefixed('g', []byte(f)))
		}
		db.graves = db.graves[:0]
	}
	for i, o := range batch {
		e := err
		if e == nil {
			e = errs[i]
		}
		if o.then != nil {
			o.then(e)
		} else {
			o.done <- e
		}
	}
	if len(batch) > 0 {
		db.wroteSinceGC = true
	}
}

// placeBlobs renames the blob files of a committed batch into place and,
// with Options.Sync, syncs the directories they went to, before the puts
// are answered. A put whose file could not be placed fails (errs), and
// its object, committed without a file, is deleted.
func (db *DB) placeBlobs(batch []*op, errs []error) {
	dirs := map[string][]int{}
	var lost []*op
	for i, o := range batch {
		if o.kind != opPut || o.blob == nil {
			continue
		}
		dir := filepath.Join(db.blobs, o.blob.file[:2])
		err := os.MkdirAll(dir, 0o700)
		if err == nil {
			err = os.Rename(o.blob.tmp, filepath.Join(db.blobs, filepath.FromSlash(o.blob.file)))
		}
		if err != nil {
			errs[i] = err
			lost = append(lost, &op{kind: opDelete, name: o.name})
			continue
		}
		dirs[dir] = append(dirs[dir], i)
	}
	if db.opts.Sync {
		for dir, ops := range dirs {
			if err := syncDir(dir); err != nil {
				for _, i := range ops {
					errs[i] = err
				}
			}
		}
	}
	if len(lost) > 0 {
		if err := db.apply(lost, nil); err != nil {
			db.opts.Log(fmt.Sprintf("forgetting blobs that could not be placed: %v", err))
		}
	}
}

// syncDir syncs a directory, so that the names renamed into it last.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// apply writes the batch; the totals record is written in each
// transaction with the changes it counts. A batch too big for one
// transaction is split between whole changes.
func (db *DB) apply(batch []*op, touches [][]byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("badger panicked: %v", r)
		}
	}()
	now := db.opts.Now().UnixNano()
	changes := make([]func(*badger.Txn, *totals) error, 0, len(batch)+len(touches)+1)
	if buried := db.buried; len(buried) > 0 {
		changes = append(changes, func(t *badger.Txn, d *totals) error {
			for _, g := range buried {
				if err := t.Delete(g); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for _, o := range batch {
		switch o.kind {
		case opPut:
			changes = append(changes, func(t *badger.Txn, d *totals) error { return put(t, d, o, now) })
		case opDelete:
			changes = append(changes, func(t *badger.Txn, d *totals) error { return del(t, d, o.name) })
		}
	}
	for _, name := range touches {
		changes = append(changes, func(t *badger.Txn, d *totals) error { return db.touchIn(t, name, now) })
	}
	buried := len(db.buried)
	commit := func(txn *badger.Txn, d totals) error {
		defer txn.Discard()
		if err := txn.Set([]byte(totalsKey), encodeTotals(db.bytes.Load()+d.bytes, db.count.Load()+d.count)); err != nil {
			return err
		}
		if d.blobDisk != 0 {
			var v [8]byte
			binary.BigEndian.PutUint64(v[:], uint64(db.blobDisk.Load()+d.blobDisk))
			if err := txn.Set([]byte(blobsKey), v[:]); err != nil {
				return err
			}
		}
		if err := txn.Commit(); err != nil {
			return err
		}
		db.bytes.Add(d.bytes)
		db.count.Add(d.count)
		db.blobDisk.Add(d.blobDisk)
		db.graves = append(db.graves, d.graves...)
		if buried > 0 {
			db.buried = db.buried[buried:] // (the first transaction forgot them)
			buried = 0
		}
		return nil
	}
	start := 0
	txn, d := db.bdb.NewTransaction(true), totals{}
	for i := 0; i < len(changes); {
		err := changes[i](txn, &d)
		if errors.Is(err, badger.ErrTxnTooBig) {
			txn.Discard()
			if i == start {
				return err // one change alone is too big
			}
			// The transaction may hold part of change i: redo the
			// changes before it in a new one, and commit that.
			txn, d = db.bdb.NewTransaction(true), totals{}
			for _, f := range changes[start:i] {
				if err := f(txn, &d); err != nil {
					txn.Discard()
					return err
				}
			}
			if err := commit(txn, d); err != nil {
				return err
			}
			start = i
			txn, d = db.bdb.NewTransaction(true), totals{}
			continue
		}
		if err != nil {
			txn.Discard()
			return err
		}
		i++
	}
	return commit(txn, d)
}

func put(txn *badger.Txn, d *totals, o *op, now int64) error {
	name := o.name
	if err := del(txn, d, name); err != nil {
		return err
	}
	size := int64(len(o.value))
	held := heldInTables(size)
	if o.blob != nil {
		size, held = o.blob.size, o.blob.alloc
		if err := txn.Set(prefixed('b', name), encodeBlob(o.blob)); err != nil {
			return err
		}
		d.blobDisk += o.blob.alloc
	} else if err := txn.Set(prefixed('o', name), o.value); err != nil {
		return err
	}
	if err := txn.Set(prefixed('m', name), encodeMeta(now, size, held)); err != nil {
		return err
	}
	if err := txn.Set(indexKey(now, name), nil); err != nil {
		return err
	}
	d.bytes += held + objOverhead
	d.count++
	return nil
}

// del removes name's object (its bytes, or its blob record, the file
// recorded to be deleted), meta and index keys (nothing when absent).
func del(txn *badger.Txn, d *totals, name []byte) error {
	atime, _, held, ok, err := meta(txn, name)
	if err != nil || !ok {
		return err
	}
	keys := [][]byte{prefixed('m', name), indexKey(atime, name)}
	switch b, err := blobOf(txn, name); {
	case err != nil && !errors.Is(err, errDamagedBlob):
		return err
	case b != nil:
		if err := txn.Set(prefixed('g', []byte(b.file)), nil); err != nil {
			return err
		}
		d.graves = append(d.graves, b.file)
		d.blobDisk -= b.alloc
		keys = append(keys, prefixed('b', name))
	case err != nil: // a damaged record: no file to delete
		keys = append(keys, prefixed('b', name))
	default:
		keys = append(keys, prefixed('o', name))
	}
	for _, k := range keys {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	d.bytes -= held + objOverhead
	d.count--
	return nil
}

// touchIn moves name to now in the LRU index, when it is still there and
// its time is stale.
func (db *DB) touchIn(txn *badger.Txn, name []byte, now int64) error {
	atime, size, held, ok, err := meta(txn, name)
	if err != nil || !ok || now-atime < int64(db.opts.TouchInterval) {
		return err
	}
	if err := txn.Delete(indexKey(atime, name)); err != nil {
		return err
	}
	if err := txn.Set(prefixed('m', name), encodeMeta(now, size, held)); err != nil {
		return err
	}
	return txn.Set(indexKey(now, name), nil)
}

// meta reads name's meta record: its access time, its size, and what it
// counts in Size (held; a record of 16 bytes, written before objects
// counted more than their bytes, counts its size).
func meta(txn *badger.Txn, name []byte) (atime, size, held int64, ok bool, err error) {
	item, err := txn.Get(prefixed('m', name))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, 0, false, err
	}
	err = item.Value(func(v []byte) error {
		if len(v) != 16 && len(v) != 24 {
			return fmt.Errorf("damaged meta record of %x", name)
		}
		atime, size, held = int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:])), int64(binary.BigEndian.Uint64(v[8:]))
		if len(v) == 24 {
			held = int64(binary.BigEndian.Uint64(v[16:]))
		}
		return nil
	})
	return atime, size, held, err == nil, err
}

// evict deletes the least recently used objects until the store holds at
// most target bytes. The walk of the index starts where the last one
// stopped (what lies before it is gone, and new times are later), so it
// does not read again the deletion markers it left.
func (db *DB) evict(target int64) {
	for db.bytes.Load() > target {
		var names [][]byte
		need := db.bytes.Load() - target
		err := db.view(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{'t'}})
			defer it.Close()
			start := []byte{'t'}
			if db.cursor != nil {
				start = db.cursor
			}
			for it.Seek(start); it.Valid() && need > 0 && len(names) < 1000; it.Next() {
				k := it.Item().KeyCopy(nil)
				if len(k) < 9 {
					continue
				}
				names = append(names, k[9:])
				db.cursor = k
				_, _, held, ok, err := meta(txn, k[9:])
				if err != nil {
					return err
				}
				if ok {
					need -= held + objOverhead
				}
			}
			return nil
		})
		if err != nil || len(names) == 0 {
			if db.cursor != nil && err == nil {
				db.cursor = nil // start again from the oldest
				continue
			}
			if err == nil {
				err = errors.New("the LRU index is empty while the totals say the store is full")
			}
			db.opts.Log(fmt.Sprintf("evicting: %v", err))
			return
		}
		before := db.bytes.Load()
		ops := make([]*op, len(names))
		for i, n := range names {
			ops[i] = &op{kind: opDelete, name: n}
		}
		if err := db.apply(ops, nil); err != nil {
			db.opts.Log(fmt.Sprintf("evicting: %v", err))
			return
		}
		db.evictions.Add(int64(len(names)))
		db.evictedBytes.Add(before - db.bytes.Load())
	}
	db.gc()
}

// gc reclaims value log space that deleted and replaced objects left,
// at most once a minute and only after writes.
func (db *DB) gc() {
	if !db.wroteSinceGC || db.opts.Now().Sub(db.lastGC) < time.Minute {
		return
	}
	db.wroteSinceGC = false
	db.lastGC = db.opts.Now()
	func() {
		defer func() { _ = recover() }()
		for i := 0; i < 16 && db.bdb.RunValueLogGC(0.5) == nil; i++ {
		}
	}()
}

func prefixed(p byte, name []byte) []byte {
	k := make([]byte, 1+len(name))
	k[0] = p
	copy(k[1:], name)
	return k
}

func indexKey(atime int64, name []byte) []byte {
	k := make([]byte, 9+len(name))
	k[0] = 't'
	binary.BigEndian.PutUint64(k[1:], uint64(atime))
	copy(k[9:], name)
	return k
}

func encodeMeta(atime, size, held int64) []byte {
	var b [24]byte
	binary.BigEndian.PutUint64(b[:], uint64(atime))
	binary.BigEndian.PutUint64(b[8:], uint64(size))
	binary.BigEndian.PutUint64(b[16:], uint64(held))
	return b[:]
}

func encodeTotals(bytes, count int64) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], uint64(bytes))
	binary.BigEndian.PutUint64(b[8:], uint64(count))
	return b[:]
}

// heldInTables is what an object of size bytes kept in Badger's tables
// counts in Size: its bytes and a quarter more, for what the tables hold
// beyond the live objects (deleted and replaced versions, until
// compaction reaches them in the last level: 1.29x the live bytes a
// minute after a fill of three times the bound with objects of 100 B to
// 4 KiB), so that the disk follows the bound.
func heldInTables(size int64) int64 { return size + size/4 }

// check refuses a directory that is not (or no longer) a whole Badger
// database before Badger opens it (see the package doc).
func check(dir string, bo badger.Options) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return unwrapPath(err)
	}
	var foreign []string
	tables := map[string]int64{}
	hasManifest, data := false, false
	for _, e := range entries {
		n := e.Name()
		switch {
		case n == "MANIFEST":
			hasManifest = true
		case n == "KEYREGISTRY" || n == "DISCARD" || n == "LOCK" || n == "MANIFEST-REWRITE":
		case n == blobsDir && e.IsDir():
		case numbered(n, ".sst"):
			fi, err := e.Info()
			if err != nil {
				return unwrapPath(err)
			}
			tables[n] = fi.Size()
			data = true
		case numbered(n, ".vlog") || numbered(n, ".mem"):
			data = true
		default:
			foreign = append(foreign, n)
		}
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		if len(foreign) > 3 {
			foreign = append(foreign[:3], "...")
		}
		return fmt.Errorf("it holds files that are not Badger's (%s); use an empty or new directory", strings.Join(foreign, ", "))
	}
	if !hasManifest {
		if data {
			return errors.New("damaged: Badger's MANIFEST is missing but its data files are there; " + startAgain)
		}
		return nil
	}
	f, err := os.Open(filepath.Join(dir, "MANIFEST"))
	if err != nil {
		return unwrapPath(err)
	}
	defer f.Close()
	m, _, err := replayManifest(f, bo)
	if err != nil {
		return fmt.Errorf("damaged: MANIFEST: %v; %s", err, startAgain)
	}
	var missing []string
	for id := range m.Tables {
		name := fmt.Sprintf("%06d.sst", id)
		if size, ok := tables[name]; !ok || size == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("damaged: MANIFEST names tables that are missing or empty (%s); %s", strings.Join(missing, ", "), startAgain)
	}
	for id := range m.Tables {
		name := fmt.Sprintf("%06d.sst", id)
		if err := checkTable(filepath.Join(dir, name), tables[name]); err != nil {
			return fmt.Errorf("damaged: table %s: %v; %s", name, err, startAgain)
		}
	}
	return nil
}

const startAgain = "move the directory away (or delete it) and start with an empty one"

// checkTable reads a table's footer, as Badger does when it opens the
// table (in a goroutine of its own, where a read outside the file
// panics), and checks that the checksum and index it points to lie
// within the file. It reads a few bytes per table, so the check costs
// what the number of tables does, not what they hold.
func checkTable(path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return unwrapPath(err)
	}
	defer f.Close()
	u32 := func(off int64) (int64, error) {
		var b [4]byte
		if off < 0 || off+4 > size {
			return 0, errors.New("its footer is cut short")
		}
		if _, err := f.ReadAt(b[:], off); err != nil {
			return 0, err
		}
		return int64(binary.BigEndian.Uint32(b[:])), nil
	}
	pos := size - 4
	n, err := u32(pos)
	if err != nil {
		return err
	}
	pos -= n
	if n <= 0 || pos < 4 {
		return errors.New("its footer is cut short")
	}
	chk := make([]byte, n)
	if _, err := f.ReadAt(chk, pos); err != nil {
		return err
	}
	if err := proto.Unmarshal(chk, &pb.Checksum{}); err != nil {
		return fmt.Errorf("its index checksum does not parse: %v", err)
	}
	pos -= 4
	n, err = u32(pos)
	if err != nil {
		return err
	}
	if n <= 0 || pos-n < 0 {
		return errors.New("its index is cut short")
	}
	// The index's checksum Badger checks itself, and returns an error
	// (not a panic) when it fails; what it cannot survive is reading
	// outside the file, which the bounds above rule out.
	return nil
}

func replayManifest(f *os.File, bo badger.Options) (m badger.Manifest, off int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return badger.ReplayManifestFile(f, bo.ExternalMagicVersion, bo)
}

func numbered(name, suf string) bool {
	s, ok := strings.CutSuffix(name, suf)
	return ok && s != "" && strings.Trim(s, "0123456789") == ""
}

// unwrapPath drops the operation and path of a *os.PathError (messages
// name the directory already).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// logger passes Badger's errors on, one line each. Its warnings are
// tuning advice written to a log every few minutes ("Block cache might be
// too small", with a histogram), not something the owner of a cache can
// act on: they are dropped with its info and debug lines.
type logger struct{ log func(string) }

func (l logger) Errorf(f string, a ...any) {
	l.log("badger: " + strings.Join(strings.Fields(fmt.Sprintf(f, a...)), " "))
}
func (logger) Warningf(string, ...any) {}
func (logger) Infof(string, ...any)    {}
func (logger) Debugf(string, ...any)   {}

// freeCheck asks the disk's free space at most once a second.
type freeCheck struct {
	mu   sync.Mutex
	at   time.Time
	last bool
}

func (c *freeCheck) low(dir string, min int64, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.at) < time.Second && !c.at.IsZero() {
		return c.last
	}
	c.at = now
	free, ok := freeSpace(dir)
	c.last = ok && free < min
	return c.last
}
