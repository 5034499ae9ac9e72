package gitfs

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kpipe/kpipe/internal/fsread"
)

// entry is one entry of a tree object.
type entry struct {
	name string
	mode uint32 // git's mode: 040000, 100644, 100755, 120000, 160000
	oid  string
}

// Git's modes.
const (
	modeTree    = 0o40000
	modeSymlink = 0o120000
	modeGitlink = 0o160000 // a submodule's commit
)

// parseTree reads a tree object: entries of "<octal mode> <name>\0" and
// the binary object name (hashLen bytes). A name that could leave the
// directory ("", ".", "..", anything with a slash) makes the tree an
// error: git itself never writes one.
func parseTree(data []byte, hashLen int) ([]entry, error) {
	var out []entry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return nil, errors.New("malformed tree object")
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("malformed tree object: mode %q", data[:sp])
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+1+hashLen {
			return nil, errors.New("malformed tree object")
		}
		name := string(data[:nul])
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\") {
			return nil, fmt.Errorf("tree holds an entry named %q, which git refuses", name)
		}
		out = append(out, entry{name: name, mode: uint32(mode), oid: hex.EncodeToString(data[nul+1 : nul+1+hashLen])})
		data = data[nul+1+hashLen:]
	}
	return out, nil
}

// FS is one tree of a Repo (a revision's root tree) as an fs.FS, with
// symlinks (fs.ReadLinkFS). Directories are read when first asked for and
// kept; files are read when opened. Open, Stat, ReadFile and ReadDir
// follow symlinks that stay in the tree; Lstat and ReadLink do not follow
// a final one. A submodule is an empty directory.
//
// The stat of every file and directory has an *Object as its Sys: the
// object's name, by which content is known without reading it.
type FS struct {
	repo *Repo
	root string

	mu    sync.Mutex
	trees map[string]*dirSlot // by slash-separated path, "." for the root
	links map[string]string   // symlink targets, by object name
}

// dirSlot is a directory read once, however many ask for it at once.
type dirSlot struct {
	once sync.Once
	d    *dir
	err  error
}

// dir is a directory read: its entries by name.
type dir struct {
	oid     string
	entries map[string]entry
	names   []string // sorted
}

// Tree returns the FS of the tree object oid (Commit gives a revision's).
func (r *Repo) Tree(oid string) *FS {
	return &FS{repo: r, root: oid, trees: map[string]*dirSlot{}, links: map[string]string{}}
}

// Object is the Sys of an FS's stat: which git object a path is.
type Object struct {
	// OID is the object's name, Mode its git mode.
	OID  string
	Mode uint32
}

// ContentID names the object's content: two paths with the same ID hold
// the same bytes (package cache trusts a digest recorded under it).
func (o *Object) ContentID() string {
	kind := "blob"
	switch o.Mode {
	case modeTree:
		kind = "tree"
	case modeGitlink:
		kind = "commit"
	}
	return "git " + kind + " " + o.OID
}

// dir returns the directory at p (a clean slash path, symlink-free),
// reading the trees on the way that were not read yet.
func (f *FS) dir(p string) (*dir, error) {
	f.mu.Lock()
	s := f.trees[p]
	if s == nil {
		s = &dirSlot{}
		f.trees[p] = s
	}
	f.mu.Unlock()
	s.once.Do(func() { s.d, s.err = f.readDir(p) })
	return s.d, s.err
}

// readDir reads the directory at p.
func (f *FS) readDir(p string) (*dir, error) {
	oid := f.root
	if p != "." {
		parent, err := f.dir(path.Dir(p))
		if err != nil {
			return nil, err
		}
		e, ok := parent.entries[path.Base(p)]
		switch {
		case !ok:
			return nil, fs.ErrNotExist
		case e.mode == modeGitlink:
			return &dir{oid: e.oid, entries: map[string]entry{}}, nil
		case e.mode != modeTree:
			return nil, errNotDir
		}
		oid = e.oid
	}
	entries, err := f.repo.tree(oid)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	d := &dir{oid: oid, entries: make(map[string]entry, len(entries)), names: make([]string, 0, len(entries))}
	for _, e := range entries {
		d.entries[e.name] = e
		d.names = append(d.names, e.name)
	}
	sort.Strings(d.names) // (git sorts a directory as if named "name/")
	return d, nil
}

// errNotDir is what a path through a file gets.
var errNotDir = errors.New("not a directory")

