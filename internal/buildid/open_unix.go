//go:build unix

package buildid

import (
	"io"
	"syscall"
)

// file is an executable opened for reading through its descriptor alone:
// an os.File's first open in a process sets up the runtime's poller and a
// finalizer, about 1% of a warm `kpipe build`, which otherwise opens no
// os.File at all.
type file int

func open(path string) (file, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return file(fd), err
		}
	}
}

// ReadAt reads len(b) bytes at off, or returns io.EOF with fewer.
func (f file) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Pread(int(f), b[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (f file) Close() error { return syscall.Close(int(f)) }
