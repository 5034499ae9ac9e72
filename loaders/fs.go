package loaders

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kpipe/kpipe/internal/fsread"
)

// FS is what a Loader reads through: the seam between a build and where
// its tree lies. Disk is the local file system; NewFS gives any fs.FS
// (an in-memory tree, a git revision read from git's objects) the same
// form, mounted at a path of its own.
//
// Paths are absolute and clean, in the operating system's form. Errors
// are those of the os package for the same operation (a *fs.PathError
// naming the path as given, with the same error inside: "no such file or
// directory", "not a directory"), so that a message names a file the
// same way whichever FS read it.
//
// Every method must be safe for concurrent use.
type FS interface {
	// Stat returns what is at path, following symlinks.
	Stat(path string) (fs.FileInfo, error)
	// Lstat returns what is at path; a final symlink is not followed.
	Lstat(path string) (fs.FileInfo, error)
	// EvalSymlinks returns path with every symlink in it resolved, as
	// filepath.EvalSymlinks does.
	EvalSymlinks(path string) (string, error)
	// Readlink returns the target of the symlink at path, as written.
	Readlink(path string) (string, error)
	// ReadFile reads the regular file at path, up to
	// fsread.MaxFileSize, refusing anything else (a directory, a FIFO, a
	// device); a final symlink is followed only when follow is true, and
	// refused otherwise. It returns the file's stat, taken before the
	// read.
	ReadFile(path string, follow bool) ([]byte, fs.FileInfo, error)
	// ReadDir returns the stat of the directory at path (following
	// symlinks) and its entries, in no particular order.
	ReadDir(path string) (fs.FileInfo, []fs.DirEntry, error)
}

// Disk is the local file system, read as kpipe reads inputs (package
// fsread: only regular files, never more than its cap).
var Disk FS = diskFS{}

type diskFS struct{}

func (diskFS) Stat(p string) (fs.FileInfo, error)                   { return os.Stat(p) }
func (diskFS) Lstat(p string) (fs.FileInfo, error)                  { return os.Lstat(p) }
func (diskFS) EvalSymlinks(p string) (string, error)                { return filepath.EvalSymlinks(p) }
func (diskFS) ReadDir(p string) (fs.FileInfo, []fs.DirEntry, error) { return fsread.ReadDir(p) }
func (diskFS) Readlink(p string) (string, error)                    { return os.Readlink(p) }

func (diskFS) ReadFile(p string, follow bool) ([]byte, fs.FileInfo, error) {
	if follow {
		return fsread.FileStat(p)
	}
	return fsread.FileStatNoFollow(p)
}

