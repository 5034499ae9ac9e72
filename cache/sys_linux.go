package cache

import (
	"os"
	"syscall"
)

// statIDs returns what git's index compares beside size and mtime: the
// inode, the device and the status-change time (ctime), which an in-place
// edit that keeps size and mtime (cp -p, rsync --inplace, touch -r)
// still moves.
func statIDs(fi os.FileInfo) (ino, dev uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino, uint64(st.Dev), st.Ctim.Nano()
	}
	return 0, 0, 0
}

// diskUsage is the space fi takes on disk, as du counts it.
func diskUsage(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return roundBlock(fi.Size())
}

func renameBusy(error) bool { return false }

// packsSupported: hard links work, and linkCount finds a pack's names.
const packsSupported = true

// linkCount returns the file's identity (device and inode) and how many
// names it has, so that a scan counts a pack once, as du does.
func linkCount(fi os.FileInfo) (dev, ino, nlink uint64, ok bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino, uint64(st.Nlink), true
	}
	return 0, 0, 1, false
}
