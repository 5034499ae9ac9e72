package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/loaders"
)

// realDirs gives the nodes of a tree that is not on disk (a git revision,
// an in-memory tree) a directory on disk, for what runs as a separate
// process in it: exec plugins and KRM functions. Only the directories of
// the nodes that run them are written, each once a build, below one
// temporary directory at the path they have in the tree (so that a
// relative path from one of them, an exec function's `../fns/run.sh`,
// leads where it leads in the tree), and removed when the build ends.
// Helm needs none: the chart's files are read through the loader and
// helm runs on a copy of its own (stages/helm.go).
type realDirs struct {
	mu   sync.Mutex
	top  string          // the temporary directory ("" until the first)
	made map[string]bool // paths of the tree written (directories and files)
	err  error
}

// at is where path of the tree lies on disk (under top).
func (r *realDirs) at(path string) string {
	return filepath.Join(r.top, strings.TrimPrefix(path, filepath.VolumeName(path)))
}

// dir returns a directory on disk holding the files below dir of fsys
// (following symlinks, as a plugin reading them would), writing it on
// first use.
func (r *realDirs) dir(fsys loaders.FS, dir string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.start(); err != nil {
		return "", err
	}
	dst := r.at(dir)
	if r.made[dir] {
		return dst, nil
	}
	files, err := loaders.ReadTreeOf(fsys, dir)
	if err != nil {
		return "", fmt.Errorf("writing %s to a directory for its plugins: %w", dir, err)
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return "", err
	}
	for _, f := range files {
		if err := r.write(filepath.Join(dst, filepath.FromSlash(f.Rel)), f.Data, f.Mode); err != nil {
			return "", err
		}
	}
	r.made[dir] = true
	return dst, nil
}

// file writes the regular file at path of fsys (unless written already)
// and returns where it lies on disk.
func (r *realDirs) file(fsys loaders.FS, path string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.start(); err != nil {
		return "", err
	}
	dst := r.at(path)
	if r.made[path] {
		return dst, nil
	}
	data, fi, err := fsys.ReadFile(path, true)
	if err != nil {
		return "", err
	}
	if err := r.write(dst, data, fi.Mode().Perm()); err != nil {
		return "", err
	}
	r.made[path] = true
	return dst, nil
}

func (r *realDirs) start() error {
	if r.err != nil || r.top != "" {
		return r.err
	}
	r.top, r.err = os.MkdirTemp("", "kpipe-tree-")
	r.made = map[string]bool{}
	return r.err
}

// write writes a file of the tree, keeping its execute bits; an existing
// file (a node's directory below another's) is left as it is.
func (r *realDirs) write(dst string, data []byte, mode os.FileMode) error {
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	perm := os.FileMode(0o600)
	if mode&0o111 != 0 {
		perm = 0o700
	}
	return os.WriteFile(dst, data, perm)
}

// remove deletes what was written.
func (r *realDirs) remove() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.top != "" {
		os.RemoveAll(r.top)
		r.top, r.made = "", nil
	}
}
