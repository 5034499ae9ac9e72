package cache

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// open opens a store in dir, collecting warnings.
func open(t *testing.T, dir string, warn *[]string) *Store {
	t.Helper()
	return Open(context.Background(), Options{Dir: dir, Warn: func(m string) { *warn = append(*warn, m) }})
}

func mustOpen(t *testing.T, dir string, warn *[]string) *Store {
	t.Helper()
	s := open(t, dir, warn)
	if s == nil {
		t.Fatalf("cache did not open: %v", *warn)
	}
	return s
}

func key(s string) Key { return NewKey("v1", "test").String(s).Sum() }

func TestPutGetVerified(t *testing.T) {
	var warns []string
	s := mustOpen(t, t.TempDir(), &warns)
	defer s.Close()
	k := key("input")
	if _, ok := s.Get(k); ok {
		t.Fatal("hit on an empty cache")
	}
	s.Put(k, []byte("value"))
	if v, ok := s.Get(k); !ok || string(v) != "value" {
		t.Fatalf("Get = %q, %v; want the stored value", v, ok)
	}
	if !s.Has(k) {
		t.Error("Has is false for a stored entry")
	}
	if _, ok := s.Get(NewKey("v2", "test").String("input").Sum()); ok {
		t.Error("a key from another version hit")
	}
	// A second store on the same directory (another process) sees it.
	other := mustOpen(t, s.Dir(), &warns)
	if v, ok := other.Get(k); !ok || string(v) != "value" {
		t.Errorf("a second store got %q, %v", v, ok)
	}
	// A value stored with its digest reads back, small and large, with
	// the digest it was stored with.
	for _, v := range [][]byte{[]byte("small"), bytes.Repeat([]byte("large "), 1000)} {
		k := key(string(v))
		s.PutDigest(k, v, Digest(v), false)
		got, d, ok := other.GetDigest(k)
		if !ok || !bytes.Equal(got, v) || d != Digest(v) {
			t.Errorf("GetDigest after PutDigest of %d bytes = %d bytes, %v, %v", len(v), len(got), d, ok)
		}
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
}

// entryFiles returns the paths of k's entry line and content.
func entryFiles(s *Store, k Key, value []byte) (action, data string) {
	d := Digest(value)
	return s.name(fmt.Sprintf("%x", k[:]), sufAction), s.name(fmt.Sprintf("%x", d[:]), sufData)
}

// TestDamagedEntriesAreMisses damages entries in every way a crash, a
// full disk or a stray program can, and expects a silent miss each time,
// then a working Put over the damage.
func TestDamagedEntriesAreMisses(t *testing.T) {
	for _, size := range []int{1400, inlineMax + 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) { testDamage(t, bytes.Repeat([]byte("resource data\n"), size/14+1)) })
	}
}

func testDamage(t *testing.T, value []byte) {
	inline := len(value) <= inlineMax
	damage := map[string]func(action, data string) error{
		"truncated content":    func(_, d string) error { return os.Truncate(d, entrySize+10) },
		"zero-length content":  func(_, d string) error { return os.Truncate(d, 0) },
		"missing content":      func(_, d string) error { return os.Remove(d) },
		"flipped content byte": func(_, d string) error { return flip(d, entrySize+100) },
		"zero-length entry":    func(a, _ string) error { return os.Truncate(a, 0) },
		"truncated entry":      func(a, _ string) error { return os.Truncate(a, entrySize-1) },
		"garbage entry":        func(a, _ string) error { return os.WriteFile(a, bytes.Repeat([]byte{0xff}, entrySize), 0o600) },
		"flipped entry digit":  func(a, _ string) error { return flip(a, 140) },
		"another key's entry": func(a, _ string) error {
			return os.WriteFile(a, formatEntry(key("other"), Digest(value), int64(len(value)), 1, false), 0o600)
		},
		"bad flag": func(a, _ string) error { return flipTo(a, entrySize-2, 'x') },
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			var warns []string
			s := mustOpen(t, t.TempDir(), &warns)
			k := key(name)
			s.Put(k, value)
			a, d := entryFiles(s, k, value)
			if inline {
				d = a // the content follows the line
			}
			if err := f(a, d); err != nil {
				t.Fatal(err)
			}
			if v, ok := s.Get(k); ok {
				t.Fatalf("damaged entry returned %d bytes", len(v))
			}
			if s.Has(k) && name != "flipped content byte" && !(inline && strings.Contains(name, "entry")) {
				t.Errorf("Has is true for a damaged entry")
			}
			if r, err := s.Verify(); err != nil || r.Good != 0 || (r.Corrupt+r.Incomplete != 1 && !(inline && name == "missing content")) {
				t.Errorf("Verify found %+v (%v), want one bad entry", r, err)
			}
			s.Put(k, value)
			if v, ok := s.Get(k); !ok || !bytes.Equal(v, value) {
				t.Errorf("Put over the damage did not repair the entry")
			}
			if len(warns) != 0 {
				t.Errorf("a damaged entry warned: %v", warns)
			}
		})
	}
}

