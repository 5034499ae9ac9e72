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
//	o<name>                 the object's bytes
//	m<name>                 its access time (unix nanoseconds) and size, 16 bytes
//	t<access time><name>    the LRU index: every object once, oldest first
//	!totals                 the bytes and objects the store holds, 16 bytes
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
	"encoding/binary"
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
	// 15/16 of it. Zero means no bound.
	MaxSize int64
	// Sync makes every commit reach the disk before the writes it holds
	// are answered (a server's uploads); without it a write survives the
	// process being killed, not the machine losing power.
	Sync bool
	// TouchInterval is how stale an object's access time may get before a
	// read refreshes it (zero: one minute).
	TouchInterval time.Duration
	// MemTableSize is Badger's memtable size, the write-ahead log a crash
	// replays (zero: 16 MiB); BlockCacheSize its block cache (zero:
	// 32 MiB).
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
	value []byte
	done  chan error  // Put and Delete wait on it
	then  func(error) // or PutAsync's callback
}

// Open opens (creating it when missing) the store in o.Dir. A directory
// that is damaged, locked by another process or holds other files is
// refused with an error naming it and the problem.
func Open(o Options) (db *DB, err error) {
	if o.TouchInterval == 0 {
		o.TouchInterval = time.Minute
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 16 << 20
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
	db = &DB{bdb: bdb, opts: o, ops: make(chan *op, 1024), touches: make(chan []byte, 4096), quit: make(chan struct{}), lastGC: o.Now()}
	if err := db.load(); err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("store %s: %w", o.Dir, err)
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
		return nil
	})
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
	err = db.view(func(txn *badger.Txn) error {
		item, err := txn.Get(prefixed('o', name))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if value, err = item.ValueCopy(nil); err != nil {
			return err
		}
		found = true
		if m, err := txn.Get(prefixed('m', name)); err == nil {
			_ = m.Value(func(v []byte) error {
				if len(v) == 16 {
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
	if found {
		db.touch(name, atime)
	}
	return value, found, nil
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
			if len(v) == 16 {
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
	return db.send(&op{kind: opPut, name: append([]byte(nil), name...), value: value})
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
	o := &op{kind: opPut, name: append([]byte(nil), name...), value: value, then: then}
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		then(ErrClosed)
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

// Size is the bytes the store holds: its objects' bytes and a fixed
// overhead for each (what Options.MaxSize bounds).
func (db *DB) Size() int64 { return db.bytes.Load() }

// Count is the number of objects.
func (db *DB) Count() int64 { return db.count.Load() }

// Evictions returns the objects evicted to keep the bound, and their
// bytes, since Open.
func (db *DB) Evictions() (objects, bytes int64) {
	return db.evictions.Load(), db.evictedBytes.Load()
}

// DiskSize is what the database's files take on disk, as du counts them
// (Badger's logs are sparse files of a fixed length while open).
func (db *DB) DiskSize() int64 {
	entries, err := os.ReadDir(db.opts.Dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
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
		p := prefixed('o', prefix)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
		defer it.Close()
		for it.Seek(p); it.Valid(); it.Next() {
			if !f(it.Item().KeyCopy(nil)[1:]) {
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

// totals is a change to the counts.
type totals struct{ bytes, count int64 }

// commit applies a batch in as few transactions as Badger allows, syncs
// when asked, answers the operations and evicts when over the bound.
func (db *DB) commit(batch []*op, touches [][]byte) {
	if db.opts.MaxSize > 0 {
		// Room first: the store never holds more than its bound, not even
		// between a commit and the eviction that follows it. (A put that
		// replaces an object counts twice here: room to spare.)
		incoming := int64(0)
		for _, o := range batch {
			if o.kind == opPut {
				incoming += int64(len(o.value)) + objOverhead
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
	if err == nil && db.opts.Sync && len(batch) > 0 {
		err = db.bdb.Sync()
	}
	for _, o := range batch {
		if o.then != nil {
			o.then(err)
		} else {
			o.done <- err
		}
	}
	if len(batch) > 0 {
		db.wroteSinceGC = true
	}
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
	changes := make([]func(*badger.Txn, *totals) error, 0, len(batch)+len(touches))
	for _, o := range batch {
		switch o.kind {
		case opPut:
			changes = append(changes, func(t *badger.Txn, d *totals) error { return put(t, d, o.name, o.value, now) })
		case opDelete:
			changes = append(changes, func(t *badger.Txn, d *totals) error { return del(t, d, o.name) })
		}
	}
	for _, name := range touches {
		changes = append(changes, func(t *badger.Txn, d *totals) error { return db.touchIn(t, name, now) })
	}
	commit := func(txn *badger.Txn, d totals) error {
		defer txn.Discard()
		if err := txn.Set([]byte(totalsKey), encodeTotals(db.bytes.Load()+d.bytes, db.count.Load()+d.count)); err != nil {
			return err
		}
		if err := txn.Commit(); err != nil {
			return err
		}
		db.bytes.Add(d.bytes)
		db.count.Add(d.count)
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

func put(txn *badger.Txn, d *totals, name, value []byte, now int64) error {
	if err := del(txn, d, name); err != nil {
		return err
	}
	if err := txn.Set(prefixed('o', name), value); err != nil {
		return err
	}
	if err := txn.Set(prefixed('m', name), encodeMeta(now, int64(len(value)))); err != nil {
		return err
	}
	if err := txn.Set(indexKey(now, name), nil); err != nil {
		return err
	}
	d.bytes += int64(len(value)) + objOverhead
	d.count++
	return nil
}

// del removes name's object, meta and index keys (nothing when absent).
func del(txn *badger.Txn, d *totals, name []byte) error {
	atime, size, ok, err := meta(txn, name)
	if err != nil || !ok {
		return err
	}
	for _, k := range [][]byte{prefixed('o', name), prefixed('m', name), indexKey(atime, name)} {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	d.bytes -= size + objOverhead
	d.count--
	return nil
}

// touchIn moves name to now in the LRU index, when it is still there and
// its time is stale.
func (db *DB) touchIn(txn *badger.Txn, name []byte, now int64) error {
	atime, size, ok, err := meta(txn, name)
	if err != nil || !ok || now-atime < int64(db.opts.TouchInterval) {
		return err
	}
	if err := txn.Delete(indexKey(atime, name)); err != nil {
		return err
	}
	if err := txn.Set(prefixed('m', name), encodeMeta(now, size)); err != nil {
		return err
	}
	return txn.Set(indexKey(now, name), nil)
}

func meta(txn *badger.Txn, name []byte) (atime, size int64, ok bool, err error) {
	item, err := txn.Get(prefixed('m', name))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	err = item.Value(func(v []byte) error {
		if len(v) != 16 {
			return fmt.Errorf("damaged meta record of %x", name)
		}
		atime, size = int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:]))
		return nil
	})
	return atime, size, err == nil, err
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
				_, size, ok, err := meta(txn, k[9:])
				if err != nil {
					return err
				}
				if ok {
					need -= size + objOverhead
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

func encodeMeta(atime, size int64) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], uint64(atime))
	binary.BigEndian.PutUint64(b[8:], uint64(size))
	return b[:]
}

func encodeTotals(bytes, count int64) []byte { return encodeMeta(bytes, count) }

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
