//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cache

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, waiting for it; it guards only
// the size estimate in trim.txt, never an entry.
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
