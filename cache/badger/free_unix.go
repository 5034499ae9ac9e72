//go:build linux || darwin || freebsd || netbsd || openbsd

package badger

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// freeSpace returns the bytes an unprivileged process may still write on
// the file system of dir.
func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0, false
	}
	return int64(uint64(st.Bavail) * uint64(st.Bsize)), true //nolint:unconvert // field types differ by platform
}

// allocated is the space fi takes on disk (its blocks: Badger's logs are
// sparse while open).
func allocated(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
