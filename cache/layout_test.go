package cache

import (
	"path/filepath"
	"testing"
)

// TestNameIsJoin checks that an entry's path, built from a prefix made
// once per cache directory, is the path filepath.Join gives, whatever
// form the directory was named in.
func TestNameIsJoin(t *testing.T) {
	dirs := []string{"/home/user/.cache/kpipe", "rel/dir", ".", "/", "a//b/", "../up", filepath.Join(t.TempDir(), "cache")}
	const h = "0f3a9c0e7b2d4c1a8e5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f70819"
	for _, dir := range dirs {
		d := newDisk(dir)
		for _, suf := range []string{sufAction, sufData, sufRecord, sufStat} {
			want := filepath.Join(dir, layoutDir, h[:1], h+suf)
			if got := d.name(h, suf); got != want {
				t.Errorf("dir %q, suffix %q: %q, want %q", dir, suf, got, want)
			}
			if got := (&disk{dir: dir}).name(h, suf); got != want {
				t.Errorf("dir %q, suffix %q, a disk made without setDir: %q, want %q", dir, suf, got, want)
			}
		}
	}
}
