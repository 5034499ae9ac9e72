package cache

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

func open(t *testing.T, dir string, warn *[]string) *Store {
	t.Helper()
	return Open(context.Background(), Options{Dir: dir, LockWait: 300 * time.Millisecond,
		Warn: func(m string) { *warn = append(*warn, m) }})
}

func TestPutGetVerified(t *testing.T) {
	var warns []string
	s := open(t, t.TempDir(), &warns)
	if s == nil {
		t.Fatal("cache did not open")
	}
	defer s.Close()
	k := NewKey("v1", "test").String("input").Sum()
	if _, ok := s.Get(k); ok {
		t.Fatal("hit on an empty cache")
	}
	s.Put(k, []byte("value"))
	s.Flush()
	if v, ok := s.Get(k); !ok || string(v) != "value" {
		t.Fatalf("Get = %q, %v; want the stored value", v, ok)
	}
	other := NewKey("v2", "test").String("input").Sum()
	if _, ok := s.Get(other); ok {
		t.Error("a key from another version hit")
	}
}

func TestCorruptValueIsAMiss(t *testing.T) {
	var warns []string
	s := open(t, t.TempDir(), &warns)
	defer s.Close()
	k := NewKey("v1", "test").Sum()
	s.Put(k, []byte("good"))
	s.Flush()
	// Overwrite the value behind the digest, as disk corruption would.
	d := Digest([]byte("good"))
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(blobKey(d[:]), []byte("evil")) }); err != nil {
		t.Fatal(err)
	}
	if v, ok := s.Get(k); ok {
		t.Fatalf("corrupt entry returned %q", v)
	}
	if len(warns) == 0 || !strings.Contains(warns[len(warns)-1], "failed verification") {
		t.Errorf("no verification warning: %v", warns)
	}
}

func TestLockedDirectoryDegrades(t *testing.T) {
	dir := t.TempDir()
	var warns []string
	first := open(t, dir, &warns)
	defer first.Close()
	second := open(t, dir, &warns)
	if second != nil {
		second.Close()
		t.Fatal("a second store opened a locked directory")
	}
	if len(warns) == 0 || !strings.Contains(warns[0], "in use by another process") {
		t.Errorf("warnings %v lack 'in use by another process'", warns)
	}
	// A nil store is a working, empty cache.
	second.Put(Key{}, []byte("x"))
	if _, ok := second.Get(Key{}); ok {
		t.Error("nil store returned a value")
	}
}

func TestUnreadableDirectoryIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "MANIFEST"), []byte("garbage, not a badger manifest"), 0o644); err != nil {
		t.Fatal(err)
	}
	var warns []string
	s := open(t, dir, &warns)
	if s == nil {
		t.Fatalf("cache not rebuilt: %v", warns)
	}
	defer s.Close()
	if len(warns) == 0 || !strings.Contains(warns[0], "rebuilding it") {
		t.Errorf("warnings %v lack 'rebuilding it'", warns)
	}
	k := NewKey("v", "k").Sum()
	s.Put(k, []byte("v"))
	s.Flush()
	if _, ok := s.Get(k); !ok {
		t.Error("rebuilt cache does not store")
	}
}

func TestPrune(t *testing.T) {
	var warns []string
	s := open(t, t.TempDir(), &warns)
	defer s.Close()
	for i := 0; i < 50; i++ {
		s.Put(NewKey("v", "k").String(string(rune('a'+i))).Sum(), make([]byte, 10000+i))
	}
	s.Flush()
	n, err := s.Prune(100000)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := s.Info()
	if n == 0 || info.Entries > 10 || info.Entries == 0 {
		t.Errorf("pruned %d, %d entries left; want about 9 left of 50", n, info.Entries)
	}
}
