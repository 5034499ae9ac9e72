//go:build linux || darwin

package cache

import (
	"os"

	"golang.org/x/sys/unix"
)

// maxIovecs is how many buffers one writev takes (IOV_MAX on Linux and
// macOS).
const maxIovecs = 1024

// writeBuffers writes bufs to f in order, as few writev calls as their
// number allows: a pack's hundreds of members go to the file without being
// copied into a buffer first (a new 256 KiB buffer per pack cost a run its
// page faults; see packer.writeTo).
func writeBuffers(f *os.File, bufs [][]byte) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	for len(bufs) > 0 {
		chunk := bufs[:min(len(bufs), maxIovecs)]
		var n int
		var werr error
		if err := rc.Write(func(fd uintptr) bool {
			n, werr = unix.Writev(int(fd), chunk)
			return werr != unix.EAGAIN
		}); err != nil {
			return err
		}
		if werr == unix.EINTR {
			continue
		}
		if werr != nil {
			return &os.PathError{Op: "write", Path: f.Name(), Err: werr}
		}
		if n == 0 {
			return &os.PathError{Op: "write", Path: f.Name(), Err: unix.EIO}
		}
		bufs = advance(bufs, n)
	}
	return nil
}

// advance drops the first n bytes of bufs.
func advance(bufs [][]byte, n int) [][]byte {
	for n > 0 && len(bufs) > 0 {
		if n < len(bufs[0]) {
			bufs[0] = bufs[0][n:]
			return bufs
		}
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	for len(bufs) > 0 && len(bufs[0]) == 0 {
		bufs = bufs[1:]
	}
	return bufs
}