func flip(path string, at int64) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b[at] ^= 1
	return os.WriteFile(path, b, 0o600)
}

func flipTo(path string, at int, c byte) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b[at] = c
	return os.WriteFile(path, b, 0o600)
}

// TestForeignDirectoryIsLeftAlone: a directory holding files kpipe did
// not create (a Python project's MANIFEST beside notes.txt and src/) is
// not used, not emptied, and named in one warning; `cache clear` refuses
// it.
func TestForeignDirectoryIsLeftAlone(t *testing.T) {
	for name, files := range map[string][]string{
		"project":          {"MANIFEST", "notes.txt", "src/main.py"},
		"garbage MANIFEST": {"MANIFEST"},
		"truncated table":  {"000001.sst"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range files {
				p := filepath.Join(dir, f)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte("garbage, not a badger manifest"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var warns []string
			if s := open(t, dir, &warns); s != nil {
				t.Fatal("a directory with foreign files was used as a cache")
			}
			if len(warns) != 1 || !strings.Contains(warns[0], dir) || !strings.Contains(warns[0], "did not create") || !strings.Contains(warns[0], "building without a cache") {
				t.Errorf("want one warning naming %s and the cause, got %q", dir, warns)
			}
			if _, _, err := Clear(dir); err == nil {
				t.Error("Clear cleared a directory kpipe does not own")
			}
			for _, f := range files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s was deleted: %v", f, err)
				}
			}
			// A nil store is a working, empty cache.
			var s *Store
			s.Put(Key{}, []byte("x"))
			if _, ok := s.Get(Key{}); ok {
				t.Error("nil store returned a value")
			}
		})
	}
}

// TestFirstFormatIsAdopted: a cache directory of the first format
// (Badger's files, damaged: a truncated table, a zero-length value log, a
// garbage MANIFEST) is recognised as kpipe's, its files removed, and used.
func TestFirstFormatIsAdopted(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"MANIFEST": "garbage", "KEYREGISTRY": "k", "000001.sst": "trunc", "000002.sst": "",
		"000001.vlog": "", "files.idx": "x", "roots-0123.idx": "y",
	} {
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	var warns []string
	s := mustOpen(t, dir, &warns)
	s.Put(key("a"), []byte("b"))
	if _, ok := s.Get(key("a")); !ok {
		t.Error("the adopted cache does not store")
	}
	for _, n := range []string{"MANIFEST", "000001.sst", "000001.vlog", "files.idx"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("old file %s left behind", n)
		}
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
}

// TestStrayFilesInACacheAreKept: files that appear in a kpipe cache
// directory later (including names like Badger's) are never read as
// entries, never deleted by a trim or by Clear, and do not stop the cache.
func TestStrayFilesInACacheAreKept(t *testing.T) {
	dir := t.TempDir()
	var warns []string
	s := mustOpen(t, dir, &warns)
	for i := 0; i < 20; i++ {
		s.Put(key(fmt.Sprint(i)), bytes.Repeat([]byte{byte(i)}, 5000))
	}
	stray := []string{"notes.txt", filepath.Join("v2", "ab", "mine.txt"), filepath.Join("v2", "README")}
	for _, f := range stray {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o700)
		os.WriteFile(filepath.Join(dir, f), []byte("user data"), 0o644)
	}
	s = mustOpen(t, dir, &warns)
	if _, ok := s.Get(key("3")); !ok {
		t.Error("the cache stopped working")
	}
	if _, err := s.Prune(0); err != nil {
		t.Fatal(err)
	}
	removed, left, err := Clear(dir)
	if err != nil {
		t.Fatal(err)
	}
	if removed == 0 || len(left) != len(stray) {
		t.Errorf("Clear removed %d files and left %v; want the %d stray files left", removed, left, len(stray))
	}
	for _, f := range stray {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s was deleted", f)
		}
	}
	if _, ok := s.Get(key("3")); ok {
		t.Error("an entry survived Clear")
	}
}