// lookup returns the entry at name (a valid fs path), not following a
// final symlink; symlinks before it are followed (within the tree).
func (f *FS) lookup(op, name string) (entry, error) {
	if !fs.ValidPath(name) {
		return entry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return entry{name: ".", mode: modeTree, oid: f.root}, nil
	}
	// Most paths asked for have no symlink before their last name (the
	// loaders resolve them first): their directory is read, or known,
	// by its path.
	dirPath := path.Dir(name)
	d, err := f.dir(dirPath)
	if err != nil {
		if dirPath, err = f.resolve(op, dirPath, 0); err != nil {
			return entry{}, err
		}
		if d, err = f.dir(dirPath); err != nil {
			return entry{}, &fs.PathError{Op: op, Path: name, Err: err}
		}
	}
	e, ok := d.entries[path.Base(name)]
	if !ok {
		return entry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return e, nil
}

// LstatPlain is Lstat for a name none of whose directories is a symlink:
// sure is false when one is (or a directory on the way is missing, or not
// one), and the caller resolves the name another way.
// With sure, err is the answer's (fs.ErrNotExist for a missing last
// name). A caller that resolves symlinks itself (loaders.NewFS) takes most
// paths this way: a lookup of their directory by its path.
func (f *FS) LstatPlain(name string) (fi fs.FileInfo, err error, sure bool) {
	if !fs.ValidPath(name) {
		return nil, nil, false
	}
	if name == "." {
		return f.info(".", entry{name: ".", mode: modeTree, oid: f.root}), nil, true
	}
	d, err := f.dir(path.Dir(name))
	if err != nil {
		return nil, nil, false
	}
	e, ok := d.entries[path.Base(name)]
	if !ok {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}, true
	}
	return f.info(path.Base(name), e), nil, true
}

// resolve returns name with its symlinks followed, within the tree; a
// link that leaves the tree names nothing.
func (f *FS) resolve(op, name string, hops int) (string, error) {
	if name == "." {
		return ".", nil
	}
	parent, err := f.resolve(op, path.Dir(name), hops)
	if err != nil {
		return "", err
	}
	p := path.Join(parent, path.Base(name))
	d, err := f.dir(parent)
	if err != nil {
		return "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	e, ok := d.entries[path.Base(name)]
	if !ok {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	if e.mode != modeSymlink {
		return p, nil
	}
	if hops++; hops > 40 {
		return "", &fs.PathError{Op: op, Path: name, Err: errors.New("too many levels of symbolic links")}
	}
	target, err := f.readlink(e)
	if err != nil {
		return "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	if path.IsAbs(target) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	next := path.Join(parent, target)
	if !fs.ValidPath(next) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist} // it leaves the tree
	}
	return f.resolve(op, next, hops)
}

// follow returns the entry at name with every symlink followed.
func (f *FS) follow(op, name string) (entry, string, error) {
	if !fs.ValidPath(name) {
		return entry{}, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	p, err := f.resolve(op, name, 0)
	if err != nil {
		return entry{}, "", err
	}
	e, err := f.lookup(op, p)
	return e, p, err
}

func (f *FS) readlink(e entry) (string, error) {
	f.mu.Lock()
	t, ok := f.links[e.oid]
	f.mu.Unlock()
	if ok {
		return t, nil
	}
	o, err := f.repo.blob(e.oid)
	if err != nil {
		return "", err
	}
	if o.size > 4096 {
		return "", errors.New("symlink target too long")
	}
	t = string(o.data)
	f.mu.Lock()
	f.links[e.oid] = t
	f.mu.Unlock()
	return t, nil
}

// Lstat returns the stat of name, not following a final symlink.
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	e, err := f.lookup("lstat", name)
	if err != nil {
		return nil, err
	}
	return f.info(path.Base(name), e), nil
}

// Stat returns the stat of name, following symlinks.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	e, _, err := f.follow("stat", name)
	if err != nil {
		return nil, err
	}
	return f.info(path.Base(name), e), nil
}

// ReadLink returns the target of the symlink name.
func (f *FS) ReadLink(name string) (string, error) {
	e, err := f.lookup("readlink", name)
	if err != nil {
		return "", err
	}
	if e.mode != modeSymlink {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	t, err := f.readlink(e)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	return t, nil
}

// ReadFile returns the content of the file name, up to
// fsread.MaxFileSize.
func (f *FS) ReadFile(name string) ([]byte, error) {
	e, _, err := f.follow("open", name)
	if err != nil {
		return nil, err
	}
	if isDir(e.mode) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errIsDir}
	}
	o, err := f.repo.blob(e.oid)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if o.size > fsread.MaxFileSize {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errTooLarge}
	}
	return o.data, nil
}

