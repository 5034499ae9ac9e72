//go:build unix

package cache

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// linker makes hard links between a few directories, many times: it opens
// each directory once and links by name relative to it (linkat), so a
// link does not walk the cache directory's whole path twice. A pack's
// hundreds of names go into at most sixteen subdirectories.
type linker struct {
	dirs map[string]int // directory -> open descriptor
}

func newLinker() *linker { return &linker{dirs: map[string]int{}} }

// dir returns a descriptor of dir, opened on first use.
func (l *linker) dir(dir string) (int, error) {
	if fd, ok := l.dirs[dir]; ok {
		return fd, nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	l.dirs[dir] = fd
	return fd, nil
}

// link is os.Link(oldname, newname).
func (l *linker) link(oldname, newname string) error {
	from, err := l.dir(filepath.Dir(oldname))
	if err != nil {
		return err
	}
	to, err := l.dir(filepath.Dir(newname))
	if err != nil {
		return err
	}
	if err := unix.Linkat(from, filepath.Base(oldname), to, filepath.Base(newname), 0); err != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: err}
	}
	return nil
}

// close closes the descriptors.
func (l *linker) close() {
	for _, fd := range l.dirs {
		unix.Close(fd)
	}
	clear(l.dirs)
}
