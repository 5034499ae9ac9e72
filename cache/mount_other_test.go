//go:build !linux

package cache

import (
	"os"
	"path/filepath"
	"testing"
)

// readOnly makes dir read-only (mode 0500); as root, which ignores
// permission bits, the test is skipped.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() == 0 {
		t.Skip("root ignores permission bits")
	}
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
}

// mountTmpfs needs Linux.
func mountTmpfs(t *testing.T, _, _ string) { t.Skip("needs a Linux tmpfs") }
