//go:build !linux && !darwin

package cache

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
)

// statIDs returns the inode, device and ctime where this platform's
// os.FileInfo has them; here it has none, so the stat index relies on
// size and modification time (and re-hashes files modified within
// racyWindow of being recorded).
func statIDs(os.FileInfo) (ino, dev uint64, ctime int64) { return 0, 0, 0 }

// diskUsage is the space fi takes on disk: its size in whole 4 KiB blocks.
func diskUsage(fi os.FileInfo) int64 { return roundBlock(fi.Size()) }

// renameBusy reports whether a rename failed because another process holds
// the target open (Windows refuses to replace such a file).
func renameBusy(err error) bool {
	return runtime.GOOS == "windows" && errors.Is(err, fs.ErrPermission)
}

// packsSupported is false where os.FileInfo gives no link count: every
// file is written on its own (Options.Pack is ignored).
const packsSupported = false

// linkCount returns no identity here: every file counts on its own.
func linkCount(os.FileInfo) (dev, ino, nlink uint64, ok bool) { return 0, 0, 1, false }
