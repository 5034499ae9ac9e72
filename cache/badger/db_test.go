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
	want := heldInTables(int64(len("again"))) + objOverhead
	for i := 2; i < 100; i++ {
		want += heldInTables(int64(100+i)) + objOverhead
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

// blobFiles lists the blob files under dir/blobs (not tmp/).
func blobFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(dir, blobsDir), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "tmp" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An object bigger than blobThreshold is a file of its own: read back
// whole, counted in Size and DiskSize, listed by Each in name order with
// the others; replaced or deleted, its file goes (and its disk with it);
// evicted, too. A store reopened finds them.
func TestBlobs(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, Options{Dir: dir, Sync: true})
	big := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, blobThreshold+1+i) }
	for i := range 4 {
		if err := db.Put(name(i), big(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Put(name(10), []byte("small")); err != nil {
		t.Fatal(err)
	}
	if files := blobFiles(t, dir); len(files) != 4 {
		t.Fatalf("%d blob files, want 4: %v", len(files), files)
	}
	for i := range 4 {
		if v, ok, err := db.Get(name(i)); err != nil || !ok || !bytes.Equal(v, big(i)) {
			t.Fatalf("Get(%d): %d bytes, %v, %v", i, len(v), ok, err)
		}
		if n, ok, _ := db.Stat(name(i)); !ok || n != int64(len(big(i))) {
			t.Fatalf("Stat(%d) = %d, %v", i, n, ok)
		}
	}
	var names []string
	db.Each(nil, func(n []byte) bool { names = append(names, string(n)); return true })
	if fmt.Sprint(names) != fmt.Sprint([]string{"obj-000000", "obj-000001", "obj-000002", "obj-000003", "obj-000010"}) {
		t.Errorf("Each: %v", names)
	}
	if d := db.DiskSize(); d < 4*blobThreshold {
		t.Errorf("DiskSize %d does not count the blobs", d)
	}
	// Replaced by a small value, and deleted: their files go.
	if err := db.Put(name(0), []byte("small now")); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(name(1)); err != nil {
		t.Fatal(err)
	}
	if files := blobFiles(t, dir); len(files) != 2 {
		t.Fatalf("%d blob files after a replace and a delete, want 2: %v", len(files), files)
	}
	if v, ok, _ := db.Get(name(0)); !ok || string(v) != "small now" {
		t.Fatalf("the replaced object: %q %v", v, ok)
	}
	size := db.Size()
	db.Close()
	db2 := mustOpen(t, Options{Dir: dir, MaxSize: 2*blobThreshold + 4*objOverhead + 100})
	if db2.Size() != size {
		t.Fatalf("Size %d after reopening, was %d", db2.Size(), size)
	}
	if v, ok, err := db2.Get(name(3)); err != nil || !ok || !bytes.Equal(v, big(3)) {
		t.Fatalf("Get after reopening: %d bytes, %v, %v", len(v), ok, err)
	}
	// Evicted to make room: the file goes.
	for i := 20; i < 23; i++ {
		if err := db2.Put(name(i), big(1)); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := db2.Evictions(); n == 0 {
		t.Fatal("nothing evicted")
	}
	if files := blobFiles(t, dir); int64(len(files)) > (db2.Size()+objOverhead)/blobThreshold {
		t.Errorf("%d blob files for %d bytes held: evicted files stayed", len(files), db2.Size())
	}
}

// What a crash leaves is cleaned at the next open, and nothing else: a
// file in blobs/tmp of an upload never committed goes, one whose commit
// was done is put in place; a blob file whose deletion was recorded (g)
// goes; an object whose file is missing is a read error (the caller's
// miss), and deleted by it.
func TestBlobCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, Options{Dir: dir, Sync: true})
	value := bytes.Repeat([]byte("v"), blobThreshold+10)
	for i := range 3 {
		if err := db.Put(name(i), value); err != nil {
			t.Fatal(err)
		}
	}
	files := blobFiles(t, dir)
	db.Close()
	// A half-written upload, and a recorded deletion whose file stayed.
	tmp := filepath.Join(dir, blobsDir, "tmp", strings.Repeat("ab", 32)+"-0123456789abcdef")
	if err := os.WriteFile(tmp, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	orphan := strings.Repeat("cd", 32) + "-0123456789abcdef"
	if err := os.MkdirAll(filepath.Join(dir, blobsDir, "cd"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, blobsDir, "cd", orphan), value, 0o600); err != nil {
		t.Fatal(err)
	}
	bo := badger.DefaultOptions(dir).WithLogger(nil)
	raw, err := badger.Open(bo)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Update(func(txn *badger.Txn) error { return txn.Set([]byte("gcd/"+orphan), nil) }); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	// One object's file lost; another's still in tmp, its commit done
	// (the crash came before the rename).
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	second := files[1]
	var owner []byte
	for i := range 3 {
		var b *blob
		db2view(t, dir, func(txn *badger.Txn) { b, _ = blobOf(txn, name(i)) })
		if b != nil && strings.HasSuffix(second, filepath.FromSlash(b.file)) {
			owner = name(i)
		}
	}
	if owner == nil {
		t.Fatal("no object owns the second blob file")
	}
	if err := os.Rename(second, filepath.Join(dir, blobsDir, "tmp", filepath.Base(second)+"."+fmt.Sprintf("%x", owner))); err != nil {
		t.Fatal(err)
	}
	db2 := mustOpen(t, Options{Dir: dir, Sync: true})
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the half-written upload stayed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, blobsDir, "cd", orphan)); !os.IsNotExist(err) {
		t.Errorf("the recorded deletion's file stayed: %v", err)
	}
	lost := 0
	for i := range 3 {
		v, ok, err := db2.Get(name(i))
		switch {
		case err != nil:
			lost++
			if err := db2.Delete(name(i)); err != nil {
				t.Fatal(err)
			}
		case !ok || !bytes.Equal(v, value):
			t.Errorf("object %d: %v, %d bytes", i, ok, len(v))
		}
	}
	if lost != 1 || db2.Count() != 2 {
		t.Errorf("%d objects read as damaged (want 1), %d left (want 2)", lost, db2.Count())
	}
	if _, err := os.Stat(second); err != nil {
		t.Errorf("the committed blob left in tmp was not put in place: %v", err)
	}
}

// db2view runs f in a read transaction of the closed store in dir.
func db2view(t *testing.T, dir string, f func(txn *badger.Txn)) {
	t.Helper()
	raw, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_ = raw.View(func(txn *badger.Txn) error { f(txn); return nil })
}
