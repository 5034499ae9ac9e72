package badger

import (
	"os"

	"golang.org/x/sys/windows"
)

// freeSpace returns the bytes the process may still write on the volume
// of dir.
func freeSpace(dir string) (int64, bool) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, false
	}
	var avail, total, free uint64
	if windows.GetDiskFreeSpaceEx(p, &avail, &total, &free) != nil {
		return 0, false
	}
	return int64(avail), true
}

// allocated is fi's length (NTFS allocates sparse files' holes lazily too).
func allocated(fi os.FileInfo) int64 { return fi.Size() }
