//go:build !linux

package fsread

import (
	"io/fs"
	"os"
)

// ReadDir returns the stat of the directory at path and its entries, in
// the order the file system lists them, both read through one open
// descriptor (so the stat is taken before the listing).
func ReadDir(path string) (os.FileInfo, []fs.DirEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	entries, err := f.ReadDir(-1)
	return fi, entries, err
}
