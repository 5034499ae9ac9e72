//go:build unix

package output

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// An output file gets what os.WriteFile would give it, as kustomize's
// do: 0666 less the umask, whatever the umask; and a file that existed
// is replaced whole, with no temporary file left.
func TestWriteFileAtomicModeFollowsUmask(t *testing.T) {
	dir := t.TempDir()
	for _, mask := range []int{0o022, 0o002, 0o077} {
		old := syscall.Umask(mask)
		p := filepath.Join(dir, "out.yaml")
		err := WriteFileAtomic(p, []byte("a: 1\n"))
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o666&^mask); got != want {
			t.Errorf("umask %03o: mode %v, want %v", mask, got, want)
		}
		if b, _ := os.ReadFile(p); string(b) != "a: 1\n" {
			t.Errorf("umask %03o: content %q", mask, b)
		}
		os.Remove(p)
	}
	p := filepath.Join(dir, "x.yaml")
	for _, content := range []string{"first\n", "second\n"} {
		if err := WriteFileAtomic(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if b, _ := os.ReadFile(p); string(b) != "second\n" || len(entries) != 1 {
		t.Errorf("after two writes: %q, %d entries in the directory", b, len(entries))
	}
}

// writeNew refuses a name that exists, leaving that file as it was, and
// writes a new file whole, a large one too.
func TestWriteNewRefusesAnExistingName(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.yaml")
	if err := writeNew(p, []byte("first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := writeNew(p, []byte("second\n"), 0o644)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), p) {
		t.Errorf("writeNew over an existing file: %v, want an error wrapping fs.ErrExist naming it", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "first\n" {
		t.Errorf("the existing file now holds %q", b)
	}
	big := bytes.Repeat([]byte("x"), 4<<20)
	q := filepath.Join(filepath.Dir(p), "big.yaml")
	if err := writeNew(q, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(q); !bytes.Equal(b, big) {
		t.Errorf("read back %d bytes of %d", len(b), len(big))
	}
}
