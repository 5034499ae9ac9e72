package loaders

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// Loader reads files relative to one kustomization root.
type Loader struct {
	root        string
	restriction Restriction
	onRead      func(path, real string, data []byte)
}

// OnRead sets a function called after every successful ReadFile with the
// path as asked, its real path and the data read. The build uses it to
// learn which files a kustomization's stages read, for the cache. It must
// be set before the loader is used concurrently.
func (l *Loader) OnRead(fn func(path, real string, data []byte)) { l.onRead = fn }

// New returns a loader rooted at dir, which must be a directory. The root is
// made absolute and its symlinks are resolved.
func New(dir string, r Restriction) (*Loader, error) {
	root, err := RealDir(dir)
	if err != nil {
		return nil, err
	}
	return &Loader{root: root, restriction: r}, nil
}

// RealDir returns the absolute, symlink-free form of dir, or an error when
// dir is not a directory.
func RealDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("must build at directory: not a valid directory: evalsymlink failure on '%s' : %w", abs, unwrapPathError(err))
	}
	st, err := os.Stat(real)
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
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return abs, Missing, fmt.Errorf("evalsymlink failure on '%s' : %w", abs, unwrapPathError(err))
	}
	st, err := os.Stat(real)
	if err != nil {
		return real, Missing, err
	}
	if st.IsDir() {
		return real, Dir, nil
	}
	return real, File, nil
}

// Check returns an error when the restriction forbids reading the file at
// real, an absolute symlink-free path.
func (l *Loader) Check(real string) error {
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
	real, kind, err := l.Resolve(path)
	if err != nil {
		return nil, real, err
	}
	if kind == Dir {
		return nil, real, fmt.Errorf("'%s' must resolve to a file", real)
	}
	if err := l.Check(real); err != nil {
		return nil, real, err
	}
	data, err := os.ReadFile(real)
	if err == nil && l.onRead != nil {
		l.onRead(path, real, data)
	}
	return data, real, err
}