// TestClearWorksOnADamagedCache: Clear needs no working store.
func TestClearWorksOnADamagedCache(t *testing.T) {
	dir := t.TempDir()
	var warns []string
	s := mustOpen(t, dir, &warns)
	for i := 0; i < 10; i++ {
		s.Put(key(fmt.Sprint(i)), []byte(fmt.Sprint(i)))
	}
	filepath.Walk(filepath.Join(dir, "v2"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			os.Truncate(p, 3)
		}
		return nil
	})
	os.WriteFile(filepath.Join(dir, "v2", "trim.txt"), []byte("\x00\x01garbage"), 0o600)
	if _, _, err := Clear(dir); err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.Walk(filepath.Join(dir, "v2"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n++
		}
		return nil
	})
	if n != 0 {
		t.Errorf("%d files left after Clear", n)
	}
}

func TestPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	var warns []string
	s := mustOpen(t, dir, &warns)
	s.PutSensitive(key("secret"), []byte("password"))
	s.Put(key("plain"), []byte("data"))
	ix := s.FileIndex()
	big := filepath.Join(t.TempDir(), "big")
	os.WriteFile(big, make([]byte, persistMin), 0o644)
	ix.Digest(big)
	ix.Save("")
	rec := key("record")
	s.WriteRecord(hex.EncodeToString(rec[:]), []byte("a record"))
	s.RecordRun()
	s.Close()
	n := 0
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700 | os.ModeDir
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
		n++
		return nil
	})
	if n < 10 {
		t.Errorf("only %d files and directories checked", n)
	}
}

func TestSensitiveEntriesAreNotUploadable(t *testing.T) {
	var warns []string
	s := mustOpen(t, t.TempDir(), &warns)
	s.PutSensitive(key("secret"), []byte("password=hunter2"))
	s.Put(key("plain"), []byte("replicas: 3"))
	files, err := s.uploadable(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("uploadable files %v, want the plain entry", files)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte("hunter2")) {
			t.Errorf("%s, uploadable by default, holds the secret", f)
		}
	}
	if all, _ := s.uploadable(true); len(all) != 2 {
		t.Errorf("with sensitive entries: %d files, want 2", len(all))
	}
}

// du returns the directory's size as du counts it.
func du(t *testing.T, dir string) int64 {
	out, err := exec.Command("du", "-sk", dir).Output()
	if err != nil {
		t.Skipf("du: %v", err)
	}
	var kb int64
	fmt.Sscan(string(out), &kb)
	return kb << 10
}

func TestPruneBoundsTheDirectoryAsDuCountsIt(t *testing.T) {
	dir := t.TempDir()
	var warns []string
	s := mustOpen(t, dir, &warns)
	for i := 0; i < 100; i++ {
		s.Put(key(fmt.Sprint(i)), bytes.Repeat([]byte{byte(i)}, 10000+i))
	}
	before := du(t, dir)
	if got := s.Size(); got != before {
		t.Errorf("Size() = %d, du says %d", got, before)
	}
	const bound = 400 << 10
	n, err := s.Prune(bound)
	if err != nil {
		t.Fatal(err)
	}
	after := du(t, dir)
	if n == 0 || after > bound || s.Size() != after {
		t.Errorf("pruned %d entries: du %d -> %d, Size() %d; bound %d", n, before, after, s.Size(), bound)
	}
	// The most recently used entries stay.
	if _, ok := s.Get(key("99")); !ok {
		t.Error("the newest entry was pruned")
	}
}

func TestCloseKeepsTheBound(t *testing.T) {
	dir := t.TempDir()
	const bound = 300 << 10
	for run := 0; run < 5; run++ {
		s := Open(context.Background(), Options{Dir: dir, MaxSize: bound})
		for i := 0; i < 20; i++ {
			s.Put(key(fmt.Sprint(run, i)), bytes.Repeat([]byte{byte(i)}, 8000))
		}
		s.Close()
		if got := du(t, dir); got > bound {
			t.Fatalf("after run %d the cache takes %d bytes, bound %d", run, got, bound)
		}
	}
}

