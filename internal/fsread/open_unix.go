//go:build unix

package fsread

import (
	"os"
	"syscall"
)

// open opens path for reading without blocking on a FIFO swapped in after
// the stat and, unless follow, without following a final symlink.
func open(path string, follow bool) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	return os.OpenFile(path, flags, 0)
}
