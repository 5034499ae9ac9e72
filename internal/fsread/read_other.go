//go:build !linux

package fsread

import "os"

// readFile opens the file at path as openRegular does and reads it, up
// to limit, as readLimited does.
func readFile(path string, follow bool, limit int64) ([]byte, os.FileInfo, error) {
	return readOpened(path, follow, limit)
}
