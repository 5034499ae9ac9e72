// Package fsread reads the files kpipe takes as input, and the state files
// of its cache, defensively: only a regular file is read (a FIFO, a device
// such as /dev/zero or a socket is refused before anything blocks on it),
// and never more than a cap, so that a hostile tree cannot make kpipe hang
// or read until memory runs out.
//
// Where a path is allowed to point is the caller's business (the load
// restrictor in loaders); this package only decides what kind of
// file may be read and how much of it.
//
// On Linux, files are read, and directories listed (ReadDir), through
// bare descriptors rather than *os.File, which costs a build that reads
// thousands of small files a few system calls fewer for each
// (read_linux.go); elsewhere through the os package.
package fsread

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileSize is the most kpipe reads from one file: 256 MiB, far above
// any real kustomization input (the largest CRD bundles are a few MiB),
// far below what would exhaust a CI runner's memory.
const MaxFileSize int64 = 256 << 20

// ErrTooLarge is wrapped by the error of a read past the cap.
var ErrTooLarge = errors.New("file is larger than the limit")

// ErrNotRegular is wrapped by the error of a read of something that is not
// a regular file (a FIFO, a device, a socket, a directory).
var ErrNotRegular = errors.New("not a regular file")

// File reads the regular file at path, following symlinks, refusing
// anything else and anything larger than MaxFileSize.
func File(path string) ([]byte, error) {
	data, _, err := FileStat(path)
	return data, err
}

// FileStat is File that also returns what a stat of the open file found
// before it was read (a cache can tell from it, later, that the file was
// not changed since).
func FileStat(path string) ([]byte, os.FileInfo, error) {
	return readFile(path, true, MaxFileSize)
}

// FileStatNoFollow is FileStat for a path whose last component must not be
// a symlink: one there is refused (ErrNotRegular), not followed. A caller
// that knows the directory holding path is symlink-free then knows, from
// a success, that path is the file's real path, without a look at it
// before the read.
func FileStatNoFollow(path string) ([]byte, os.FileInfo, error) {
	return readFile(path, false, MaxFileSize)
}

// Own reads a file kpipe itself wrote (a cache state file): a symlink there
// is refused rather than followed, as are non-regular files and files
// larger than limit.
func Own(path string, limit int64) ([]byte, error) { return read(path, false, limit) }

// OpenOwn opens a file kpipe itself wrote, as Own reads one: a symlink,
// or anything but a regular file, is refused. The caller reads it (at most
// what it means to) and closes it.
func OpenOwn(path string) (OwnFile, os.FileInfo, error) { return openOwn(path) }

// An OwnFile is a file OpenOwn opened, read at offsets (as an *os.File's
// ReadAt reads: all of p, or an error, io.EOF at the end) and closed.
type OwnFile interface {
	io.ReaderAt
	io.Closer
}

func openRegular(path string, follow bool) (*os.File, os.FileInfo, error) {
	if !follow && !openRefusesSymlinks {
		if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, nil, regular(path, st)
		}
	}
	// Opened first, so that a missing file gives os.ReadFile's error; on
	// unix the open does not block on a FIFO (open_unix.go).
	f, err := open(path, follow)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = regular(path, st)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

func read(path string, follow bool, limit int64) ([]byte, error) {
	data, _, err := readFile(path, follow, limit)
	return data, err
}

// readLimited reads the open regular file f (st: its stat) up to limit.
func readLimited(f io.Reader, path string, st os.FileInfo, limit int64) ([]byte, error) {
	if st.Size() > limit {
		return nil, tooLarge(path, limit)
	}
	// Sized by the stat, exactly: most files of a configuration tree are
	// a few hundred bytes, and bytes.Buffer's ReadFrom wants 512 bytes
	// free before each read, which tripled what a small file's data held
	// for as long as the build kept it. A file that grew since the stat is
	// read on to its end (up to limit).
	data := make([]byte, st.Size())
	n, err := io.ReadFull(f, data)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return data[:n], nil // it shrank
	case err != nil:
		return nil, err
	}
	var probe [1]byte
	if m, err := f.Read(probe[:]); m == 0 {
		if err != nil && err != io.EOF {
			return nil, err
		}
		return data, nil
	}
	buf := bytes.NewBuffer(append(data, probe[0]))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1-int64(buf.Len()))); err != nil {
		return nil, err
	}
	data = buf.Bytes()
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit)
	}
	return data, nil
}

func regular(path string, st os.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, describe(st.Mode()))}
}

func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

func tooLarge(path string, limit int64) error {
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w of %s on one file", ErrTooLarge, size(limit))}
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
