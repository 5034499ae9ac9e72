//go:build unix

package fsread

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestFileRefusesDevicesAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{zero: "a character device", fifo: "a FIFO", dir: "a directory"} {
		_, err := File(p)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("File(%s) = %v, want an error naming the file and %q", p, err, want)
		}
	}
}
