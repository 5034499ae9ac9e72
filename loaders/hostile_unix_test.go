//go:build unix

package loaders

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A kustomization file or a resource that is a FIFO or a device is refused
// at once: kpipe neither blocks on it nor reads /dev/zero until memory
// runs out, whatever the load restrictor.
func TestFIFOsAndDevicesAreRefusedAsInputs(t *testing.T) {
	for _, r := range []Restriction{RootOnly, None} {
		for _, tc := range []struct {
			name, want string
			make       func(p string) error
		}{
			{"fifo", "a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
			{"devzero", "a character device", func(p string) error { return os.Symlink("/dev/zero", p) }},
		} {
			t.Run(r.String()+"/"+tc.name, func(t *testing.T) {
				kdir, rdir := t.TempDir(), t.TempDir()
				if err := tc.make(filepath.Join(kdir, "kustomization.yaml")); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(rdir, "kustomization.yaml"), []byte("resources:\n- cm.yaml\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := tc.make(filepath.Join(rdir, "cm.yaml")); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 2)
				go func() { _, err := FindKustomization(kdir, r); done <- err }()
				go func() {
					l, err := New(rdir, r)
					if err == nil {
						_, _, err = l.ReadFile("cm.yaml")
					}
					done <- err
				}()
				for range 2 {
					select {
					case err := <-done:
						if err == nil || !(strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "security; file")) {
							t.Errorf("got %v, want a refusal (%s or the restrictor)", err, tc.want)
						}
					case <-time.After(20 * time.Second):
						t.Fatal("reading a FIFO or a device blocked")
					}
				}
			})
		}
	}
}