var (
	errIsDir    = errors.New("is a directory")
	errTooLarge = tooLarge{}
)

// tooLarge is fsread.ErrTooLarge with the limit, "file is larger than the
// limit of 256 MiB on one file" (without fmt.Errorf in every process's
// package initialisation).
type tooLarge struct{}

func (tooLarge) Error() string {
	return fsread.ErrTooLarge.Error() + " of " + strconv.FormatInt(fsread.MaxFileSize>>20, 10) + " MiB on one file"
}

func (tooLarge) Unwrap() error { return fsread.ErrTooLarge }

// ReadDir lists the directory name, sorted by name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	e, p, err := f.follow("open", name)
	if err != nil {
		return nil, err
	}
	if !isDir(e.mode) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errNotDir}
	}
	d, err := f.dir(p)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	out := make([]fs.DirEntry, len(d.names))
	for i, n := range d.names {
		out[i] = dirEntry{f.info(n, d.entries[n])}
	}
	return out, nil
}

// Open opens name, following symlinks.
func (f *FS) Open(name string) (fs.File, error) {
	e, p, err := f.follow("open", name)
	if err != nil {
		return nil, err
	}
	fi := f.info(path.Base(name), e)
	if isDir(e.mode) {
		entries, err := f.ReadDir(p)
		if err != nil {
			return nil, err
		}
		return &openDir{fi: fi, entries: entries}, nil
	}
	data, err := f.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return &openFile{fi: fi, r: bytes.NewReader(data)}, nil
}

func isDir(mode uint32) bool { return mode == modeTree || mode == modeGitlink }

// info is the stat of entry e, named name. A file's size is what git
// says when asked (Size reads the object: callers that only compare
// contents use the object's name).
func (f *FS) info(name string, e entry) fs.FileInfo {
	return &fileInfo{fs: f, name: name, obj: Object{OID: e.oid, Mode: e.mode}}
}

type fileInfo struct {
	fs   *FS
	name string
	obj  Object

	once sync.Once
	size int64
}

func (i *fileInfo) Name() string { return i.name }

func (i *fileInfo) Size() int64 {
	if isDir(i.obj.Mode) {
		return 0
	}
	i.once.Do(func() { i.size, _ = i.fs.repo.size(i.obj.OID) })
	return i.size
}

func (i *fileInfo) Mode() fs.FileMode {
	switch i.obj.Mode {
	case modeTree, modeGitlink:
		return fs.ModeDir | 0o755
	case modeSymlink:
		return fs.ModeSymlink | 0o777
	case 0o100755:
		return 0o755
	}
	return 0o644
}

func (i *fileInfo) ModTime() time.Time { return time.Time{} }
func (i *fileInfo) IsDir() bool        { return isDir(i.obj.Mode) }
func (i *fileInfo) Sys() any           { return &i.obj }

type dirEntry struct{ fi fs.FileInfo }

func (d dirEntry) Name() string               { return d.fi.Name() }
func (d dirEntry) IsDir() bool                { return d.fi.IsDir() }
func (d dirEntry) Type() fs.FileMode          { return d.fi.Mode().Type() }
func (d dirEntry) Info() (fs.FileInfo, error) { return d.fi, nil }
func (d dirEntry) String() string             { return fs.FormatDirEntry(d) }

type openFile struct {
	fi fs.FileInfo
	r  *bytes.Reader
}

func (o *openFile) Stat() (fs.FileInfo, error) { return o.fi, nil }
func (o *openFile) Read(p []byte) (int, error) { return o.r.Read(p) }
func (o *openFile) Close() error               { return nil }

type openDir struct {
	fi      fs.FileInfo
	entries []fs.DirEntry
	off     int
}

func (d *openDir) Stat() (fs.FileInfo, error) { return d.fi, nil }
func (d *openDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.fi.Name(), Err: errIsDir}
}
func (d *openDir) Close() error { return nil }

func (d *openDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}

var (
	_ fs.ReadLinkFS = (*FS)(nil)
	_ fs.ReadDirFS  = (*FS)(nil)
	_ fs.ReadFileFS = (*FS)(nil)
	_ fs.StatFS     = (*FS)(nil)
)
