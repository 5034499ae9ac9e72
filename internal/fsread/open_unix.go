//go:build unix

package fsread

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openRefusesSymlinks: open itself refuses a final symlink (O_NOFOLLOW),
// so no Lstat is needed before it.
const openRefusesSymlinks = true

// open opens path for reading without blocking on a FIFO swapped in after
// the stat and, unless follow, without following a final symlink (which
// is refused as not a regular file).
func open(path string, follow bool) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if !follow && errors.Is(err, syscall.ELOOP) {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (symlink)", ErrNotRegular)}
	}
	return f, err
}
