//go:build unix

package loaders

import (
	"errors"
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
				go func() { _, err := FindKustomization(Disk, kdir, r); done <- err }()
				go func() {
					l, err := New(Disk, rdir, r)
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

// An unreadable kustomization file (a symlink to a device, a symlink
// leaving the root, a FIFO), under each of its three names, gives an
// error whose plain line names the file and says what is wrong, in front
// of kustomize's wording (kept unchanged for scripts).
func TestUnreadableKustomizationFileIsNamed(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "kustomization.yaml")
	if err := os.WriteFile(outside, []byte("resources: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range FileNames {
		for _, tc := range []struct {
			what string
			r    Restriction
			make func(p string) error
			hint []string // in the plain line, besides the file's path
			err  string   // in the wrapped error
		}{
			{"devzero", RootOnly, func(p string) error { return os.Symlink("/dev/zero", p) },
				[]string{"a symlink to /dev/zero", "outside the kustomization's directory", "--load-restrictor LoadRestrictionsNone"}, "security; file '/dev/zero'"},
			{"devzero-none", None, func(p string) error { return os.Symlink("/dev/zero", p) },
				[]string{"a symlink to /dev/zero", "not a regular file (a character device)"}, "not a regular file"},
			{"outside", RootOnly, func(p string) error { return os.Symlink(outside, p) },
				[]string{"a symlink to " + outside, "outside the kustomization's directory"}, "security; file"},
			{"fifo", RootOnly, func(p string) error { return syscall.Mkfifo(p, 0o644) },
				[]string{"is not a regular file (a FIFO)"}, "not a regular file"},
		} {
			t.Run(name+"/"+tc.what, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, name)
				if err := tc.make(path); err != nil {
					t.Fatal(err)
				}
				_, err := FindKustomization(Disk, dir, tc.r)
				var h *Hinted
				if !errors.As(err, &h) {
					t.Fatalf("error %v carries no plain line", err)
				}
				if !strings.HasPrefix(h.Hint, path+": ") {
					t.Errorf("plain line %q does not start with the file %s", h.Hint, path)
				}
				for _, w := range tc.hint {
					if !strings.Contains(h.Hint, w) {
						t.Errorf("plain line %q does not say %q", h.Hint, w)
					}
				}
				if !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %q lost kustomize's wording %q", err, tc.err)
				}
			})
		}
	}
}