// readDirSorted is fsys.ReadDir with the entries sorted by name, as
// os.ReadDir returns them.
func readDirSorted(fsys FS, p string) ([]fs.DirEntry, error) {
	_, entries, err := fsys.ReadDir(p)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// NewFS returns the tree held in fsys as an FS whose files lie below
// mount, an absolute path that need not exist: nothing outside fsys is
// read, and a path outside mount names nothing (the directories above
// mount exist, holding only the way to it). Symlinks are read when fsys
// implements fs.ReadLinkFS, and resolved here, as the operating system
// resolves them (a relative target from the link's directory, an
// absolute one in this FS's paths), so that fsys is only ever asked for
// paths without symlinks in them. What fsys's stats return in Sys is
// kept (a git revision's object names: see package cache).
//
// Loaders over it enforce the load restrictor as on disk; helm and
// plugins, which run as separate processes, are given what they read
// as files of their own (see the README's "Trees that are not on disk").
func NewFS(fsys fs.FS, mount string) FS {
	t := &treeFS{fsys: fsys, mount: filepath.Clean(mount)}
	t.links, _ = fsys.(fs.ReadLinkFS)
	t.plain, _ = fsys.(plainLstater)
	return t
}

type treeFS struct {
	fsys  fs.FS
	links fs.ReadLinkFS // nil: fsys has no symlinks
	plain plainLstater  // nil: fsys has no quick way
	mount string
}

// plainLstater is an fs.FS that answers Lstat of a name none of whose
// directories is a symlink by looking its directory up by its path
// (gitfs.FS), and says when it cannot be sure.
type plainLstater interface {
	LstatPlain(name string) (fi fs.FileInfo, err error, sure bool)
}

// errNotExist and errNotDir are the errors the os package wraps for a
// missing file and a file where a directory was needed.
var (
	errNotExist error = syscall.ENOENT
	errNotDir   error = syscall.ENOTDIR
	// errLoop is filepath.EvalSymlinks's error for a symlink loop; the
	// other operations say what the system says there, ELOOP.
	errLoop = errors.New("EvalSymlinks: too many links")
)

// name returns fsys's name for p, a clean absolute path without
// symlinks: ok is false for a path outside mount, above says p is one of
// mount's ancestors.
func (t *treeFS) name(p string) (name string, ok, above bool) {
	switch {
	case p == t.mount:
		return ".", true, false
	case Within(t.mount, p):
		rel := strings.TrimPrefix(p[len(t.mount):], string(filepath.Separator))
		return filepath.ToSlash(rel), true, false
	case Within(p, t.mount):
		return "", false, true
	}
	return "", false, false
}

// lstat returns what is at p, whose parent is symlink-free; errors are
// fs.PathErrors of op on p.
func (t *treeFS) lstat(op, p string) (fs.FileInfo, error) {
	name, ok, above := t.name(p)
	switch {
	case above:
		return dirInfo(filepath.Base(p)), nil
	case !ok:
		return nil, &fs.PathError{Op: op, Path: p, Err: errNotExist}
	}
	var fi fs.FileInfo
	var err error
	if t.links != nil {
		fi, err = t.links.Lstat(name)
	} else {
		fi, err = fs.Stat(t.fsys, name)
	}
	if err != nil {
		return nil, t.wrap(op, p, err)
	}
	return fi, nil
}

// wrap is err, from fsys, as the os package words its errors.
func (t *treeFS) wrap(op, p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = errNotExist
	case err == errLoop:
		err = syscall.ELOOP
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// quick answers Lstat of p, a path inside the mount, when fsys can tell
// that none of its directories is a symlink (plainLstater): sure is false
// otherwise.
func (t *treeFS) quick(p string) (fi fs.FileInfo, err error, sure bool) {
	if t.plain == nil || p != filepath.Clean(p) {
		return nil, nil, false
	}
	name, ok, _ := t.name(p)
	if !ok || name == "." {
		return nil, nil, false
	}
	return t.plain.LstatPlain(name)
}

// EvalSymlinks resolves p as filepath.EvalSymlinks resolves a path on a
// unix system, one component at a time.
func (t *treeFS) EvalSymlinks(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", &fs.PathError{Op: "lstat", Path: p, Err: errNotExist}
	}
	// Most paths hold no symlink: they are their own real path.
	if fi, err, sure := t.quick(p); sure && err == nil && fi.Mode()&fs.ModeSymlink == 0 {
		return p, nil
	}
	vol := filepath.VolumeName(p)
	sep := string(filepath.Separator)
	dest := vol + sep
	rest := p[len(vol):]
	links := 0
	for rest != "" {
		var c string
		c, rest, _ = strings.Cut(strings.TrimLeft(rest, sep+"/"), sep)
		switch c {
		case "", ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, c)
		fi, err := t.lstat("lstat", next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.IsDir() && strings.Trim(rest, sep) != "" {
				return "", errNotDir
			}
			dest = next
			continue
		}
		if links++; links > 255 {
			return "", errLoop
		}
		name, _, _ := t.name(next)
		target, err := t.links.ReadLink(name)
		if err != nil {
			return "", t.wrap("readlink", next, err)
		}
		target = filepath.FromSlash(target)
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			dest = v + sep
			rest = target[len(v):] + sep + rest
		} else {
			rest = target + sep + rest
		}
	}
	return filepath.Clean(dest), nil
}

// resolveParent returns p with the symlinks of its directory resolved
// (its last component kept); errors as the os package gives them for an
// operation op on p.
func (t *treeFS) resolveParent(op, p string) (string, error) {
	dir, base := filepath.Split(p)
	if base == "" {
		return p, nil // the volume's root
	}
	real, err := t.EvalSymlinks(filepath.Clean(dir))
	if err != nil {
		return "", t.wrap(op, p, err)
	}
	if fi, err := t.lstat(op, real); err != nil {
		return "", t.wrap(op, p, err)
	} else if !fi.IsDir() {
		return "", &fs.PathError{Op: op, Path: p, Err: errNotDir}
	}
	return filepath.Join(real, base), nil
}

