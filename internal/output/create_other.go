//go:build !linux

package output

import (
	"io/fs"
	"os"
)

// writeNew creates the file at path, which must not exist (an error
// wrapping fs.ErrExist otherwise), with perm less the umask, and writes
// data to it. A file it created and could not write whole is removed.
func writeNew(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
