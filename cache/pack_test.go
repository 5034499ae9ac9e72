package cache

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// openPacked opens a store that writes packs, failing the test on a
// warning.
func openPacked(t *testing.T, dir string) *Store {
	t.Helper()
	s := Open(context.Background(), Options{Dir: dir, Pack: true, Warn: func(m string) { t.Errorf("warning: %s", m) }})
	if s == nil {
		t.Fatal("cache did not open")
	}
	if !packsSupported {
		t.Skip("packs are written on linux and darwin only")
	}
	return s
}

// value is the test value stored under key(i): small ones inline, every
// seventh larger than inlineMax (a content file of its own).
func value(i int) []byte {
	v := []byte(fmt.Sprintf("value %d\n", i))
	if i%7 == 0 {
		v = bytes.Repeat(v, inlineMax/len(v)+2)
	}
	return v
}

// files lists the regular files under dir/v2 and counts their distinct
// inodes.
func files(t *testing.T, dir string) (names []string, inodes int) {
	t.Helper()
	seen := map[[2]uint64]bool{}
	err := filepath.WalkDir(filepath.Join(dir, layoutDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || filepath.Dir(filepath.Dir(p)) != filepath.Join(dir, layoutDir) {
			return err
		}
		names = append(names, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		dev, ino, _, _ := linkCount(fi)
		seen[[2]uint64{dev, ino}] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names, len(seen)
}

func TestPackedEntriesReadBack(t *testing.T) {
	dir := t.TempDir()
	s := openPacked(t, dir)
	const n = 2*packMaxEntries + 100 // three packs at least
	// Written from several goroutines, read back while packs are written.
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				s.Put(key(fmt.Sprint(i)), value(i))
				if v, ok := s.Get(key(fmt.Sprint(i))); !ok || !bytes.Equal(v, value(i)) {
					t.Errorf("right after Put, Get(%d) = %d bytes, %v", i, len(v), ok)
				}
			}
		}(w)
	}
	wg.Wait()
	rec := key("record")
	recName := hex.EncodeToString(rec[:])
	s.WriteRecord(recName, []byte("the record"))
	// This process reads what waits to be written.
	for _, i := range []int{0, 1, n - 1} {
		if v, ok := s.Get(key(fmt.Sprint(i))); !ok || !bytes.Equal(v, value(i)) {
			t.Fatalf("before Close, Get(%d) = %d bytes, %v", i, len(v), ok)
		}
	}
	if r, ok := s.Record(recName); !ok || string(r) != "the record" {
		t.Fatalf("before Close, the record = %q, %v", r, ok)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	names, inodes := files(t, dir)
	// n entries, n/7 content files and one record, in a handful of files.
	if len(names) < n+n/7 || inodes > 8 {
		t.Errorf("%d names in %d files; want %d names in a few packs", len(names), inodes, n+n/7+1)
	}
	// Another process finds every entry, and the record.
	other := openPacked(t, dir)
	defer other.Close()
	for i := 0; i < n; i++ {
		if v, ok := other.Get(key(fmt.Sprint(i))); !ok || !bytes.Equal(v, value(i)) {
			t.Fatalf("after Close, Get(%d) = %d bytes, %v", i, len(v), ok)
		}
		if !other.Has(key(fmt.Sprint(i))) {
			t.Fatalf("after Close, Has(%d) is false", i)
		}
	}
	if r, ok := other.Record(recName); !ok || string(r) != "the record" {
		t.Errorf("after Close, the record = %q, %v", r, ok)
	}
	if v, err := other.Verify(); err != nil || v.Good != n || v.Corrupt+v.Incomplete != 0 {
		t.Errorf("Verify = %+v, %v; want %d good", v, err, n)
	}
	if info, err := other.Info(); err != nil || info.Entries != n {
		t.Errorf("Info = %+v, %v; want %d entries", info, err, n)
	}
}

// The last flush splits what waits into packs written side by side, one
// per CPU, each of at least packSplitMin members; every member is found.
func TestCloseWritesPacksSideBySide(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	dir := t.TempDir()
	s := openPacked(t, dir)
	const n = 4*packSplitMin + 10
	for i := 0; i < n; i++ {
		s.Put(key(fmt.Sprint(i)), []byte(fmt.Sprintf("value %d\n", i)))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if names, inodes := files(t, dir); len(names) != n || inodes != 4 {
		t.Errorf("%d names in %d files; want %d in 4 packs", len(names), inodes, n)
	}
	other := openPacked(t, dir)
	defer other.Close()
	for i := 0; i < n; i++ {
		if v, ok := other.Get(key(fmt.Sprint(i))); !ok || string(v) != fmt.Sprintf("value %d\n", i) {
			t.Fatalf("after Close, Get(%d) = %q, %v", i, v, ok)
		}
	}
}

// A pack is counted once, as du counts it, and the prune frees it.
func TestPackedSizeAndPrune(t *testing.T) {
	dir := t.TempDir()
	s := openPacked(t, dir)
	for i := 0; i < 300; i++ {
		s.Put(key(fmt.Sprint(i)), value(i))
	}
	s.Close()
	s = openPacked(t, dir)
	defer s.Close()
	size := s.Size()
	var raw int64
	for i := 0; i < 300; i++ {
		raw += int64(len(value(i)) + entrySize)
	}
	// One pack of ~raw bytes plus directories; counting every name would
	// give 300 times that.
	if size < raw || size > 2*raw+300*4096 {
		t.Errorf("Size = %d; want about %d (the pack counted once)", size, raw)
	}
	if _, err := s.Prune(0); err != nil {
		t.Fatal(err)
	}
	if names, _ := files(t, dir); len(names) != 0 {
		t.Errorf("after Prune(0), %d names left: %v", len(names), names[:min(3, len(names))])
	}
}

// Damage to a pack is a miss for each of its members, never a wrong value
// or an error; a new Put replaces the damaged name without touching the
// other names; Clear removes everything.
func TestDamagedPackIsAMiss(t *testing.T) {
	dir := t.TempDir()
	s := openPacked(t, dir)
	for i := 0; i < 20; i++ {
		s.Put(key(fmt.Sprint(i)), value(i+1)) // all inline
	}
	s.Close()
	first, _ := entryFiles(s, key("0"), nil)
	data, err := os.ReadFile(first)
	if err != nil || !bytes.HasPrefix(data, []byte(packMagic)) {
		t.Fatalf("entry 0 is not a name of a pack: %v", err)
	}
	for _, damage := range []struct {
		name string
		data []byte
	}{
		{"truncated in the index", data[:packHeaderSize+10]},
		{"truncated in the members", data[:len(data)-5]},
		{"a count past the index", append(append([]byte(packMagic), 0xff, 0xff, 0, 0, 0, 0, 0, 0), data[packHeaderSize:]...)},
		{"members swapped", swapTail(data)},
		{"zero length", nil},
	} {
		t.Run(damage.name, func(t *testing.T) {
			// Writing through one name changes the file every name shares.
			if err := os.WriteFile(first, damage.data, 0o600); err != nil {
				t.Fatal(err)
			}
			r := openPacked(t, dir)
			defer r.Close()
			for i := 0; i < 20; i++ {
				if v, ok := r.Get(key(fmt.Sprint(i))); ok && !bytes.Equal(v, value(i+1)) {
					t.Fatalf("entry %d: wrong value %q from a damaged pack", i, v)
				}
			}
			if _, err := r.Verify(); err != nil {
				t.Errorf("Verify: %v", err)
			}
		})
	}
	// Restore the pack, then damage one entry by writing it anew through
	// a store without packs: the others keep their values.
	if err := os.WriteFile(first, data, 0o600); err != nil {
		t.Fatal(err)
	}
	plain := Open(context.Background(), Options{Dir: dir})
	plain.Put(key("0"), []byte("new value"))
	plain.Close()
	r := openPacked(t, dir)
	if v, ok := r.Get(key("0")); !ok || string(v) != "new value" {
		t.Errorf("the entry written again = %q, %v", v, ok)
	}
	for i := 1; i < 20; i++ {
		if v, ok := r.Get(key(fmt.Sprint(i))); !ok || !bytes.Equal(v, value(i+1)) {
			t.Fatalf("entry %d after its neighbour was written again: %q, %v", i, v, ok)
		}
	}
	r.Close()
	if _, left, err := Clear(dir); err != nil || len(left) != 0 {
		t.Fatalf("Clear: left %v, %v", left, err)
	}
	if names, _ := files(t, dir); len(names) != 0 {
		t.Errorf("after Clear, %d names left", len(names))
	}
}

// swapTail returns a pack whose last two members' bytes are exchanged:
// the index points at the wrong bytes, which fail their own checks.
func swapTail(p []byte) []byte {
	q := append([]byte(nil), p...)
	half := (len(q) - packHeaderSize) / 2
	tail := q[len(q)-half:]
	mid := q[len(q)-2*half : len(q)-half]
	tmp := append([]byte(nil), tail...)
	copy(tail, mid)
	copy(mid, tmp)
	return q
}

// A file planted with the pack magic, or a pack that does not hold the
// name it is found under, is a miss.
func TestForeignPackIsAMiss(t *testing.T) {
	dir := t.TempDir()
	s := openPacked(t, dir)
	for i := 0; i < 3; i++ {
		s.Put(key(fmt.Sprint(i)), value(i+1))
	}
	s.Close()
	p0, _ := entryFiles(s, key("0"), nil)
	// Key 9's name linked to the pack of keys 0-2.
	p9, _ := entryFiles(s, key("9"), nil)
	os.MkdirAll(filepath.Dir(p9), 0o700)
	if err := os.Link(p0, p9); err != nil {
		t.Fatal(err)
	}
	r := openPacked(t, dir)
	defer r.Close()
	if _, ok := r.Get(key("9")); ok {
		t.Error("a pack that does not hold the name hit")
	}
	if err := os.Remove(p9); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p9, []byte(packMagic+strings.Repeat("\xff", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Get(key("9")); ok {
		t.Error("a garbage pack hit")
	}
}

// A pack linked under names that already exist (another run stored other
// bytes under the same keys) replaces them: every name reads the new
// value, none is left missing, and no temporary name is left behind.
func TestPackReplacesExistingNames(t *testing.T) {
	dir := t.TempDir()
	const n = packMaxEntries + 50
	for round, suffix := range []string{"first", "second"} {
		s := openPacked(t, dir)
		for i := 0; i < n; i++ {
			s.Put(key(fmt.Sprint(i)), []byte(fmt.Sprintf("%s %d\n", suffix, i)))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		r := openPacked(t, dir)
		for i := 0; i < n; i++ {
			if v, ok := r.Get(key(fmt.Sprint(i))); !ok || string(v) != fmt.Sprintf("%s %d\n", suffix, i) {
				t.Fatalf("round %d: Get(%d) = %q, %v", round, i, v, ok)
			}
		}
		r.Close()
	}
	names, _ := files(t, dir)
	for _, p := range names {
		if base := filepath.Base(p); strings.HasPrefix(base, tmpPrefix) || strings.HasPrefix(base, packPrefix) {
			t.Errorf("a temporary file is left: %s", base)
		}
	}
}

// A batch that fills is written in the background while the build goes
// on; Flush returns only once it is on disk, so another process finds
// every entry.
func TestFlushWaitsForBackgroundPacks(t *testing.T) {
	dir := t.TempDir()
	s := openPacked(t, dir)
	defer s.Close()
	for i := range packMaxEntries { // the last Put fills the batch
		s.Put(key(fmt.Sprint(i)), []byte(fmt.Sprintf("value %d\n", i)))
	}
	s.Flush()
	if names, _ := files(t, dir); len(names) != packMaxEntries {
		t.Fatalf("after Flush, %d names on disk, want %d", len(names), packMaxEntries)
	}
	other := openPacked(t, dir)
	defer other.Close()
	for i := range packMaxEntries {
		if v, ok := other.Get(key(fmt.Sprint(i))); !ok || string(v) != fmt.Sprintf("value %d\n", i) {
			t.Fatalf("another store: Get(%d) = %q, %v", i, v, ok)
		}
	}
}

// Pruning frees packs whole, oldest first: two runs' packs, and a bound
// between what the newer takes and what both take, leave the newer run's
// entries and free the older's, in one call (removing a pack's names one
// at a time freed nothing until the last, so the bound was missed).
func TestPruneFreesOldPacksWhole(t *testing.T) {
	dir := t.TempDir()
	var one int64 // what the first run's cache takes
	for run := 0; run < 2; run++ {
		s := openPacked(t, dir)
		for i := 0; i < 300; i++ {
			s.Put(key(fmt.Sprint(run, i)), []byte(fmt.Sprintf("a value of run %d, entry %d: all inline, all in packs\n", run, i)))
		}
		s.Close()
		if run == 0 {
			one = openPacked(t, dir).Size()
			// The first run's files are older.
			old := time.Now().Add(-48 * time.Hour)
			names, _ := files(t, dir)
			for _, n := range names {
				_ = os.Chtimes(n, old, old)
			}
		}
	}
	s := openPacked(t, dir)
	defer s.Close()
	both := s.Size()
	target := one + one/10 // room for one run, not two
	if target >= both {
		t.Fatalf("one run takes %d, both %d", one, both)
	}
	if _, err := s.Prune(target); err != nil {
		t.Fatal(err)
	}
	if size := s.Size(); size > target {
		t.Errorf("after Prune(%d), the directory takes %d (both runs took %d)", target, size, both)
	}
	for i := 0; i < 300; i++ {
		if _, ok := s.Get(key(fmt.Sprint(1, i))); !ok {
			t.Fatalf("the newer run's entry %d was pruned", i)
		}
		if _, ok := s.Get(key(fmt.Sprint(0, i))); ok {
			t.Fatalf("the older run's entry %d survived", i)
		}
	}
}

// A bound just under what one run's packs take is met: the oldest pack
// goes whole. (Taking a pack's names one at a time freed nothing, and the
// prune gave up over the bound with every pack still there.)
func TestPruneJustUnderOnePack(t *testing.T) {
	dir := t.TempDir()
	s := openPacked(t, dir)
	for i := 0; i < 300; i++ {
		s.Put(key(fmt.Sprint(i)), []byte(fmt.Sprintf("entry %d, inline\n", i)))
	}
	s.Close()
	s = openPacked(t, dir)
	defer s.Close()
	size := s.Size()
	if _, err := s.Prune(size - 1); err != nil {
		t.Fatal(err)
	}
	if after := s.Size(); after > size-1 {
		t.Errorf("after Prune(%d) the directory takes %d", size-1, after)
	}
}
