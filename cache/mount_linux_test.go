package cache

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// readOnly makes dir read-only: a read-only bind mount when running as
// root (root ignores permission bits), else mode 0500.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.IsDir() {
				os.Chmod(p, 0o500)
			}
			return nil
		})
		t.Cleanup(func() {
			filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.IsDir() {
					os.Chmod(p, 0o700)
				}
				return nil
			})
		})
		return
	}
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount %s: %v", dir, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	if err := syscall.Mount("", dir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount %s read-only: %v", dir, err)
	}
}

// mountTmpfs mounts a tmpfs of the given size on dir for the test.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
}
