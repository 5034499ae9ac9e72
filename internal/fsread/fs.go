package fsread

import (
	"errors"
	"io"
	"io/fs"
)

// FromFS reads the file name of fsys, whose stat (not following a
// symlink) is fi, as File reads one on disk: anything but a regular file
// is refused, and so is a file larger than MaxFileSize. Its size is not
// asked first (a tree that names its files' content may have to read a
// file to tell it): an fs.ReadFileFS holds or bounds what it returns (an
// in-memory tree; a git revision, which refuses an object past the cap
// unread), and anything else is read through a limit. Errors name path,
// the file as the caller knows it.
func FromFS(fsys fs.FS, name, path string, fi fs.FileInfo) ([]byte, error) {
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	var data []byte
	var err error
	if rf, ok := fsys.(fs.ReadFileFS); ok {
		data, err = rf.ReadFile(name)
	} else {
		var f fs.File
		if f, err = fsys.Open(name); err != nil {
			return nil, pathError("open", path, err)
		}
		data, err = io.ReadAll(io.LimitReader(f, MaxFileSize+1))
		f.Close()
	}
	if err != nil {
		return nil, pathError("read", path, err)
	}
	if int64(len(data)) > MaxFileSize {
		return nil, tooLarge(path, MaxFileSize)
	}
	return data, nil
}

// pathError is err (a *fs.PathError's own error, when it is one) as a
// *fs.PathError of op on path.
func pathError(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}
