package loaders

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
)

// Restriction says which files a kustomization may read.
type Restriction int

const (
	// RootOnly allows only files in or below the kustomization's root
	// (after resolving symlinks). It is kustomize's default.
	RootOnly Restriction = iota
	// None allows any file.
	None
)

// String returns the flag spelling of the restriction.
func (r Restriction) String() string {
	if r == None {
		return "LoadRestrictionsNone"
	}
	return "LoadRestrictionsRootOnly"
}

// ParseRestriction parses the --load-restrictor flag value.
func ParseRestriction(s string) (Restriction, error) {
	switch s {
	case "", "LoadRestrictionsRootOnly", "rootOnly":
		return RootOnly, nil
	case "LoadRestrictionsNone", "none":
		return None, nil
	}
	return RootOnly, fmt.Errorf("illegal flag value --load-restrictor %s; legal values: [LoadRestrictionsRootOnly LoadRestrictionsNone]", s)
}

// Loader reads files relative to one kustomization root, through an FS.
type Loader struct {
	fs          FS
	root        string
	restriction Restriction
	onRead      func(path, real string, data []byte, fi os.FileInfo)
	onReadTree  func(path, real string, listing []byte)
}

// OnRead sets a function called after every successful ReadFile with the
// path as asked, its real path and the data read. The build uses it to
// learn which files a kustomization's stages read, for the cache. It must
// be set before the loader is used concurrently.
func (l *Loader) OnRead(fn func(path, real string, data []byte, fi os.FileInfo)) { l.onRead = fn }

// OnReadTree sets a function called after every successful ReadTree with
// the directory as asked, its real path and its listing (see TreeListing),
// so that the build can tell when files are added to or removed from it.
// The files read are also reported to the OnRead function. It must be set
// before the loader is used concurrently.
func (l *Loader) OnReadTree(fn func(path, real string, listing []byte)) { l.onReadTree = fn }

// New returns a loader of fsys rooted at dir, which must be a directory.
// The root is made absolute and its symlinks are resolved.
func New(fsys FS, dir string, r Restriction) (*Loader, error) {
	root, err := RealDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	return &Loader{fs: fsys, root: root, restriction: r}, nil
}

// NewReal is New for a directory the caller has resolved already (by
// RealDir or Loader.Resolve): absolute, symlink-free and a directory. It
// touches no file: resolving again cost a stat of every path component,
// for every kustomization of a build.
func NewReal(fsys FS, dir string, r Restriction) *Loader {
	return &Loader{fs: fsys, root: dir, restriction: r}
}

// RealDir returns the absolute, symlink-free form of dir in fsys, or an
// error when dir is not a directory. A relative dir is taken from the
// working directory.
func RealDir(fsys FS, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := fsys.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("must build at directory: not a valid directory: evalsymlink failure on '%s' : %w", abs, unwrapPathError(err))
	}
	st, err := fsys.Stat(real)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("must build at directory: '%s': file is not directory", real)
	}
	return real, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %w", pe.Op, pe.Path, pe.Err)
	}
	return err
}

// FS returns what the loader reads through.
func (l *Loader) FS() FS { return l.fs }

// On returns a copy of the loader that reads through fsys, with the same
// root, restriction and reporting (OnRead, OnReadTree): for what lies in
// another tree than the loader's, a helm chart kpipe pulled into its cache
// for a kustomization of a git revision, say.
func (l *Loader) On(fsys FS) *Loader {
	c := *l
	c.fs = fsys
	return &c
}

// Root returns the loader's absolute root directory.
func (l *Loader) Root() string { return l.root }

// Restriction returns the loader's restriction.
func (l *Loader) Restriction() Restriction { return l.restriction }

// Abs returns path joined to the root, unless it is already absolute.
func (l *Loader) Abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(l.root, path)
}

// Kind of a path found by Stat.
type Kind int

const (
	// Missing means nothing exists at the path.
	Missing Kind = iota
	// File is a regular file (or a symlink to one).
	File
	// Dir is a directory (or a symlink to one).
	Dir
)

// Resolve returns the absolute, symlink-free form of path (relative to the
// root) and what is there. It does not apply the restriction.
func (l *Loader) Resolve(path string) (string, Kind, error) {
	abs := l.Abs(path)
	if st, ok := lstatBelow(l.fs, l.root, abs); ok {
		if st.IsDir() {
			return abs, Dir, nil
		}
		return abs, File, nil
	}
	real, err := l.fs.EvalSymlinks(abs)
	if err != nil {
		return abs, Missing, fmt.Errorf("evalsymlink failure on '%s' : %w", abs, unwrapPathError(err))
	}
	st, err := l.fs.Stat(real)
	if err != nil {
		return real, Missing, err
	}
	if st.IsDir() {
		return real, Dir, nil
	}
	return real, File, nil
}

