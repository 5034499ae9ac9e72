//go:build unix

package cache

import (
	"io/fs"
	"syscall"
)

// overwrite replaces the content of the small file at path in place (one
// write and a truncate, no new inode), or writes it with writeWhole when
// it is not there or is not a plain file of its own (a final symlink is
// not followed). It is for lastrun.json, written by every run that used
// the cache: through a temporary file and a rename, that was about 1% of
// a warm `kpipe build`. A reader may meet a mix of two runs' bytes; the
// file is only displayed, and one that does not parse shows no last run.
//
// It works on the descriptor alone: an os.File's first open in a process
// sets up the runtime's poller and a finalizer, which a warm `kpipe
// build` otherwise never needs.
func overwrite(path string, data []byte) error {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		// Not there, or a symlink (ELOOP; EMLINK on FreeBSD): written
		// anew, which replaces the name whatever it was.
		return writeWhole(path, data)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return writeWhole(path, data)
	}
	n, err := syscall.Pwrite(fd, data, 0)
	if err == nil && n < len(data) {
		err = syscall.EIO
	}
	if err == nil {
		err = syscall.Ftruncate(fd, int64(len(data)))
	}
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}
