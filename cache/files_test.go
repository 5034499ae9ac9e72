package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestInPlaceEditKeepingSizeAndMtimeIsSeen: an edit that keeps size,
// mtime and inode (cp -p over the file, rsync --inplace, touch -r) moves
// the ctime, which the index compares, as git's does.
func TestInPlaceEditKeepingSizeAndMtimeIsSeen(t *testing.T) {
	dir := t.TempDir()
	var warns []string
	s := mustOpen(t, filepath.Join(dir, "cache"), &warns)
	f := filepath.Join(dir, "big.yaml")
	old := bytes.Repeat([]byte("a"), persistMin+10)
	if err := os.WriteFile(f, old, 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Now().Add(-time.Hour)
	os.Chtimes(f, mtime, mtime)
	time.Sleep(20 * time.Millisecond)

	ix := s.FileIndex()
	ix.window = 10 * time.Millisecond
	d1, ok := ix.Digest(f)
	if !ok || d1 != Digest(old) {
		t.Fatal("wrong first digest")
	}
	ix.Save("")
	// A later run answers from the stored record without reading.
	ix = s.FileIndex()
	ix.window = 10 * time.Millisecond
	if d, _ := ix.Digest(f); d != d1 {
		t.Fatal("wrong digest from the record")
	}
	if _, fromIndex := ix.Counts(); fromIndex != 1 {
		t.Fatalf("the record was not used (%d answers from the index)", fromIndex)
	}

	editInPlace(t, f, 'b', mtime)
	fresh := s.FileIndex()
	fresh.window = 10 * time.Millisecond
	want := append([]byte("b"), old[1:]...)
	if d, _ := fresh.Digest(f); d != Digest(want) {
		t.Error("an in-place edit keeping size and mtime was not seen")
	}
}

func TestDamagedStatRecordIsIgnored(t *testing.T) {
	dir := t.TempDir()
	var warns []string
	s := mustOpen(t, filepath.Join(dir, "cache"), &warns)
	f := filepath.Join(dir, "big")
	os.WriteFile(f, make([]byte, persistMin), 0o644)
	ix := s.FileIndex()
	ix.Digest(f)
	ix.Save("")
	rec := s.name(statName(f), sufStat)
	for _, damage := range []func(){
		func() { os.Truncate(rec, 0) },
		func() { os.Truncate(rec, 20) },
		func() { flip(rec, 10) },
	} {
		damage()
		if d, ok := s.FileIndex().Digest(f); !ok || d != Digest(make([]byte, persistMin)) {
			t.Error("a damaged record changed a digest")
		}
	}
}

// TestRememberDirGivesTheListingDigest checks that a directory recorded
// from a listing already read has the digest a fresh listing gives, and
// that a file added afterwards changes it.
func TestRememberDirGivesTheListingDigest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("a"), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(dir, old, old)
	time.Sleep(20 * time.Millisecond) // past the racy window set below (ctime is now)

	fresh, _ := LoadFileIndex("")
	want, ok := fresh.Digest(dir)
	if !ok {
		t.Fatal("no digest for a directory")
	}
	ix, _ := LoadFileIndex("")
	ix.window = 10 * time.Millisecond
	start := time.Now()
	fi, _ := os.Lstat(dir)
	entries, _ := os.ReadDir(dir)
	ix.RememberDir(dir, fi, entries, start)
	if got, _ := ix.Digest(dir); got != want {
		t.Errorf("remembered digest %v, a listing gives %v", got, want)
	}
	if _, fromIndex := ix.Counts(); fromIndex != 1 {
		t.Errorf("the digest was not taken from the remembered listing (%d from the index)", fromIndex)
	}
	os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("b"), 0o644)
	if got, _ := ix.Digest(dir); got == want {
		t.Error("a file added to the directory did not change its digest")
	}
}

