package cache_test

import (
	"bytes"
	"encoding/hex"
	"fmt"

	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/cache/badger"
)

// opener opens a store of one backend in dir (nil when it cannot be
// used); warnings go to the test's list.
type opener func(t *testing.T, o Options) *Store

func openFiles(t *testing.T, o Options) *Store {
	o.KV = nil
	return Open(t.Context(), o)
}

func openFilesPacked(t *testing.T, o Options) *Store {
	o.KV, o.Pack = nil, true
	return Open(t.Context(), o)
}

// openBadger opens the key-value backend of package cache/badger through
// the seam an embedder uses (Options.KV).
func openBadger(t *testing.T, o Options) *Store {
	o.KV = badger.OpenKV
	return Open(t.Context(), o)
}

func key(s string) Key { return NewKey("v1", "test").String(s).Sum() }

// The store contract, one suite for every backend (as bazel-remote's and
// BuildKit's cache storage tests do): run it with -race. (Package
// cache_test, so that it reaches the Badger backend, which imports cache;
// export_test.go names what it needs of the store's insides.)
func TestStoreFiles(t *testing.T)       { runStoreTests(t, openFiles) }
func TestStoreFilesPacked(t *testing.T) { runStoreTests(t, openFilesPacked) }
func TestStoreBadger(t *testing.T)      { runStoreTests(t, openBadger) }

