//go:build !linux

package fsread

import "os"

// readFile opens the file at path as openRegular does and reads it, up
// to limit, as readLimited does.
func readFile(path string, follow bool, limit int64) ([]byte, os.FileInfo, error) {
	f, st, err := openRegular(path, follow)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := readLimited(f, path, st, limit)
	return data, st, err
}

// openOwn opens path as openRegular does, not following a symlink.
func openOwn(path string) (OwnFile, os.FileInfo, error) {
	f, st, err := openRegular(path, false)
	if err != nil {
		return nil, nil, err
	}
	return f, st, nil
}
