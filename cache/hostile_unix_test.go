//go:build unix

package cache

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// plant replaces the cache file at p by a symlink to /dev/zero or by a
// FIFO, as a hostile or broken cache directory might hold.
func plant(t *testing.T, p, what string) {
	t.Helper()
	os.Remove(p)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	var err error
	if what == "fifo" {
		err = syscall.Mkfifo(p, 0o600)
	} else {
		err = os.Symlink("/dev/zero", p)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// withinAMinute fails the test when fn blocks: reading a FIFO or
// /dev/zero planted in the cache would.
func withinAMinute(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s blocked on a planted file", what)
	}
}

// State files of the cache that are FIFOs or symlinks to /dev/zero are
// misses: kpipe neither hangs on them nor reads until memory runs out.
func TestPlantedStateFilesAreMisses(t *testing.T) {
	for _, what := range []string{"fifo", "devzero"} {
		t.Run(what, func(t *testing.T) {
			dir := t.TempDir()
			var warns []string
			s := mustOpen(t, filepath.Join(dir, "cache"), &warns)
			f := filepath.Join(dir, "big")
			content := bytes.Repeat([]byte("x"), persistMin)
			os.WriteFile(f, content, 0o644)
			ix := s.FileIndex()
			ix.Digest(f)
			ix.Save("")
			plant(t, s.name(statName(f), sufStat), what)
			withinAMinute(t, "FileIndex.Digest", func() {
				if d, ok := s.FileIndex().Digest(f); !ok || d != Digest(content) {
					t.Error("a planted stat record changed a digest")
				}
			})

			k := key("entry")
			s.Put(k, bytes.Repeat([]byte("v"), inlineMax+1))
			plant(t, s.name(hex.EncodeToString(k[:]), sufAction), what)
			withinAMinute(t, "Get", func() {
				if _, ok := s.Get(k); ok {
					t.Error("a planted entry line was a hit")
				}
				if s.Has(k) {
					t.Error("Has says a planted entry exists")
				}
			})

			rec := key("record")
			name := hex.EncodeToString(rec[:])
			s.WriteRecord(name, []byte("a record"))
			plant(t, s.name(name, sufRecord), what)
			withinAMinute(t, "Record", func() {
				if _, ok := s.Record(name); ok {
					t.Error("a planted record was read")
				}
			})
		})
	}
}
