package cache

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"testing"
)

// A big entry, alone in its file or a member of a pack, comes from Open
// whole and unchanged; one whose bytes were changed in place, or cut
// short, is a miss, as with GetDigest; a small one comes as GetDigest
// gives it, an empty one included (a root whose output is empty: a
// Component built on its own).
func TestOpenChecksBigValues(t *testing.T) {
	for _, c := range []struct {
		name string
		size int
		pack bool
	}{
		{"own file", 3 << 20, false},
		{"pack member", 200 << 10, true},
		{"small", 1000, true},
		{"empty", 0, false},
		{"empty, packed", 0, true},
		{"just over a chunk", streamChunk + 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var warn []string
			value := bytes.Repeat([]byte("apiVersion: v1\nkind: ConfigMap\n"), c.size/31+1)[:c.size]
			key := NewKey("v", "out").String(c.name).Sum()
			s := Open(context.Background(), Options{Dir: dir, Pack: c.pack, Warn: func(m string) { warn = append(warn, m) }})
			s.Put(key, value)
			if v, d, ok := s.Open(key); !ok || d != Digest(value) || !bytes.Equal(readAll(t, v), value) {
				t.Fatalf("Open before Close (pending in this process): ok %v", ok)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = mustOpen(t, dir, &warn)
			v, d, ok := s.Open(key)
			if !ok || d != Digest(value) || v.Len() != int64(len(value)) {
				t.Fatalf("Open: ok %v, length %d", ok, v.Len())
			}
			var out bytes.Buffer
			if n, err := v.WriteTo(&out); err != nil || n != int64(len(value)) || !bytes.Equal(out.Bytes(), value) {
				t.Fatalf("WriteTo: %d bytes, %v, equal %v", n, err, bytes.Equal(out.Bytes(), value))
			}
			if b, err := v.Bytes(); err != nil || !bytes.Equal(b, value) {
				t.Fatalf("Bytes: %v", err)
			}
			v.Close()
			if c.size <= inlineMax {
				return
			}
			// Change one byte in the middle, in place, as a disk or another
			// program might.
			dp := s.name(hex.EncodeToString(d[:]), sufData)
			f, off, n, err := openEntry(dp)
			if err != nil || n != int64(len(value)) {
				t.Fatalf("openEntry: %v, %d bytes", err, n)
			}
			f.Close()
			w, err := os.OpenFile(dp, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.WriteAt([]byte{'#'}, off+n/2); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if v, _, ok := s.Open(key); ok {
				v.Close()
				t.Error("Open of a changed entry was a hit")
			}
			if _, _, ok := s.GetDigest(key); ok {
				t.Error("GetDigest of a changed entry was a hit")
			}
			if !c.pack {
				if err := os.Truncate(dp, n-1); err != nil {
					t.Fatal(err)
				}
				if v, _, ok := s.Open(key); ok {
					v.Close()
					t.Error("Open of a truncated entry was a hit")
				}
			}
			if len(warn) > 0 {
				t.Errorf("warnings: %q", warn)
			}
		})
	}
}

func readAll(t *testing.T, v *Value) []byte {
	t.Helper()
	defer v.Close()
	b, err := v.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