func (t *treeFS) Readlink(p string) (string, error) {
	q, err := t.resolveParent("readlink", p)
	if err != nil {
		return "", err
	}
	fi, err := t.lstat("readlink", q)
	if err != nil {
		return "", t.wrap("readlink", p, err)
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: p, Err: syscall.EINVAL}
	}
	name, _, _ := t.name(q)
	target, err := t.links.ReadLink(name)
	if err != nil {
		return "", t.wrap("readlink", p, err)
	}
	return filepath.FromSlash(target), nil
}

func (t *treeFS) Lstat(p string) (fs.FileInfo, error) {
	if fi, err, sure := t.quick(p); sure {
		if err != nil {
			return nil, t.wrap("lstat", p, err)
		}
		return named(fi, filepath.Base(p)), nil
	}
	q, err := t.resolveParent("lstat", p)
	if err != nil {
		return nil, err
	}
	fi, err := t.lstat("lstat", q)
	if err != nil {
		return nil, t.wrap("lstat", p, err)
	}
	return named(fi, filepath.Base(p)), nil
}

func (t *treeFS) Stat(p string) (fs.FileInfo, error) {
	real, err := t.EvalSymlinks(p)
	if err != nil {
		return nil, t.wrap("stat", p, err)
	}
	fi, err := t.lstat("stat", real)
	if err != nil {
		return nil, t.wrap("stat", p, err)
	}
	return named(fi, filepath.Base(p)), nil
}

func (t *treeFS) ReadFile(p string, follow bool) ([]byte, fs.FileInfo, error) {
	var real string
	var err error
	if follow {
		if real, err = t.EvalSymlinks(p); err != nil {
			return nil, nil, t.wrap("open", p, err)
		}
	} else if real, err = t.resolveParent("open", p); err != nil {
		return nil, nil, err
	}
	fi, err := t.lstat("open", real)
	if err != nil {
		return nil, nil, t.wrap("open", p, err)
	}
	name, ok, _ := t.name(real)
	if !ok || fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		// Read as nothing: fsread refuses it, naming what it is.
		data, err := fsread.FromFS(nil, "", p, fi)
		return data, nil, err
	}
	data, err := fsread.FromFS(t.fsys, name, p, fi)
	if err != nil {
		return nil, nil, err
	}
	return data, named(fi, filepath.Base(p)), nil
}

func (t *treeFS) ReadDir(p string) (fs.FileInfo, []fs.DirEntry, error) {
	real, err := t.EvalSymlinks(p)
	if err != nil {
		return nil, nil, t.wrap("open", p, err)
	}
	fi, err := t.lstat("open", real)
	if err != nil {
		return nil, nil, t.wrap("open", p, err)
	}
	if !fi.IsDir() {
		return nil, nil, &fs.PathError{Op: "open", Path: p, Err: errNotDir}
	}
	name, ok, above := t.name(real)
	var entries []fs.DirEntry
	switch {
	case above:
		// The only entry is the way down to the mount.
		rest := strings.TrimPrefix(t.mount[len(real):], string(filepath.Separator))
		next, _, _ := strings.Cut(rest, string(filepath.Separator))
		entries = []fs.DirEntry{fs.FileInfoToDirEntry(dirInfo(next))}
	case ok:
		if entries, err = fs.ReadDir(t.fsys, name); err != nil {
			return nil, nil, t.wrap("readdirent", p, err)
		}
	}
	return named(fi, filepath.Base(p)), entries, nil
}

// dirInfo is the stat of a directory above a tree's mount.
type dirInfo string

func (d dirInfo) Name() string       { return string(d) }
func (d dirInfo) Size() int64        { return 0 }
func (d dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (d dirInfo) ModTime() time.Time { return time.Time{} }
func (d dirInfo) IsDir() bool        { return true }
func (d dirInfo) Sys() any           { return nil }

// named returns fi under the name base (the os package names a stat by
// the path asked for, not by where a symlink led).
func named(fi fs.FileInfo, base string) fs.FileInfo {
	if fi.Name() == base {
		return fi
	}
	return renamed{fi, base}
}

type renamed struct {
	fs.FileInfo
	name string
}

func (r renamed) Name() string { return r.name }