// TestTrimPrefersRecentlyUsed drives the clock: an entry read within the
// last days survives a prune that removes older ones.
func TestTrimPrefersRecentlyUsed(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Add(-72 * time.Hour)
	s := Open(context.Background(), Options{Dir: dir, Now: func() time.Time { return now }})
	for i := 0; i < 50; i++ {
		s.Put(key(fmt.Sprint(i)), bytes.Repeat([]byte{byte(i)}, 8000))
		a, d := entryFiles(s, key(fmt.Sprint(i)), bytes.Repeat([]byte{byte(i)}, 8000))
		os.Chtimes(a, now, now)
		os.Chtimes(d, now, now)
	}
	now = now.Add(48 * time.Hour)
	if _, ok := s.Get(key("0")); !ok {
		t.Fatal("miss")
	}
	if _, err := s.Prune(s.Size() / 2); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get(key("0")); !ok {
		t.Error("the entry used last was pruned")
	}
}

// TestReadOnlyDirectory: a cache on a read-only file system still serves
// what it holds, and warns once that it cannot store.
func TestReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	var warns []string
	s := mustOpen(t, dir, &warns)
	s.Put(key("kept"), []byte("value"))
	readOnly(t, dir)
	s = mustOpen(t, dir, &warns)
	if v, ok := s.Get(key("kept")); !ok || string(v) != "value" {
		t.Errorf("a read-only cache did not serve its entry")
	}
	for i := 0; i < 5; i++ {
		s.Put(key(fmt.Sprint(i)), []byte("new"))
		s.FileIndex().Save("")
	}
	s.RecordRun()
	s.Close()
	if len(warns) != 1 || !strings.Contains(warns[0], dir) {
		t.Errorf("want one warning naming %s, got %q", dir, warns)
	}
	// A read-only directory that is not yet a cache: one warning, no cache.
	empty := t.TempDir()
	readOnly(t, empty)
	warns = nil
	if s := open(t, empty, &warns); s != nil || len(warns) != 1 || !strings.Contains(warns[0], empty) {
		t.Errorf("read-only empty dir: store %v, warnings %q", s, warns)
	}
}

// TestFullDisk: on a full file system a store warns once, leaves no
// partial file, and keeps serving what it holds.
func TestFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a size-limited tmpfs")
	}
	dir := t.TempDir()
	mountTmpfs(t, dir, "256k")
	var warns []string
	s := mustOpen(t, dir, &warns)
	s.Put(key("small"), []byte("fits"))
	for i := 0; i < 100; i++ {
		s.Put(key(fmt.Sprint(i)), bytes.Repeat([]byte{byte(i)}, 20000))
	}
	s.RecordRun()
	s.Close()
	if len(warns) != 1 || !strings.Contains(warns[0], dir) || !strings.Contains(warns[0], "no space") {
		t.Errorf("want one warning naming %s and the full disk, got %q", dir, warns)
	}
	if v, ok := s.Get(key("small")); !ok || string(v) != "fits" {
		t.Error("a full cache stopped serving")
	}
	if r, _ := s.Verify(); r.Corrupt != 0 || r.Good == 0 {
		t.Errorf("after the disk filled: %+v", r)
	}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), tmpPrefix) {
			t.Errorf("partial file %s left", p)
		}
		return nil
	})
	// Another run on the full disk: still one warning, still hits.
	warns = nil
	s = mustOpen(t, dir, &warns)
	s.Put(key("more"), bytes.Repeat([]byte("x"), 300000))
	if _, ok := s.Get(key("small")); !ok || len(warns) != 1 {
		t.Errorf("second run: warnings %q", warns)
	}
	if _, _, err := Clear(dir); err != nil {
		t.Errorf("Clear on a full disk: %v", err)
	}

	// Small entries wait in a pack until the run records its statistics:
	// when the disk is full, the one warning says the entries were not
	// cached, not merely that the statistics were not recorded.
	dir = t.TempDir()
	mountTmpfs(t, dir, "256k")
	warns = nil
	s = Open(context.Background(), Options{Dir: dir, Pack: true, Warn: func(m string) { warns = append(warns, m) }})
	if s == nil {
		t.Fatalf("cache did not open: %q", warns)
	}
	// A cache of earlier runs (its layout directory there), without a
	// lastrun.json; then the disk fills.
	if err := os.MkdirAll(filepath.Join(dir, layoutDir), 0o700); err != nil {
		t.Fatal(err)
	}
	filler, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	filler.Write(make([]byte, 1<<20)) // to the end of the file system
	filler.Close()
	for i := 0; i < 10; i++ {
		s.Put(key(fmt.Sprint("pending ", i)), []byte("small"))
	}
	s.RecordRun()
	s.Close()
	if len(warns) != 1 || !strings.Contains(warns[0], "not cached") || !strings.Contains(warns[0], "no space") {
		t.Errorf("full disk, entries pending: want one warning that they are not cached, got %q", warns)
	}
}

