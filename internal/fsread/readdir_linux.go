package fsread

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// ReadDir returns the stat of the directory at path and its entries, in
// the order the file system lists them, both read through one open
// descriptor (so the stat is taken before the listing). Here that is a
// bare descriptor read with getdents64: os.Open would register it with
// the runtime's poller, which refuses it, and then switch it back to
// blocking (three system calls of eight, for each directory a tree walk
// lists). The entries' types are what os.ReadDir reports.
func ReadDir(path string) (os.FileInfo, []fs.DirEntry, error) {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	st := &statInfo{name: filepath.Base(path)}
	if err := retryEINTR(func() error { return syscall.Fstat(fd, &st.sys) }); err != nil {
		return nil, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var entries []fs.DirEntry
	for {
		var n int
		err := retryEINTR(func() (err error) {
			n, err = syscall.Getdents(fd, buf)
			return err
		})
		if err != nil {
			return nil, nil, &fs.PathError{Op: "readdirent", Path: path, Err: err}
		}
		if n <= 0 {
			return st, entries, nil
		}
		if entries, err = appendDirents(entries, path, buf[:n]); err != nil {
			return nil, nil, err
		}
	}
}

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 8192); return &b }}

// appendDirents appends the entries of a getdents64 result: records of
// inode (8 bytes), offset (8), record length (2), type (1) and a
// NUL-terminated name, in the machine's byte order.
func appendDirents(entries []fs.DirEntry, dir string, buf []byte) ([]fs.DirEntry, error) {
	const nameAt = 19
	for len(buf) > 0 {
		if len(buf) < nameAt {
			return nil, &fs.PathError{Op: "readdirent", Path: dir, Err: syscall.EIO}
		}
		reclen := int(binary.NativeEndian.Uint16(buf[16:18]))
		if reclen < nameAt || reclen > len(buf) {
			return nil, &fs.PathError{Op: "readdirent", Path: dir, Err: syscall.EIO}
		}
		typ, name := buf[18], buf[nameAt:reclen]
		buf = buf[reclen:]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		s := string(name)
		if s == "." || s == ".." {
			continue
		}
		e := &dirEntry{dir: dir, name: s}
		switch typ {
		case syscall.DT_BLK:
			e.typ = fs.ModeDevice
		case syscall.DT_CHR:
			e.typ = fs.ModeDevice | fs.ModeCharDevice
		case syscall.DT_DIR:
			e.typ = fs.ModeDir
		case syscall.DT_FIFO:
			e.typ = fs.ModeNamedPipe
		case syscall.DT_LNK:
			e.typ = fs.ModeSymlink
		case syscall.DT_REG:
		case syscall.DT_SOCK:
			e.typ = fs.ModeSocket
		default:
			// The file system does not say: look, as os.ReadDir does;
			// an entry gone since the listing is left out, as there.
			fi, err := os.Lstat(filepath.Join(dir, s))
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			e.typ = fi.Mode().Type()
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// dirEntry is an fs.DirEntry of a listing.
type dirEntry struct {
	dir, name string
	typ       fs.FileMode
}

func (e *dirEntry) Name() string               { return e.name }
func (e *dirEntry) IsDir() bool                { return e.typ.IsDir() }
func (e *dirEntry) Type() fs.FileMode          { return e.typ }
func (e *dirEntry) Info() (fs.FileInfo, error) { return os.Lstat(filepath.Join(e.dir, e.name)) }
func (e *dirEntry) String() string             { return fs.FormatDirEntry(e) }
