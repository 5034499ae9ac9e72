package render

import (
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/kpipe/kpipe/loaders"
)

// overlay is a tree (base) with files in memory laid over it: the
// kustomization flux build would write into the path, served to the
// engine without being written. Its paths are absolute and symlink-free;
// everything else is base's. A file of the overlay is a regular file
// whose stat names its content (cache.ContentID), so that the cache's file
// index keys it by its bytes, never by a stat of what lies on disk there.
type overlay struct {
	base  loaders.FS
	files map[string][]byte
	names map[string]bool // the base names of files, to skip lookups
}

// newOverlay lays files (absolute symlink-free path -> content) over base.
func newOverlay(base loaders.FS, files map[string][]byte) *overlay {
	o := &overlay{base: base, files: files, names: map[string]bool{}}
	for p := range files {
		o.names[filepath.Base(p)] = true
	}
	return o
}

// virtual returns the overlay path p leads to (following the symlinks of
// its directory), or "".
func (o *overlay) virtual(p string) string {
	p = filepath.Clean(p)
	if _, ok := o.files[p]; ok {
		return p
	}
	if !o.names[filepath.Base(p)] {
		return ""
	}
	dir, err := o.base.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return ""
	}
	if q := filepath.Join(dir, filepath.Base(p)); o.has(q) {
		return q
	}
	return ""
}

func (o *overlay) info(p string) fs.FileInfo {
	return loaders.MemFileInfo(filepath.Base(p), o.files[p])
}

func (o *overlay) Stat(p string) (fs.FileInfo, error) {
	if v := o.virtual(p); v != "" {
		return o.info(v), nil
	}
	return o.base.Stat(p)
}

func (o *overlay) Lstat(p string) (fs.FileInfo, error) {
	if v := o.virtual(p); v != "" {
		return o.info(v), nil
	}
	return o.base.Lstat(p)
}

func (o *overlay) EvalSymlinks(p string) (string, error) {
	if v := o.virtual(p); v != "" {
		return v, nil
	}
	return o.base.EvalSymlinks(p)
}

func (o *overlay) Readlink(p string) (string, error) {
	if v := o.virtual(p); v != "" {
		return "", &fs.PathError{Op: "readlink", Path: p, Err: syscall.EINVAL}
	}
	return o.base.Readlink(p)
}

func (o *overlay) ReadFile(p string, follow bool) ([]byte, fs.FileInfo, error) {
	if v := o.virtual(p); v != "" {
		return append([]byte(nil), o.files[v]...), o.info(v), nil
	}
	return o.base.ReadFile(p, follow)
}

func (o *overlay) ReadDir(p string) (fs.FileInfo, []fs.DirEntry, error) {
	fi, entries, err := o.base.ReadDir(p)
	if err != nil {
		return fi, entries, err
	}
	real, err := o.base.EvalSymlinks(p)
	if err != nil {
		return fi, entries, nil
	}
	for f := range o.files {
		if filepath.Dir(f) != real {
			continue
		}
		name := filepath.Base(f)
		e := fs.FileInfoToDirEntry(o.info(f))
		replaced := false
		for i := range entries {
			if entries[i].Name() == name {
				entries[i], replaced = e, true
			}
		}
		if !replaced {
			entries = append(entries, e)
		}
	}
	return fi, entries, nil
}

func (o *overlay) has(p string) bool {
	_, ok := o.files[p]
	return ok
}
