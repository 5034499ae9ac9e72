package render

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/kpipe/kpipe/internal/argocd/source"

	"github.com/kpipe/kpipe/internal/gitfs"
	"github.com/kpipe/kpipe/loaders"
)

// Tree is one repository's checkout seen both ways the rendering reads
// it: package generate through io/fs (slash paths from the repository's
// root: the embedded fs.FS), the engine through loaders.FS (absolute
// paths below Dir). A Tree is what an app.Checkout's FS holds for this
// renderer (or a View of one).
type Tree struct {
	fs.FS
	// Files is the engine's view of the same tree, Dir the absolute,
	// symlink-free path of the repository's root in it.
	Files loaders.FS
	Dir   string

	symlinks    sync.Once
	symlinksErr error
}

// DiskTree is the directory dir on disk as a Tree.
func DiskTree(dir string) (*Tree, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, err
	}
	return &Tree{FS: os.DirFS(abs), Files: loaders.Disk, Dir: abs}, nil
}

// GitTree is a git revision's tree as a Tree whose files appear below
// mount (an absolute path never written to disk: see loaders.NewFS).
func GitTree(t *gitfs.FS, mount string) *Tree {
	mount = filepath.Clean(mount)
	return &Tree{FS: t, Files: loaders.NewFS(t, mount), Dir: mount}
}

// Tree makes *Tree a Viewer.
func (t *Tree) Tree() *Tree { return t }

// Abs is the absolute path of rel (a slash path from the root) in Files.
func (t *Tree) Abs(rel string) string {
	if rel == "" || rel == "." {
		return t.Dir
	}
	return filepath.Join(t.Dir, filepath.FromSlash(rel))
}

// ReadFile, ReadDir, Stat, Lstat and ReadLink give the embedded tree's
// own implementations (fs.ReadFileFS and the others) to its users.
func (t *Tree) ReadFile(name string) ([]byte, error)       { return fs.ReadFile(t.FS, name) }
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(t.FS, name) }
func (t *Tree) Stat(name string) (fs.FileInfo, error)      { return fs.Stat(t.FS, name) }

// Lstat is fs.ReadLinkFS's: a final symlink is not followed.
func (t *Tree) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(t.FS, name) }

// ReadLink is fs.ReadLinkFS's.
func (t *Tree) ReadLink(name string) (string, error) { return fs.ReadLink(t.FS, name) }

// CheckSymlinks is the repo-server's out-of-bounds symlink check of the
// whole tree (source.CheckSymlinks), made once.
func (t *Tree) CheckSymlinks() error {
	t.symlinks.Do(func() { t.symlinksErr = source.CheckSymlinks(t.FS) })
	return t.symlinksErr
}

// A Viewer is a Tree, or a view of one (View): what the renderer finds
// in an app.Checkout's FS.
type Viewer interface {
	fs.FS
	Tree() *Tree
}
