package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteBuffers writes more buffers than one writev takes, empty ones
// among them (an empty cached value is a pack member of no bytes), and
// expects the file to hold them all, in order.
func TestWriteBuffers(t *testing.T) {
	var bufs [][]byte
	var want []byte
	for i := range 2500 {
		b := bytes.Repeat([]byte{byte(i)}, i%7*3) // every seventh is empty
		bufs = append(bufs, b)
		want = append(want, b...)
	}
	path := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeBuffers(f, bufs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("file holds %d bytes, want %d (or the bytes differ)", len(got), len(want))
	}
}
