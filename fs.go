package kpipe

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// BuildFS renders the kustomization at dir (a slash-separated path inside
// fsys, "." for its top) of a tree held in fsys, as Build does on disk.
//
// The tree is copied into a private temporary directory (regular files and
// directories only: anything else is an error naming it), built there, and
// removed before BuildFS returns; the load restrictor confines reads to the
// copy. Errors name files by their path in fsys.
func (r *Renderer) BuildFS(ctx context.Context, fsys fs.FS, dir string) ([]byte, error) {
	if !fs.ValidPath(dir) {
		return nil, fmt.Errorf("kpipe: BuildFS: %q is not a valid path in the tree", dir)
	}
	tmp, err := os.MkdirTemp("", "kpipe-fs-")
	if err != nil {
		return nil, fmt.Errorf("kpipe: BuildFS: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(ctx, fsys, tmp); err != nil {
		return nil, err
	}
	out, err := r.Build(ctx, filepath.Join(tmp, filepath.FromSlash(dir)))
	if err != nil {
		// Name files as they are named in fsys, not by the copy's path.
		return nil, fmt.Errorf("%s", strings.ReplaceAll(err.Error(), tmp+string(filepath.Separator), ""))
	}
	return out, nil
}

// copyTree writes the regular files and directories of fsys under dst.
func copyTree(ctx context.Context, fsys fs.FS, dst string) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("kpipe: BuildFS: reading %s: %w", p, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		switch {
		case d.IsDir():
			if p == "." {
				return nil
			}
			return os.Mkdir(target, 0o700)
		case d.Type().IsRegular():
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return fmt.Errorf("kpipe: BuildFS: reading %s: %w", p, err)
			}
			return os.WriteFile(target, data, 0o600)
		default:
			return fmt.Errorf("kpipe: BuildFS: %s is a %s, not a regular file or directory", path.Clean(p), d.Type())
		}
	})
}
