//go:build linux || darwin || freebsd || netbsd || openbsd

package badgerdb

import "golang.org/x/sys/unix"

// freeSpace returns the bytes an unprivileged process may still write on
// the file system of dir.
func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0, false
	}
	return int64(uint64(st.Bavail) * uint64(st.Bsize)), true //nolint:unconvert // field types differ by platform
}