// TestManyProcessesKilled runs writer-reader processes on one cache, kills
// some with SIGKILL mid-write, and then verifies every entry.
func TestManyProcessesKilled(t *testing.T) {
	if os.Getenv("KPIPE_CACHE_WORKER") != "" {
		t.Skip("worker")
	}
	dir := t.TempDir()
	var warns []string
	mustOpen(t, dir, &warns)
	var cmds []*exec.Cmd
	for w := 0; w < 8; w++ {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestWorker$")
		cmd.Env = append(os.Environ(), "KPIPE_CACHE_WORKER="+fmt.Sprint(w), "KPIPE_CACHE_DIR="+dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		defer func() {
			if out.Len() > 0 && strings.Contains(out.String(), "FAIL") {
				t.Errorf("worker: %s", out.String())
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	for _, c := range cmds[:3] {
		c.Process.Kill()
	}
	for i, c := range cmds {
		err := c.Wait()
		if i >= 3 && err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
	s := mustOpen(t, dir, &warns)
	r, err := s.Verify()
	if err != nil || r.Corrupt != 0 || r.Incomplete > 3 || r.Good < 5*workerEntries/2 {
		t.Errorf("after the kills: %+v (%v); want no corrupt entry and at most one incomplete per killed process", r, err)
	}
	// Every entry that is there holds the value its writer meant.
	for i := 0; i < workerEntries; i++ {
		if v, ok := s.Get(key(fmt.Sprint("shared", i))); ok && !bytes.Equal(v, workerValue(i)) {
			t.Errorf("entry %d holds a wrong value", i)
		}
	}
}

const workerEntries = 400

func workerValue(i int) []byte { return bytes.Repeat([]byte(fmt.Sprint(i, " ")), 500+i) }

// TestWorker is one process of TestManyProcessesKilled: it writes entries
// some other workers write too, and reads and checks theirs.
func TestWorker(t *testing.T) {
	w := os.Getenv("KPIPE_CACHE_WORKER")
	if w == "" {
		t.Skip("run by TestManyProcessesKilled")
	}
	var warns []string
	s := mustOpen(t, os.Getenv("KPIPE_CACHE_DIR"), &warns)
	for i := 0; i < workerEntries; i++ {
		s.Put(key(fmt.Sprint("shared", i)), workerValue(i))
		s.Put(key(fmt.Sprint(w, i)), workerValue(i))
		for j := i - 5; j < i; j++ {
			if v, ok := s.Get(key(fmt.Sprint("shared", j))); j >= 0 && (!ok || !bytes.Equal(v, workerValue(j))) {
				t.Fatalf("entry %d: hit %v, wrong value", j, ok)
			}
		}
	}
	s.Close()
	if len(warns) != 0 {
		t.Fatalf("warnings: %v", warns)
	}
}

// TestFreshStoreReadsItsOwnWrites checks the cold-run shortcut: a store
// that made its directory a cache looks up only the names it wrote, and
// finds them in a pack after a flush as before it.
func TestFreshStoreReadsItsOwnWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	var warns []string
	s := Open(context.Background(), Options{Dir: dir, Pack: true, Warn: func(m string) { warns = append(warns, m) }})
	if s == nil || !s.files.fresh {
		t.Fatalf("a new directory did not open as a fresh cache: %v", warns)
	}
	big := bytes.Repeat([]byte("x"), inlineMax+1)
	s.Put(key("small"), []byte("v"))
	s.Put(key("big"), big)
	for _, flushed := range []bool{false, true} {
		if v, ok := s.Get(key("small")); !ok || string(v) != "v" {
			t.Errorf("flushed=%v: Get(small) = %q, %v", flushed, v, ok)
		}
		if v, ok := s.Get(key("big")); !ok || !bytes.Equal(v, big) || !s.Has(key("big")) {
			t.Errorf("flushed=%v: Get(big) = %d bytes, %v", flushed, len(v), ok)
		}
		s.Flush()
	}
	// The next process finds the entries on disk.
	other := mustOpen(t, dir, &warns)
	if other.files.fresh {
		t.Error("a second open of the directory is fresh")
	}
	if v, ok := other.Get(key("big")); !ok || !bytes.Equal(v, big) {
		t.Errorf("second store: Get(big) = %d bytes, %v", len(v), ok)
	}
	// What another process writes meanwhile, the fresh store does not
	// look for (a miss, never a wrong value); any later store finds it.
	other.Put(key("theirs"), []byte("t"))
	if _, ok := s.Get(key("theirs")); ok {
		t.Error("the fresh store looked up a name it did not write")
	}
	if v, ok := mustOpen(t, dir, &warns).Get(key("theirs")); !ok || string(v) != "t" {
		t.Errorf("a later store: Get(theirs) = %q, %v", v, ok)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
}

// TestEntryLineFormat pins the entry line to the format earlier kpipes
// wrote with fmt ("v2 %x %x %20d %20d %c\n"), which readers of other
// versions parse.
func TestEntryLineFormat(t *testing.T) {
	k, d := key("k"), Digest([]byte("v"))
	for _, c := range []struct {
		size, t   int64
		sensitive bool
	}{{0, 0, false}, {5, 1764000000000000000, true}, {1 << 40, 1, false}, {123456789, -1, false}} {
		flag := byte(flagPlain)
		if c.sensitive {
			flag = flagSensitive
		}
		want := fmt.Sprintf("v2 %x %x %20d %20d %c\n", k[:], d[:], c.size, c.t, flag)
		if got := string(formatEntry(k, d, c.size, c.t, c.sensitive)); got != want || len(got) != entrySize {
			t.Errorf("entry line %q (%d bytes), want %q (%d)", got, len(got), want, entrySize)
		}
	}
}

// TestNewDirectoryOpenedByManyAtOnce: processes that open the same new
// cache directory at once all use it, without a warning: one may list the
// directory while another is writing the marker (its temporary file is
// there, the marker not yet), and a marker's temporary file left by a
// process that died is no foreign file either.
func TestNewDirectoryOpenedByManyAtOnce(t *testing.T) {
	for round := 0; round < 20; round++ {
		dir := filepath.Join(t.TempDir(), "cache")
		var wg sync.WaitGroup
		warns := make([][]string, 8)
		for i := range warns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if s := open(t, dir, &warns[i]); s != nil {
					s.Close()
				}
			}()
		}
		wg.Wait()
		for i, w := range warns {
			if len(w) > 0 {
				t.Fatalf("round %d, opener %d warned: %q", round, i, w)
			}
		}
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, tmpPrefix+markerName+"-0123456789ab"), []byte(marker[:10]), 0o600); err != nil {
		t.Fatal(err)
	}
	var warns []string
	s := mustOpen(t, dir, &warns)
	s.Close()
	if len(warns) > 0 {
		t.Errorf("a marker's leftover temporary file made the directory foreign: %q", warns)
	}
}

// lastrun.json is what encoding/json would write, and `kpipe cache stats`
// reads back the counts and the time of the run that wrote it.
func TestRunStatsJSON(t *testing.T) {
	for _, r := range []RunStats{
		{},
		{Time: time.Date(2026, 11, 27, 3, 4, 5, 600700800, time.UTC), Hits: 12, Misses: 3, Writes: 1 << 40},
		{Time: time.Date(1999, 1, 2, 0, 0, 0, 0, time.UTC), Hits: -1},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.appendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("appendJSON = %s, encoding/json %s", got, want)
		}
	}
	dir := t.TempDir()
	var warn []string
	now := time.Date(2026, 11, 27, 3, 4, 5, 6, time.UTC)
	s := Open(context.Background(), Options{Dir: dir, Now: func() time.Time { return now }, Warn: func(m string) { warn = append(warn, m) }})
	if r := runAndReadBack(t, s, dir, &warn, 1); !r.Time.Equal(now) || r.Hits+r.Misses == 0 || r.Writes == 0 {
		t.Errorf("last run read back as %+v", r)
	}
	if len(warn) > 0 {
		t.Errorf("warnings: %q", warn)
	}
}

// runAndReadBack puts an entry in s and gets it gets times, records the
// run and closes s; it returns the last run as a new store over dir reads
// it back.
func runAndReadBack(t *testing.T, s *Store, dir string, warn *[]string, gets int) RunStats {
	t.Helper()
	k := NewKey("v", "t").Sum()
	s.Put(k, []byte("x"))
	for range gets {
		s.Get(k)
	}
	s.RecordRun()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := mustOpen(t, dir, warn).Info()
	if err != nil || info.LastRun == nil {
		t.Fatalf("Info: %+v, %v", info, err)
	}
	return *info.LastRun
}

// A later run's counts replace the earlier run's, whether the new file is
// shorter or longer; a symlink put in lastrun.json's place is replaced,
// not followed.
func TestRecordRunReplacesTheLastRun(t *testing.T) {
	dir := t.TempDir()
	var warn []string
	run := func(hits int) RunStats {
		t.Helper()
		return runAndReadBack(t, mustOpen(t, dir, &warn), dir, &warn, hits)
	}
	for _, hits := range []int{1000, 1, 99} {
		if r := run(hits); r.Hits != int64(hits) {
			t.Errorf("after a run of %d hits, the last run read back as %+v", hits, r)
		}
	}
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	last := filepath.Join(dir, layoutDir, lastRun)
	if err := os.Remove(last); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, last); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if r := run(7); r.Hits != 7 {
		t.Errorf("after replacing a symlink, the last run read back as %+v", r)
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	if fi, err := os.Lstat(last); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("lastrun.json is not a file of its own: %v, %v", fi, err)
	}
	if len(warn) > 0 {
		t.Errorf("warnings: %q", warn)
	}
}

