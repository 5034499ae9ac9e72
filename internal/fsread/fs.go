package fsread

import (
	"errors"
	"io/fs"
)

// FromFS reads the file name of fsys, whose stat (not following a
// symlink) is fi, as File reads one on disk: anything but a regular file
// is refused, and so is a file larger than MaxFileSize (by its stat, and
// again by what is read, for an fs.FS whose stat says less than it
// holds). Errors name path, the file as the caller knows it.
func FromFS(fsys fs.FS, name, path string, fi fs.FileInfo) ([]byte, error) {
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	if fi.Size() > MaxFileSize {
		return nil, tooLarge(path, MaxFileSize)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, pathError("open", path, err)
	}
	defer f.Close()
	data, err := readLimited(f, path, fi, MaxFileSize)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == path {
			return nil, err
		}
		return nil, pathError("read", path, err)
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
