package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
)

// objects is where a Store and its FileIndex keep what they write: entry
// lines with their inline values ("-a"), content named by its SHA-256
// ("-d"), stat records ("-i"), callers' records ("-r", records.go). Every
// object is self-checking, and the callers check what they read: a
// backend only keeps bytes under names. Two backends implement it: the
// directory of files in the Go build cache's shape (disk, layout.go and
// pack.go: the CLI's, opened by many short processes at once) and a
// key-value store (kvObjects over a KV, such as package cache/badger's
// Badger database: for one process that owns the store for a long
// life). The store tests run against both (runStoreTests).
type objects interface {
	// name is the object name of the entry hex with suffix suf: a path for
	// the directory, a key for a KV.
	name(hex, suf string) string
	// read returns an object's bytes; any error is a miss.
	read(name string) ([]byte, error)
	// size returns the length of an object without reading it.
	size(name string) (int64, bool)
	// write stores an object (in two pieces: content keeps them apart
	// where the backend can). A failure is reported once, and from then
	// on nothing is written (failed).
	write(name string, data []byte)
	writeContent(name string, data content)
	// remove deletes an object.
	remove(name string)
	// markUsed records that an object was used (the least recently used
	// go first when the store is trimmed).
	markUsed(name string)
	// openChecked opens a content object and checks it has e's size and
	// digest (stream.go).
	openChecked(name string, e entry) (*Value, error)
	// flushPack writes what waits to be written.
	flushPack()
	// failed reports whether a write failed (nothing more is written).
	failed() bool
	// warnOnce gives msg to the warning function, unless the store warned
	// already.
	warnOnce(msg string)
	// freshRecords is the set of records this process noted as written
	// (Store.NoteRecord), when the backend knows that nothing else is there
	// (disk.fresh); nil otherwise.
	freshRecords() *sync.Map
	// close releases the backend.
	close() error
}

// kvObjects is the key-value backend (Options.KV): an object is a key of
// the store, its suffix letter followed by its name's bytes.
type kvObjects struct {
	db     KV
	warn   func(string)
	broken atomic.Bool
	warned sync.Once
	// pending are the objects written and not yet committed, by name
	// (*[]byte): writes go in the background, as the file store's packs
	// do, and reads find them here meanwhile. flushPack waits for them
	// (a barrier through the store's one writer), and so does close.
	pending sync.Map
}

// openKV opens the key-value store of opts.Dir with opts.KV.
func openKV(opts Options) (*kvObjects, error) {
	db, err := opts.KV(KVOptions{
		Dir:     opts.Dir,
		MaxSize: opts.MaxSize,
		Log:     func(msg string) { opts.Warn("cache: " + msg) },
		Now:     opts.Now,
	})
	if err != nil {
		return nil, err
	}
	if db == nil {
		return nil, errors.New("the key-value store opened as nil")
	}
	return &kvObjects{db: db, warn: opts.Warn}, nil
}

func (k *kvObjects) name(hexName, suf string) string {
	b := make([]byte, 1, 1+len(hexName)/2)
	b[0] = suf[len(suf)-1]
	raw, err := hex.AppendDecode(b, []byte(hexName))
	if err != nil {
		return string(b) + hexName
	}
	return string(raw)
}

func (k *kvObjects) read(name string) ([]byte, error) {
	if p, ok := k.pending.Load(name); ok {
		return *p.(*[]byte), nil
	}
	v, ok, err := k.db.Get([]byte(name))
	switch {
	case err != nil:
		k.readFailed(err)
		return nil, err
	case !ok:
		return nil, fs.ErrNotExist
	}
	return v, nil
}

// readFailed reports a read that failed (not a missing object: damage a
// checksum found, or the database failing) once; the read is a miss.
func (k *kvObjects) readFailed(err error) {
	if !errors.Is(err, ErrKVClosed) {
		k.warnOnce(fmt.Sprintf("cache: reading the %s store failed (%v); such entries are built again", k.db, err))
	}
}

func (k *kvObjects) size(name string) (int64, bool) {
	if p, ok := k.pending.Load(name); ok {
		return int64(len(*p.(*[]byte))), true
	}
	n, ok, err := k.db.Stat([]byte(name))
	if err != nil {
		k.readFailed(err)
		return 0, false
	}
	return n, ok
}

func (k *kvObjects) write(name string, data []byte) {
	k.writeContent(name, content{head: data})
}

func (k *kvObjects) writeContent(name string, data content) {
	if k.broken.Load() {
		return
	}
	// Not copied: Store.Put's callers leave a value alone once given
	// (the file store's packs keep it too).
	b := data.bytes()
	p := &b
	k.pending.Store(name, p)
	k.db.PutAsync([]byte(name), b, func(err error) {
		k.pending.CompareAndDelete(name, p)
		if err == nil || errors.Is(err, ErrKVTooBig) {
			return // (bigger than the whole bound: not kept, as a cache may)
		}
		k.broken.Store(true)
		k.warnOnce(fmt.Sprintf("cache: cannot write to the %s store (%v); this process's results are not cached any more", k.db, err))
	})
}

func (k *kvObjects) remove(name string) {
	k.pending.Delete(name)
	// (A write of name in flight is ahead of the delete in the writer's
	// queue: it lands first.)
	_ = k.db.Delete([]byte(name))
}

// markUsed does nothing: a read refreshes the object's access time.
func (k *kvObjects) markUsed(string) {}

func (k *kvObjects) openChecked(name string, e entry) (*Value, error) {
	data, err := k.read(name)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != e.size || sha256.Sum256(data) != e.digest {
		return nil, errDamaged
	}
	return &Value{data: data}, nil
}

// flushPack waits for the writes in flight.
func (k *kvObjects) flushPack() { k.db.Barrier() }

func (k *kvObjects) failed() bool { return k.broken.Load() }

func (k *kvObjects) warnOnce(msg string) {
	k.warned.Do(func() {
		if k.warn != nil {
			k.warn(msg)
		}
	})
}

func (k *kvObjects) freshRecords() *sync.Map { return nil }

// close commits what waits (the writer drains its queue) and closes the
// database.
func (k *kvObjects) close() error { return k.db.Close() }

// lastRunName is the object holding the last run's statistics in a
// key-value store (a name no entry has: entries are a letter and 32 bytes).
const lastRunName = "lastrun.json"

// info is Store.Info for a key-value store.
func (k *kvObjects) info(dir string) (Info, error) {
	info := Info{Dir: dir, Bytes: k.db.DiskSize()}
	err := k.db.Each(nil, func(name []byte) bool {
		if len(name) == 1+sha256.Size {
			switch name[0] {
			case sufAction[1]:
				info.Entries++
			case sufData[1]:
				info.Blobs++
			}
		}
		return true
	})
	return info, err
}

// actionKeys returns the keys of the store's entries.
func (k *kvObjects) actionKeys() ([]Key, error) {
	var keys []Key
	err := k.db.Each([]byte(sufAction[1:]), func(name []byte) bool {
		if len(name) == 1+sha256.Size {
			keys = append(keys, Key(name[1:]))
		}
		return true
	})
	return keys, err
}