// A lastrun.json that cannot be replaced (a directory in its place) costs
// the run's statistics alone: one warning naming it, and the entries the
// run wrote are there for the next run.
func TestLastRunInTheWayKeepsEntries(t *testing.T) {
	dir := t.TempDir()
	var warn []string
	s := Open(context.Background(), Options{Dir: dir, Pack: true, Warn: func(m string) { warn = append(warn, m) }})
	if s == nil {
		t.Fatalf("cache did not open: %q", warn)
	}
	last := filepath.Join(dir, layoutDir, lastRun)
	if err := os.MkdirAll(filepath.Join(last, "in-the-way"), 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s.Put(key(fmt.Sprint(i)), []byte(fmt.Sprint("value ", i)))
	}
	s.RecordRun()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(warn) != 1 || !strings.Contains(warn[0], last) || !strings.Contains(warn[0], "statistics") {
		t.Errorf("want one warning about the statistics naming %s, got %q", last, warn)
	}
	s = mustOpen(t, dir, &warn)
	for i := range 3 {
		if v, ok := s.Get(key(fmt.Sprint(i))); !ok || string(v) != fmt.Sprint("value ", i) {
			t.Errorf("entry %d: %q, %v", i, v, ok)
		}
	}
	if fi, err := os.Stat(filepath.Join(last, "in-the-way")); err != nil || !fi.IsDir() {
		t.Errorf("what was in lastrun.json's place is gone: %v", err)
	}
}