// lstatBelow is the quick way to resolve abs, a clean absolute path, when
// it shares a prefix with real, a symlink-free directory: that prefix
// holds no symlink, so only the components after it are looked at (one
// Lstat each, where filepath.EvalSymlinks looks at every component from
// the file system's root). It returns what is at abs, and true, when none
// of those components is a symlink and abs exists, so that abs is its own
// real path; otherwise false, and the caller resolves abs the slow way
// (which also words the error). Not on Windows, whose volume names and
// reparse points are EvalSymlinks's business.
func lstatBelow(fsys FS, real, abs string) (os.FileInfo, bool) {
	if runtime.GOOS == "windows" {
		return nil, false
	}
	sep := string(filepath.Separator)
	// The longest common prefix of whole components.
	prefix := real
	for !Within(prefix, abs) {
		parent := filepath.Dir(prefix)
		if parent == prefix {
			return nil, false
		}
		prefix = parent
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(abs, prefix), sep)
	if rest == "" {
		st, err := fsys.Stat(abs)
		return st, err == nil
	}
	cur := prefix
	var st os.FileInfo
	for _, c := range strings.Split(rest, sep) {
		cur = filepath.Join(cur, c)
		var err error
		if st, err = fsys.Lstat(cur); err != nil || st.Mode()&os.ModeSymlink != 0 {
			return nil, false
		}
	}
	return st, true
}

// check returns an error when the restriction forbids reading the file at
// real, an absolute symlink-free path.
func (l *Loader) check(real string) error {
	if l.restriction == None {
		return nil
	}
	if !Within(l.root, filepath.Dir(real)) {
		return fmt.Errorf("security; file '%s' is not in or below '%s'", real, l.root)
	}
	return nil
}

