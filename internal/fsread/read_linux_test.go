package fsread

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The descriptor-level read sees a file that changed after its stat as
// the *os.File one does.
func TestRawReadSeesAFileThatChangedSinceItsStat(t *testing.T) {
	changedSinceStat(t, func(p string) (io.Reader, os.FileInfo, func(), error) {
		fd, st, err := openRaw(p, false)
		if err != nil {
			return nil, nil, nil, err
		}
		return fdReader(fd), st, func() { syscall.Close(fd) }, nil
	})
}

// FileStat's os.FileInfo, filled from a bare fstat, says what os.Stat's
// says, down to the fields the cache's stat index compares.
func TestFileStatInfoIsOsStats(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		mode os.FileMode
	}{
		{"plain.yaml", 0o644},
		{"setuid", 0o755 | os.ModeSetuid},
		{"setgid-sticky", 0o700 | os.ModeSetgid | os.ModeSticky},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte("kind: ConfigMap\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, c.mode); err != nil {
			t.Fatal(err)
		}
		data, got, err := FileStat(p)
		if err != nil || string(data) != "kind: ConfigMap\n" {
			t.Fatalf("FileStat(%s) = %q, %v", c.name, data, err)
		}
		want, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name() != want.Name() || got.Size() != want.Size() || got.Mode() != want.Mode() ||
			!got.ModTime().Equal(want.ModTime()) || got.IsDir() != want.IsDir() {
			t.Errorf("%s: FileStat's info %s %d %v %v, os.Stat's %s %d %v %v", c.name,
				got.Name(), got.Size(), got.Mode(), got.ModTime(), want.Name(), want.Size(), want.Mode(), want.ModTime())
		}
		// All but the access time, which the read itself may move.
		gs, ws := *got.Sys().(*syscall.Stat_t), *want.Sys().(*syscall.Stat_t)
		gs.Atim, ws.Atim = syscall.Timespec{}, syscall.Timespec{}
		if gs != ws {
			t.Errorf("%s: FileStat's Sys %+v, os.Stat's %+v", c.name, gs, ws)
		}
	}
}
