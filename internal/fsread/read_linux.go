package fsread

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// readFile reads the regular file at path, up to limit, through system
// calls on a bare descriptor: open, fstat, read to the end, close. An
// *os.File would cost more for each of the thousands of small files a
// build reads: os.OpenFile registers every descriptor with the runtime's
// poller, which refuses a regular file (one failed epoll_ctl each), and
// sets a finalizer. What is refused, and the errors, are openRegular's
// and readLimited's.
func readFile(path string, follow bool, limit int64) ([]byte, os.FileInfo, error) {
	fd, st, err := openRaw(path, follow)
	if err != nil {
		return nil, nil, err
	}
	defer syscall.Close(fd)
	data, err := readLimited(fdReader(fd), path, st, limit)
	if err != nil {
		var pe *fs.PathError
		if !errors.As(err, &pe) {
			err = &fs.PathError{Op: "read", Path: path, Err: err}
		}
		return nil, nil, err
	}
	return data, st, nil
}

// openOwn opens path as openRaw does, not following a symlink: a
// descriptor read with pread.
func openOwn(path string) (OwnFile, os.FileInfo, error) {
	fd, st, err := openRaw(path, false)
	if err != nil {
		return nil, nil, err
	}
	return &descriptor{fd: fd, path: path}, st, nil
}

// descriptor is an OwnFile: an open descriptor and the path it was
// opened at, for errors.
type descriptor struct {
	fd   int
	path string
}

func (d *descriptor) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		var m int
		err := retryEINTR(func() (err error) {
			m, err = syscall.Pread(d.fd, p[n:], off+int64(n))
			return err
		})
		switch {
		case err != nil:
			return n, &fs.PathError{Op: "read", Path: d.path, Err: err}
		case m == 0:
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (d *descriptor) Close() error {
	if d.fd < 0 {
		return &fs.PathError{Op: "close", Path: d.path, Err: fs.ErrClosed}
	}
	fd := d.fd
	d.fd = -1
	if err := syscall.Close(fd); err != nil && err != syscall.EINTR {
		return &fs.PathError{Op: "close", Path: d.path, Err: err}
	}
	return nil
}

// openRaw opens path as open does (not blocking on a FIFO, and not
// following a final symlink unless follow) and returns the descriptor
// with its stat, or an error when it is not a regular file.
func openRaw(path string, follow bool) (int, *statInfo, error) {
	flags := syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, flags, 0)
		return err
	})
	if err != nil {
		if !follow && errors.Is(err, syscall.ELOOP) {
			return -1, nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (symlink)", ErrNotRegular)}
		}
		return -1, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	st := &statInfo{name: filepath.Base(path)}
	if err := retryEINTR(func() error { return syscall.Fstat(fd, &st.sys) }); err != nil {
		syscall.Close(fd)
		return -1, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if err := regular(path, st); err != nil {
		syscall.Close(fd)
		return -1, nil, err
	}
	return fd, st, nil
}

func retryEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}

// fdReader reads an open descriptor as an io.Reader: io.EOF at the end.
type fdReader int

func (fd fdReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	err := retryEINTR(func() (err error) {
		n, err = syscall.Read(int(fd), p)
		return err
	})
	switch {
	case err != nil:
		return 0, err
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// statInfo is the os.FileInfo of an fstat, filled in as the os package
// fills its own, Sys included (a *syscall.Stat_t).
type statInfo struct {
	name string
	sys  syscall.Stat_t
}

func (fi *statInfo) Name() string       { return fi.name }
func (fi *statInfo) Size() int64        { return fi.sys.Size }
func (fi *statInfo) ModTime() time.Time { return time.Unix(fi.sys.Mtim.Unix()) }
func (fi *statInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *statInfo) Sys() any           { return &fi.sys }

func (fi *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.sys.Mode & 0o777)
	switch fi.sys.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if fi.sys.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.sys.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.sys.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