// A run that wrote adds to trim.txt's estimate in place, and a shorter
// line written over a longer one leaves no tail behind it.
func TestTrimEstimateOverwritten(t *testing.T) {
	dir := t.TempDir()
	var warns []string
	s := mustOpen(t, dir, &warns)
	s.Put(key("0"), []byte("0"))
	s.Close()
	path := filepath.Join(dir, "v2", "trim.txt")
	old := fmt.Sprintf("%d %d\n", time.Now().UnixNano(), int64(1)<<40) // fresh, 1 TiB: nothing to measure
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, &warns)
	s.opts.MaxSize = 1 << 50
	s.Put(key("1"), []byte("1"))
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at, est, ok := parseEstimate(b)
	if !ok || strings.Count(string(b), "\n") != 1 || est <= int64(1)<<40 || at == 0 {
		t.Errorf("trim.txt = %q after a run that wrote, want one line with more than 1 TiB", b)
	}
	// Shorter: the estimate measured anew when the old line is stale.
	if err := os.WriteFile(path, []byte(fmt.Sprintf("%d %d\n", time.Now().Add(-48*time.Hour).UnixNano(), int64(1)<<40)), 0o600); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, &warns)
	s.Put(key("2"), []byte("2"))
	s.Close()
	b, _ = os.ReadFile(path)
	if _, est, ok := parseEstimate(b); !ok || strings.Count(string(b), "\n") != 1 || est >= int64(1)<<40 {
		t.Errorf("trim.txt = %q after a measured run, want one line with the cache's size", b)
	}
}