// Within reports whether path is dir or lies below it. Both must be clean
// absolute paths.
func Within(dir, path string) bool {
	if dir == string(filepath.Separator) || dir == path {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// ReadFile reads the file at path (relative to the root), enforcing the
// restriction. It returns the file's absolute real path with its content.
func (l *Loader) ReadFile(path string) ([]byte, string, error) {
	data, real, _, err := l.ReadFileStat(path)
	return data, real, err
}

// ReadFileStat is ReadFile that also returns the stat of the file taken
// before it was read (fsread.FileStat).
func (l *Loader) ReadFileStat(path string) ([]byte, string, os.FileInfo, error) {
	// Most files are named in the root's directory, or in one of its
	// ancestors' (which are symlink-free, as the root is): such a file is
	// opened without following a symlink, and when that works, it is its
	// own real path, with no Lstat first (Resolve). Anything else (a
	// symlink, a directory, a missing file) takes the way below, which
	// words the error.
	if abs := l.Abs(path); runtime.GOOS != "windows" && Within(filepath.Dir(abs), l.root) && l.check(abs) == nil {
		if data, fi, err := l.fs.ReadFile(abs, false); err == nil {
			if l.onRead != nil {
				l.onRead(path, abs, data, fi)
			}
			return data, abs, fi, nil
		}
	}
	real, kind, err := l.Resolve(path)
	if l.restriction == None && (err != nil || kind == Dir) {
		// kustomize reads the joined path with no restrictor in between:
		// the file system's own errors.
		abs := l.Abs(path)
		if err != nil {
			var errno syscall.Errno
			if errors.As(err, &errno) {
				err = errno
			}
			return nil, real, nil, &fs.PathError{Op: "open", Path: abs, Err: err}
		}
		return nil, real, nil, &fs.PathError{Op: "read", Path: abs, Err: syscall.EISDIR}
	}
	if err != nil {
		return nil, real, nil, err
	}
	if kind == Dir {
		return nil, real, nil, fmt.Errorf("'%s' must resolve to a file", real)
	}
	if err := l.check(real); err != nil {
		return nil, real, nil, err
	}
	data, fi, err := l.fs.ReadFile(real, true)
	if err == nil && l.onRead != nil {
		l.onRead(path, real, data, fi)
	}
	return data, real, fi, err
}

// ErrNotDirectory is the error ReadTree wraps when its path is a file.
var ErrNotDirectory = errors.New("is not a directory")

// TreeFile is one regular file of a directory tree read by ReadTree.
type TreeFile struct {
	// Rel is the file's path relative to the tree's root, with slashes.
	Rel string
	// Data is the file's content.
	Data []byte
	// Mode is the file's permission bits (an executable has 0o111 set).
	Mode fs.FileMode
}

// ReadTree reads every regular file below the directory at path (relative
// to the root), following symlinks as helm does when it loads a chart, in
// lexical order of their relative paths. Like helm, which reads a chart
// wherever it is, it does not apply the restriction. It returns the
// directory's real path with the files.
func (l *Loader) ReadTree(path string) ([]TreeFile, string, error) {
	real, kind, err := l.Resolve(path)
	if err != nil {
		return nil, real, err
	}
	if kind != Dir {
		return nil, real, fmt.Errorf("'%s': %w", real, ErrNotDirectory)
	}
	files, tree, err := readTree(l.fs, real, func(rel, real string, data []byte) {
		if l.onRead != nil {
			l.onRead(filepath.Join(path, filepath.FromSlash(rel)), real, data, nil)
		}
	})
	if err != nil {
		return nil, real, err
	}
	if l.onReadTree != nil {
		l.onReadTree(path, real, listing(tree))
	}
	return files, real, nil
}

// ReadTreeOf reads every regular file below the directory dir (absolute,
// symlink-free) of fsys as ReadTree reads them, with no loader: no file
// is reported, and no restriction applies (what a plugin run in a copy
// of its kustomization's directory could read there).
func ReadTreeOf(fsys FS, dir string) ([]TreeFile, error) {
	files, _, err := readTree(fsys, dir, nil)
	return files, err
}

// readTree reads the regular files below real (absolute, symlink-free)
// of fsys, calling read (if set) for each, and returns them with the
// walk's entries.
func readTree(fsys FS, real string, read func(rel, real string, data []byte)) ([]TreeFile, []treeEntry, error) {
	tree, err := walkTree(fsys, real)
	if err != nil {
		return nil, nil, err
	}
	files := make([]TreeFile, 0, len(tree))
	// A file reached through several symlinked paths (a chart whose
	// symlinks form a DAG) is read once.
	read1 := map[string][]byte{}
	var total int64
	for _, e := range tree {
		data, ok := read1[e.real]
		if !ok {
			if data, _, err = fsys.ReadFile(e.real, true); err != nil {
				return nil, nil, err
			}
			read1[e.real] = data
		}
		if total += int64(len(data)); total > maxTreeBytes {
			return nil, nil, fmt.Errorf("'%s': its files come to more than %d MiB (symlinks that repeat directories count each time), the most kpipe reads from one tree", real, maxTreeBytes>>20)
		}
		if read != nil {
			read(e.rel, e.real, data)
		}
		files = append(files, TreeFile{Rel: e.rel, Data: data, Mode: e.mode})
	}
	return files, tree, nil
}

// TreeListing returns the listing of the directory real (absolute,
// symlink-free) of fsys: the relative paths of the regular files ReadTree
// would read, one a line.
func TreeListing(fsys FS, real string) ([]byte, error) {
	tree, err := walkTree(fsys, real)
	if err != nil {
		return nil, err
	}
	return listing(tree), nil
}

func listing(tree []treeEntry) []byte {
	var b strings.Builder
	for _, e := range tree {
		b.WriteString(e.rel)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// maxTreeEntries and maxTreeBytes bound a tree ReadTree reads (a helm
// chart): its files and directories, counted once per path they are reached
// by, and the bytes of its files, likewise. Symlinks that form a DAG (each
// level linking twice to the next) multiply paths exponentially; helm
// follows them all, kpipe stops with an error.
const (
	maxTreeEntries = 20000
	maxTreeBytes   = 1 << 30
)

// treeEntry is a regular file of a tree: its path relative to the tree's
// root (slashes), its real path and its permission bits.
type treeEntry struct {
	rel, real string
	mode      fs.FileMode
}

// walkTree lists the regular files below dir (absolute and symlink-free)
// of fsys,
// following symlinks to files and directories, in lexical order of their
// relative paths; a symlink back to a directory being walked is an error,
// and so is a tree of more than MaxTreeEntries files and directories. Real
// paths are resolved one symlink at a time as the walk descends, so a deep
// path costs no more than a shallow one.
func walkTree(fsys FS, dir string) ([]treeEntry, error) {
	var out []treeEntry
	entries := 0
	var walk func(real, rel string, seen map[string]bool) error
	walk = func(real, rel string, seen map[string]bool) error {
		if seen[real] {
			return fmt.Errorf("symlink cycle at '%s'", filepath.Join(dir, filepath.FromSlash(rel)))
		}
		seen[real] = true
		defer delete(seen, real)
		list, err := readDirSorted(fsys, real)
		if err != nil {
			return err
		}
		for _, e := range list {
			if entries++; entries > maxTreeEntries {
				return fmt.Errorf("'%s': more than %d files and directories (symlinks that repeat directories count each time), the most kpipe reads from one tree", dir, maxTreeEntries)
			}
			childReal := filepath.Join(real, e.Name())
			childRel := path.Join(rel, e.Name())
			if e.Type()&fs.ModeSymlink != 0 {
				// real holds no symlink: resolving the child resolves the
				// link's target from real, as opening the path would.
				var err error
				if childReal, err = fsys.EvalSymlinks(childReal); err != nil {
					return err
				}
			}
			st, err := fsys.Stat(childReal)
			if err != nil {
				return err
			}
			switch {
			case st.IsDir():
				if err := walk(childReal, childRel, seen); err != nil {
					return err
				}
			case st.Mode().IsRegular():
				out = append(out, treeEntry{rel: childRel, real: childReal, mode: st.Mode().Perm()})
			}
		}
		return nil
	}
	if err := walk(dir, "", map[string]bool{}); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out, nil
}