// TestKnownIsWhatTheRunRead: Known gives the digest of the bytes this run
// read, even when the file changed since (a record pairs the output with
// those bytes; the next run's Digest sees the change), and nothing for a
// file the run did not read, or read only in an earlier run (an index an
// embedder keeps across builds).
func TestKnownIsWhatTheRunRead(t *testing.T) {
	dir := t.TempDir()
	ix, _ := LoadFileIndex("")
	f := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(f, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, ok := ix.Known(f, start); ok {
		t.Fatal("Known answered for a file the run did not read")
	}
	ix.Record(f, []byte("one"), fi)
	if err := os.WriteFile(f, []byte("two, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, ok := ix.Known(f, start); !ok || d != Digest([]byte("one")) {
		t.Fatalf("Known = %x, %v; want the digest of what was read", d, ok)
	}
	if _, ok := ix.Known(f, time.Now()); ok {
		t.Error("Known answered with a digest recorded before the run it was asked for began")
	}
	if d, ok := ix.Digest(f); !ok || d != Digest([]byte("two, longer")) {
		t.Fatalf("Digest after the change = %x, %v; want the new content's", d, ok)
	}
}

// A root's input stamped with its stat (FileIndex.Stamp) and kept in its
// record is checked by a later run with a stat, small file or directory,
// without reading it; an edit in place that keeps size and mtime, a new
// entry in the directory, or an input whose stat was never known, is read
// again.
func TestStampedInputIsCheckedByStat(t *testing.T) {
	dir := t.TempDir()
	var warns []string
	s := mustOpen(t, filepath.Join(dir, "cache"), &warns)
	f := filepath.Join(dir, "small.yaml")
	sub := filepath.Join(dir, "base")
	if err := os.WriteFile(f, []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	mtime := time.Now().Add(-time.Hour)
	os.Chtimes(f, mtime, mtime)
	time.Sleep(20 * time.Millisecond) // past the racy window set below (ctime is now)

	build := s.FileIndex()
	build.window = 10 * time.Millisecond
	var inputs []Input
	for _, p := range []string{f, sub} {
		d, ok := build.Digest(p)
		if !ok {
			t.Fatal(p)
		}
		inputs = append(inputs, build.Stamp(Input{Path: p, Real: p, Digest: d}))
	}
	unstamped := Input{Path: f, Real: f, Digest: inputs[0].Digest}
	// A file read outside the index, stamped with the stat taken before
	// the read (StampRead), is as good.
	statAt := time.Now()
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f)
	read := StampRead(Input{Path: f, Real: f, Digest: Digest(data)}, fi, len(data), statAt)
	// Kept in a record (Encoder.Inputs) and read back.
	w := NewEncoder(1)
	w.Inputs(inputs)
	r := NewDecoder(w.Bytes(), 1)
	rec := struct{ Inputs []Input }{r.Inputs()}
	if !r.Done() {
		t.Fatal("the inputs did not read back")
	}

	var fromIndex int
	check := func(in []Input) (bool, int) {
		ix := s.FileIndex()
		ix.window = 10 * time.Millisecond
		same := NewInputChecker(ix).Unchanged(in)
		var hashed int
		hashed, fromIndex = ix.Counts()
		return same, hashed
	}
	if same, hashed := check(rec.Inputs); !same || hashed != 0 || fromIndex != 2 {
		t.Errorf("stamped inputs: unchanged %v, %d read and hashed (want none), %d from the index (want 2)", same, hashed, fromIndex)
	}
	if same, hashed := check([]Input{read}); !same || hashed != 0 || fromIndex != 1 {
		t.Errorf("an input stamped by StampRead: unchanged %v, %d read and hashed (want none), %d from the index (want 1)", same, hashed, fromIndex)
	}
	if same, hashed := check([]Input{unstamped}); !same || hashed != 1 {
		t.Errorf("an input without its stat: unchanged %v, %d read and hashed (want 1)", same, hashed)
	}
	editInPlace(t, f, 'K', mtime)
	if same, _ := check(rec.Inputs[:1]); same {
		t.Error("an in-place edit keeping size and mtime was not seen")
	}
	if err := os.WriteFile(filepath.Join(sub, "new.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if same, _ := check(rec.Inputs[1:]); same {
		t.Error("a new file in a directory was not seen")
	}
}

// editInPlace writes c over the first byte of the file at path, keeping
// its size and inode, sets its modification time back to mtime (as cp -p,
// rsync --inplace and tar -x do) and waits out the tests' racy window.
func editInPlace(t *testing.T, path string, c byte, mtime time.Time) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteAt([]byte{c}, 0); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
}
