package fsread

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileReadsARegularFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.yaml")
	if err := os.WriteFile(p, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := File(p)
	if err != nil || string(got) != "a: 1\n" {
		t.Fatalf("File = %q, %v", got, err)
	}
}

func TestFileRefusesAFileOverTheCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: large to stat, nothing on disk.
	if err := f.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = File(p)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "256 MiB") || !strings.Contains(err.Error(), p) {
		t.Fatalf("File = %v, want the 256 MiB cap named with the file", err)
	}
}

func TestOwnRefusesSymlinksAndCaps(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.WriteFile(real, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	if _, err := Own(link, 100); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Own(symlink) = %v, want it refused", err)
	}
	if _, err := Own(real, 5); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Own over the limit = %v, want ErrTooLarge", err)
	}
	if b, err := Own(real, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("Own = %q, %v", b, err)
	}
}
