package output

import (
	"io/fs"
	"syscall"
)

// writeNew creates the file at path, which must not exist (an error
// wrapping fs.ErrExist otherwise), with perm less the umask, and writes
// data to it, through a bare descriptor: an *os.File would register the
// descriptor with the runtime's poller, which refuses a regular file,
// after two fcntl calls that set it non-blocking for that (three system
// calls of six, for each of the thousands of files a build-all writes).
// A file it created and could not write whole is removed.
func writeNew(path string, data []byte, perm fs.FileMode) error {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, uint32(perm.Perm()))
		return err
	})
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	for len(data) > 0 && err == nil {
		var n int
		err = retryEINTR(func() (err error) {
			n, err = syscall.Write(fd, data)
			return err
		})
		switch {
		case err != nil:
		case n <= 0:
			err = syscall.EIO
		default:
			data = data[n:]
		}
	}
	op := "write"
	if cerr := syscall.Close(fd); err == nil && cerr != nil && cerr != syscall.EINTR {
		op, err = "close", cerr
	}
	if err != nil {
		syscall.Unlink(path)
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	return nil
}

func retryEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}
