package fsread

import (
	"errors"
	"io"
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

// TestReadSeesAFileThatChangedSinceItsStat: the read is sized by the
// stat taken at open; a file that grew or shrank after it is still read
// to its end, and one that grew past the cap is refused.
func TestReadSeesAFileThatChangedSinceItsStat(t *testing.T) {
	changedSinceStat(t, func(p string) (io.Reader, os.FileInfo, func(), error) {
		f, st, err := openRegular(p, false)
		if err != nil {
			return nil, nil, nil, err
		}
		return f, st, func() { f.Close() }, nil
	})
}

// changedSinceStat runs TestReadSeesAFileThatChangedSinceItsStat's cases
// on files opened by open, which returns what readLimited reads, the
// stat taken at open, and what closes it.
func changedSinceStat(t *testing.T, open func(p string) (io.Reader, os.FileInfo, func(), error)) {
	p := filepath.Join(t.TempDir(), "a.yaml")
	for _, c := range []struct {
		name, before, after string
		limit               int64
		wantErr             bool
	}{
		{"grew", "a: 1\n", "a: 1\nb: 2\n", 100, false},
		{"grew by one byte", "a: 1\n", "a: 1\n\n", 100, false},
		{"shrank", "a: 1\nb: 2\n", "a: 1\n", 100, false},
		{"emptied", "a: 1\n", "", 100, false},
		{"was empty", "", "a: 1\n", 100, false},
		{"unchanged", "a: 1\n", "a: 1\n", 100, false},
		{"grew past the cap", "a: 1\n", strings.Repeat("x", 101), 100, true},
	} {
		if err := os.WriteFile(p, []byte(c.before), 0o644); err != nil {
			t.Fatal(err)
		}
		r, st, closeIt, err := open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c.after), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readLimited(r, p, st, c.limit)
		closeIt()
		switch {
		case c.wantErr && err == nil:
			t.Errorf("%s: read %d bytes, want the cap's error", c.name, len(got))
		case !c.wantErr && (err != nil || string(got) != c.after):
			t.Errorf("%s: read %q, %v; want %q", c.name, got, err, c.after)
		}
	}
}

// OpenOwn's file reads at offsets as an *os.File's ReadAt does: all that
// was asked, or what there was and io.EOF; it closes once; a symlink is
// refused, not followed.
func TestOpenOwnReadsAtOffsets(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pack")
	if err := os.WriteFile(p, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, fi, err := OpenOwn(p)
	if err != nil || fi.Size() != 10 {
		t.Fatalf("OpenOwn = %v, %v", fi, err)
	}
	buf := make([]byte, 4)
	if n, err := f.ReadAt(buf, 2); n != 4 || err != nil || string(buf) != "2345" {
		t.Errorf("ReadAt(4 bytes, 2) = %d, %v, %q", n, err, buf[:n])
	}
	if n, err := f.ReadAt(buf, 8); n != 2 || err != io.EOF || string(buf[:n]) != "89" {
		t.Errorf("ReadAt(4 bytes, 8) = %d, %v, %q; want 2, EOF, \"89\"", n, err, buf[:n])
	}
	if n, err := f.ReadAt(buf, 20); n != 0 || err != io.EOF {
		t.Errorf("ReadAt past the end = %d, %v", n, err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := f.Close(); err == nil {
		t.Errorf("a second Close: no error")
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(p, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if f, _, err := OpenOwn(link); !errors.Is(err, ErrNotRegular) {
		if f != nil {
			f.Close()
		}
		t.Errorf("OpenOwn of a symlink: %v, want ErrNotRegular", err)
	}
}