// suiteWarnings collects a store's warnings.
type suiteWarnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *suiteWarnings) add(m string) { w.mu.Lock(); w.msgs = append(w.msgs, m); w.mu.Unlock() }
func (w *suiteWarnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

func runStoreTests(t *testing.T, open opener) {
	mustOpen := func(t *testing.T, o Options) (*Store, *suiteWarnings) {
		t.Helper()
		w := &suiteWarnings{}
		o.Warn = w.add
		if o.Dir == "" {
			o.Dir = t.TempDir()
		}
		s := open(t, o)
		if s == nil {
			t.Fatalf("the store did not open: %v", w.list())
		}
		return s, w
	}
	reopen := func(t *testing.T, s *Store) *Store {
		t.Helper()
		o := s.Options()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		again := open(t, o)
		if again == nil {
			t.Fatal("the store did not open again")
		}
		t.Cleanup(func() { again.Close() })
		return again
	}
	values := map[string][]byte{
		"empty":  {},
		"small":  []byte("kind: ConfigMap\n"),
		"inline": bytes.Repeat([]byte("a"), InlineMax),
		"large":  bytes.Repeat([]byte("resource data\n"), 20000),
	}

	t.Run("PutGetAcrossReopen", func(t *testing.T) {
		s, w := mustOpen(t, Options{})
		for name, v := range values {
			k := key(name)
			if _, ok := s.Get(k); ok || s.Has(k) {
				t.Fatalf("%s: a hit in an empty store", name)
			}
			s.Put(k, v)
			got, d, ok := s.GetDigest(k)
			if !ok || !bytes.Equal(got, v) || d != Digest(v) {
				t.Fatalf("%s: GetDigest = %d bytes %v %v", name, len(got), d, ok)
			}
		}
		s = reopen(t, s)
		for name, v := range values {
			if got, ok := s.Get(key(name)); !ok || !bytes.Equal(got, v) {
				t.Errorf("%s after reopening: %d bytes, %v", name, len(got), ok)
			}
			if !s.Has(key(name)) {
				t.Errorf("%s: Has is false", name)
			}
			val, d, ok := s.Open(key(name))
			if !ok || d != Digest(v) || val.Len() != int64(len(v)) {
				t.Fatalf("%s: Open = %v %v", name, d, ok)
			}
			var buf bytes.Buffer
			if _, err := val.WriteTo(&buf); err != nil || !bytes.Equal(buf.Bytes(), v) {
				t.Errorf("%s: streamed %d bytes, %v", name, buf.Len(), err)
			}
			val.Close()
		}
		if _, ok := s.Get(NewKey("v2", "test").String("small").Sum()); ok {
			t.Error("a key of another version hit")
		}
		if m := w.list(); len(m) != 0 {
			t.Errorf("warnings: %q", m)
		}
	})

	// Every read is verified: an object whose bytes changed, that was cut
	// short, that names another key or whose content is gone is a miss,
	// and Verify counts it.
	t.Run("DamageIsAMiss", func(t *testing.T) {
		for _, size := range []string{"small", "large"} {
			v := values[size]
			for _, tc := range []struct {
				name   string
				damage func(s *Store, line, data []byte) (newLine, newData []byte)
			}{
				{"value flipped", func(s *Store, line, data []byte) ([]byte, []byte) {
					if len(line) > EntrySize {
						line = bytes.Clone(line)
						line[len(line)-1] ^= 1
						return line, nil
					}
					data = bytes.Clone(data)
					data[len(data)/2] ^= 1
					return nil, data
				}},
				{"line cut short", func(s *Store, line, data []byte) ([]byte, []byte) { return line[:EntrySize-5], nil }},
				{"value cut short", func(s *Store, line, data []byte) ([]byte, []byte) {
					if len(line) > EntrySize {
						return line[:len(line)-1], nil
					}
					return nil, data[:len(data)-1]
				}},
				{"another key's line", func(s *Store, line, data []byte) ([]byte, []byte) {
					other := append(FormatEntry(key("other"), Digest(v), int64(len(v)), 1, false), line[EntrySize:]...)
					return other, nil
				}},
			} {
				t.Run(size+"/"+tc.name, func(t *testing.T) {
					s, w := mustOpen(t, Options{})
					defer s.Close()
					k := key(tc.name)
					s.Put(k, v)
					s.Flush()
					ap := s.ObjectName(hex.EncodeToString(k[:]), SufAction)
					d := Digest(v)
					dp := s.ObjectName(hex.EncodeToString(d[:]), SufData)
					line, err := s.ReadObject(ap)
					if err != nil {
						t.Fatal(err)
					}
					data, _ := s.ReadObject(dp)
					newLine, newData := tc.damage(s, line, data)
					if newLine != nil {
						s.RemoveObject(ap)
						s.WriteObject(ap, newLine)
					}
					if newData != nil {
						s.RemoveObject(dp)
						s.WriteObject(dp, newData)
					}
					s.Flush()
					if got, ok := s.Get(k); ok {
						t.Fatalf("a damaged entry hit (%d bytes)", len(got))
					}
					if s.Has(k) && tc.name != "value flipped" {
						t.Error("Has is true for a damaged entry")
					}
					if r, err := s.Verify(); err != nil || r.Good != 0 || r.Corrupt+r.Incomplete != 1 {
						t.Errorf("Verify = %+v, %v", r, err)
					}
					// Built again, it is whole.
					s.Put(k, v)
					if got, ok := s.Get(k); !ok || !bytes.Equal(got, v) {
						t.Error("an entry put again after damage does not read back")
					}
					if m := w.list(); len(m) != 0 {
						t.Errorf("warnings: %q", m)
					}
				})
			}
		}
		t.Run("content gone", func(t *testing.T) {
			s, _ := mustOpen(t, Options{})
			defer s.Close()
			k := key("gone")
			s.Put(k, values["large"])
			s.Flush()
			d := Digest(values["large"])
			s.RemoveObject(s.ObjectName(hex.EncodeToString(d[:]), SufData))
			if _, ok := s.Get(k); ok || s.Has(k) {
				t.Fatal("an entry whose content is gone hit")
			}
		})
	})

	// Sensitive entries carry their flag, through a reopen.
	t.Run("SensitiveFlagged", func(t *testing.T) {
		s, _ := mustOpen(t, Options{})
		s.PutSensitive(key("secret"), []byte("password: hunter2"))
		s.Put(key("plain"), []byte("kind: ConfigMap"))
		s = reopen(t, s)
		for name, want := range map[string]bool{"secret": true, "plain": false} {
			k := key(name)
			line, err := s.ReadObject(s.ObjectName(hex.EncodeToString(k[:]), SufAction))
			if err != nil {
				t.Fatal(err)
			}
			sensitive, ok := EntrySensitive(k, line[:EntrySize])
			if !ok || sensitive != want {
				t.Errorf("%s: sensitive %v, want %v", name, sensitive, want)
			}
		}
	})

	// The store stays within its bound under a fill four times its size
	// and keeps what was used last: what the reads kept using survives.
	t.Run("BoundedLeastRecentlyUsed", func(t *testing.T) {
		now := time.Unix(2e9, 0)
		var mu sync.Mutex
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		const bound = 2 << 20
		s, _ := mustOpen(t, Options{MaxSize: bound, Now: clock})
		value := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("%07d ", i)), 20<<10/8) }
		const n = 4 * bound / (20 << 10)
		hot := key("hot")
		s.Put(hot, value(-1))
		for i := range n {
			advance(2 * time.Hour) // past every backend's refresh interval
			s.Put(key(fmt.Sprint(i)), value(i))
			if _, ok := s.Get(hot); !ok {
				t.Fatalf("the entry read all along was dropped at put %d", i)
			}
			if i%50 == 49 {
				// A short process closes here (the file store trims in
				// Close); a long one goes on.
				s = reopen(t, s)
			}
		}
		s = reopen(t, s)
		held := int64(0)
		for i := range n {
			if v, ok := s.Get(key(fmt.Sprint(i))); ok {
				held += int64(len(v))
			}
		}
		if held > bound {
			t.Errorf("the store holds %d bytes of values, over its bound %d", held, bound)
		}
		if held < bound/4 {
			t.Errorf("the store holds only %d bytes of values under a bound of %d", held, bound)
		}
		if _, ok := s.Get(key(fmt.Sprint(n - 1))); !ok {
			t.Error("the newest entry was dropped")
		}
		// (Packed files share one modification time, the pack's: the
		// file store's LRU is then by pack, and the oldest entry shares
		// the hot entry's pack.)
		if _, ok := s.Get(key("0")); ok && !s.Packed() {
			t.Error("the oldest entry, never read again, is still there")
		}
		if _, ok := s.Get(hot); !ok {
			t.Error("the entry read all along was dropped")
		}
	})

	// A store deletes only its own data: a file another program left in
	// the cache directory survives a fill past the bound, and the store
	// never writes outside the directory.
	t.Run("OnlyItsOwnData", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "cache")
		s, _ := mustOpen(t, Options{Dir: dir, MaxSize: 256 << 10})
		stray := filepath.Join(dir, "notes.txt")
		if err := os.WriteFile(stray, []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			s.Put(key(fmt.Sprint(i)), bytes.Repeat([]byte{byte(i)}, 10<<10))
		}
		s = reopen(t, s)
		s.Close()
		if b, err := os.ReadFile(stray); err != nil || string(b) != "mine" {
			t.Errorf("a stray file was changed: %q %v", b, err)
		}
		entries, _ := os.ReadDir(parent)
		if len(entries) != 1 {
			t.Errorf("the store wrote beside its directory: %v", entries)
		}
	})

	// A directory that cannot be a cache is one warning and no store.
	t.Run("UnusableDirectoryDegrades", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		os.WriteFile(file, []byte("x"), 0o600)
		w := &suiteWarnings{}
		s := open(t, Options{Dir: file, Warn: w.add})
		if s != nil {
			s.Close()
			t.Fatal("a file opened as a cache")
		}
		if m := w.list(); len(m) != 1 || !strings.Contains(m[0], file) {
			t.Errorf("warnings %q, want one naming %s", m, file)
		}
		// A nil store works, empty.
		s.Put(key("x"), []byte("x"))
		if _, ok := s.Get(key("x")); ok {
			t.Error("a nil store hit")
		}
	})

	t.Run("ConcurrentUse", func(t *testing.T) {
		s, w := mustOpen(t, Options{})
		defer s.Close()
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 40 {
					k := key(fmt.Sprint(g, "/", i%10))
					v := bytes.Repeat([]byte(fmt.Sprint(i%10, " ")), 100*(i%10)+1)
					s.Put(k, v)
					if got, ok := s.Get(k); !ok || !bytes.Equal(got, v) {
						t.Errorf("goroutine %d: Get after Put = %d bytes %v", g, len(got), ok)
						return
					}
				}
			})
		}
		wg.Wait()
		if m := w.list(); len(m) != 0 {
			t.Errorf("warnings: %q", m)
		}
	})

	// Callers' records and the file index's stat records are kept in the
	// store: a record reads back as written, is replaced in place, and is
	// gone once removed; a name never written misses.
	t.Run("RecordsAndStatRecords", func(t *testing.T) {
		s, _ := mustOpen(t, Options{})
		name := func(n string) string { k := key(n); return hex.EncodeToString(k[:]) }
		s.WriteRecord(name("root"), []byte("first"))
		s.WriteRecord(name("root"), []byte("second"))
		s.WriteRecord(name("gone"), []byte("x"))
		s.RemoveRecord(name("gone"))
		big := filepath.Join(t.TempDir(), "big.yaml")
		os.WriteFile(big, bytes.Repeat([]byte("x"), PersistMin), 0o600)
		old := time.Now().Add(-time.Minute)
		os.Chtimes(big, old, old)
		ix := s.FileIndex()
		ix.TrustAtOnce() // the file's ctime is now: trust it at once
		d, ok := ix.Digest(big)
		if !ok {
			t.Fatal("no digest")
		}
		ix.Save("")
		s = reopen(t, s)
		if r, ok := s.Record(name("root")); !ok || string(r) != "second" {
			t.Errorf("record read back: %q %v", r, ok)
		}
		for _, n := range []string{"gone", "never"} {
			if r, ok := s.Record(name(n)); ok {
				t.Errorf("record %s: %q", n, r)
			}
		}
		ix = s.FileIndex()
		ix.TrustAtOnce()
		if got, ok := ix.Digest(big); !ok || got != d {
			t.Fatal("digest changed")
		}
		if hashed, fromIndex := ix.Counts(); hashed != 0 || fromIndex != 1 {
			t.Errorf("the stat record was not used: hashed %d, from the index %d", hashed, fromIndex)
		}
	})

	t.Run("RunStatistics", func(t *testing.T) {
		s, _ := mustOpen(t, Options{})
		s.Put(key("a"), []byte("a"))
		s.Put(key("b"), values["large"])
		s.Get(key("a"))
		s.Get(key("missing"))
		s.RecordRun()
		s = reopen(t, s)
		info, err := s.Info()
		if err != nil {
			t.Fatal(err)
		}
		if info.Entries != 2 || info.Blobs != 1 || info.Bytes <= 0 {
			t.Errorf("Info = %+v", info)
		}
		if r := info.LastRun; r == nil || r.Hits != 1 || r.Misses != 1 || r.Writes != 2 {
			t.Errorf("last run %+v", r)
		}
	})
}
