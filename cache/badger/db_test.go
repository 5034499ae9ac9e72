package badger

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

func mustOpen(t *testing.T, o Options) *DB {
	t.Helper()
	db, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func name(i int) []byte { return []byte(fmt.Sprintf("obj-%06d", i)) }

func TestPutGetDeleteAndTotalsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, Options{Dir: dir})
	for i := range 100 {
		if err := db.Put(name(i), bytes.Repeat([]byte{byte(i)}, 100+i)); err != nil {
			t.Fatal(err)
		}
	}
	// A replaced object counts once.
	if err := db.Put(name(0), []byte("again")); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(name(1)); err != nil {
		t.Fatal(err)
	}
	v, ok, err := db.Get(name(0))
	if err != nil || !ok || string(v) != "again" {
		t.Fatalf("Get = %q %v %v", v, ok, err)
	}
	if _, ok, _ := db.Get(name(1)); ok {
		t.Fatal("a deleted object is found")
	}
	if n, ok, _ := db.Stat(name(5)); !ok || n != 105 {
		t.Fatalf("Stat = %d %v", n, ok)
	}
	want := int64(len("again")) + objOverhead
	for i := 2; i < 100; i++ {
		want += int64(100+i) + objOverhead
	}
	if db.Size() != want || db.Count() != 99 {
		t.Fatalf("Size %d Count %d, want %d 99", db.Size(), db.Count(), want)
	}
	db.Close()
	if err := db.Put(name(3), nil); err != ErrClosed {
		t.Fatalf("Put after Close: %v", err)
	}
	db2 := mustOpen(t, Options{Dir: dir})
	if db2.Size() != want || db2.Count() != 99 {
		t.Fatalf("after reopening: Size %d Count %d, want %d 99", db2.Size(), db2.Count(), want)
	}
	n := 0
	if err := db2.Each(nil, func([]byte) bool { n++; return true }); err != nil || n != 99 {
		t.Fatalf("Each saw %d objects (%v)", n, err)
	}
}

// The bound holds under a fill several times its size, and what was read
// recently stays while what was not goes first.
func TestEvictsLeastRecentlyUsed(t *testing.T) {
	now := time.Unix(1e9, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tick := func() { mu.Lock(); now = now.Add(time.Second); mu.Unlock() }
	const max = 200 << 10
	db := mustOpen(t, Options{Dir: t.TempDir(), MaxSize: max, TouchInterval: time.Nanosecond, Now: clock})
	value := bytes.Repeat([]byte("x"), 1000)
	for i := range 1000 {
		tick()
		if err := db.Put(name(i), value); err != nil {
			t.Fatal(err)
		}
		// Object 0 is read all along.
		if _, ok, _ := db.Get(name(0)); !ok {
			t.Fatalf("object 0, read all along, was evicted by put %d", i)
		}
		if db.Size() > max {
			t.Fatalf("size %d over the bound %d after put %d", db.Size(), max, i)
		}
		waitTouches(db)
	}
	if n, _ := db.Evictions(); n < 800 {
		t.Fatalf("%d evictions", n)
	}
	if _, ok, _ := db.Get(name(1)); ok {
		t.Error("object 1, never read, is still there")
	}
	if _, ok, _ := db.Get(name(999)); !ok {
		t.Error("the newest object was evicted")
	}
}

// waitTouches waits until the writer has taken the touches queued.
func waitTouches(db *DB) {
	for len(db.touches) > 0 {
		time.Sleep(time.Millisecond)
	}
	_ = db.Put([]byte("sync-marker"), nil) // a round trip through the writer
}

func TestConcurrentPutsAndGets(t *testing.T) {
	db := mustOpen(t, Options{Dir: t.TempDir(), Sync: true})
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				n := name(w*1000 + i)
				if err := db.Put(n, n); err != nil {
					t.Error(err)
					return
				}
				if v, ok, err := db.Get(n); err != nil || !ok || !bytes.Equal(v, n) {
					t.Errorf("Get(%s) = %q %v %v", n, v, ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if db.Count() != 16*50 {
		t.Fatalf("Count %d", db.Count())
	}
}

// A second process (here: a second Open) finds the directory locked, and
// says so.
func TestLockedDirectoryIsAnError(t *testing.T) {
	dir := t.TempDir()
	mustOpen(t, Options{Dir: dir})
	_, err := Open(Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second Open: %v", err)
	}
}

// Damage that Badger would panic on, or silently drop data for, is
// refused at Open with a message naming the file.
func TestDamagedDirectoryIsRefused(t *testing.T) {
	fill := func(t *testing.T) string {
		dir := t.TempDir()
		db, err := Open(Options{Dir: dir, MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3000 {
			if err := db.Put(name(i), bytes.Repeat([]byte{byte(i)}, 1000)); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	ssts := func(t *testing.T, dir string) []string {
		m, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
		if len(m) == 0 {
			t.Fatal("no tables written")
		}
		return m
	}
	for _, tc := range []struct {
		name, want string
		damage     func(t *testing.T, dir string)
	}{
		{"foreign file", "not Badger's (notes.txt)", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600)
		}},
		{"manifest missing", "MANIFEST is missing", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "MANIFEST"))
		}},
		{"manifest garbage", "MANIFEST", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "MANIFEST"), []byte("garbage garbage garbage"), 0o600)
		}},
		{"table missing", ".sst", func(t *testing.T, dir string) {
			os.Remove(ssts(t, dir)[0])
		}},
		{"table emptied", ".sst", func(t *testing.T, dir string) {
			os.Truncate(ssts(t, dir)[0], 0)
		}},
		{"table truncated", "", func(t *testing.T, dir string) {
			p := ssts(t, dir)[0]
			fi, _ := os.Stat(p)
			os.Truncate(p, fi.Size()/2)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fill(t)
			tc.damage(t, dir)
			db, err := Open(Options{Dir: dir})
			if err == nil {
				db.Close()
				t.Fatal("a damaged directory was opened")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("error %q does not name %q and the directory", err, tc.want)
			}
		})
	}
}

// A directory holding another program's Badger database is not taken.
func TestForeignBadgerDatabaseIsRefused(t *testing.T) {
	dir := t.TempDir()
	bdb, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(func(txn *badger.Txn) error { return txn.Set([]byte("theirs"), []byte("1")) }); err != nil {
		t.Fatal(err)
	}
	bdb.Close()
	if _, err := Open(Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "did not make") {
		t.Fatalf("Open: %v", err)
	}
}
