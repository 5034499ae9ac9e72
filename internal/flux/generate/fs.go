package generate

import (
	"io/fs"
	"slices"
	"sync"

	"github.com/kpipe/kpipe/internal/flux"
)

// Reads are what a generation read: a cache key for it must cover the
// contents of Files, whether each of Stats exists and what it is, and the
// listing of each of Dirs (adding a YAML file, a .sourceignore or a
// kustomization file anywhere under the path changes what is generated).
// Paths are absolute, sorted, without duplicates.
type Reads struct {
	Files []string
	Stats []string
	Dirs  []string
}

// recorder is the generator's view of the tree: the caller's FS, with
// every path it is asked about recorded.
type recorder struct {
	fsys flux.FS

	mu                 sync.Mutex
	files, stats, dirs map[string]bool
}

func newRecorder(fsys flux.FS) *recorder {
	return &recorder{fsys: fsys, files: map[string]bool{}, stats: map[string]bool{}, dirs: map[string]bool{}}
}

func (r *recorder) note(m map[string]bool, p string) {
	r.mu.Lock()
	m[p] = true
	r.mu.Unlock()
}

func (r *recorder) stat(p string) (fs.FileInfo, error) {
	r.note(r.stats, p)
	return r.fsys.Stat(p)
}

func (r *recorder) lstat(p string) (fs.FileInfo, error) {
	r.note(r.stats, p)
	return r.fsys.Lstat(p)
}

// exists is kustomize's FileSystem.Exists: Stat succeeds.
func (r *recorder) exists(p string) bool {
	_, err := r.stat(p)
	return err == nil
}

// isFile is "exists and is not a directory" (following symlinks).
func (r *recorder) isFile(p string) bool {
	fi, err := r.stat(p)
	return err == nil && !fi.IsDir()
}

func (r *recorder) readFile(p string) ([]byte, error) {
	r.note(r.files, p)
	data, _, err := r.fsys.ReadFile(p, true)
	return data, err
}

// readDir lists a directory, sorted by name.
func (r *recorder) readDir(p string) ([]fs.DirEntry, error) {
	r.note(r.dirs, p)
	_, entries, err := r.fsys.ReadDir(p)
	if err != nil {
		return nil, err
	}
	return sortedEntries(entries), nil
}

// readIgnoreFile reads an ignore file as sourceignore opens it: a missing
// one (or a directory, which reads as empty) has no patterns.
func (r *recorder) readIgnoreFile(p string) ([]byte, error) {
	fi, err := r.stat(p)
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	if fi.IsDir() {
		return nil, nil
	}
	return r.readFile(p)
}

func (r *recorder) reads() Reads {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := func(m map[string]bool) []string {
		out := make([]string, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	return Reads{Files: keys(r.files), Stats: keys(r.stats), Dirs: keys(r.dirs)}
}
