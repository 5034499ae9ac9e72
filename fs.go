package kpipe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kpipe/kpipe/loaders"
)

// BuildFS renders the kustomization at dir (a slash-separated path inside
// fsys, "." for its top) of a tree held in fsys, as Build does on disk.
//
// The tree is read in place, through the read seam (loaders.NewFS):
// only what the build reads is read, and nothing is copied. Its files
// appear to the build under a private path that names nothing on disk, so
// the load restrictor confines reads to fsys as it confines them to a
// directory, and no file of the disk is read for one of the tree; errors
// name files by their path in fsys. Symlinks are followed where fsys
// implements fs.ReadLinkFS, as on disk (an absolute target names a path of
// the tree). What runs as a separate process in a kustomization's
// directory (exec plugins, KRM functions) gets a copy of that directory
// for the build; see the package doc.
//
// With a Cache, a tree built from fsys shares cache entries with the same
// tree built from disk: keys cover contents and relative paths, not where
// a tree lies.
func (r *Renderer) BuildFS(ctx context.Context, fsys fs.FS, dir string) ([]byte, error) {
	if !fs.ValidPath(dir) {
		return nil, fmt.Errorf("kpipe: BuildFS: %q is not a valid path in the tree", dir)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	mount := filepath.Join(os.TempDir(), "kpipe-fs-"+hex.EncodeToString(b[:])) // never created
	res := r.buildAll(ctx, loaders.NewFS(fsys, mount), []string{filepath.Join(mount, filepath.FromSlash(dir))})[0]
	if res.Err != nil {
		// Name files as they are named in fsys.
		msg := strings.ReplaceAll(res.Err.Error(), mount+string(filepath.Separator), "")
		return nil, fmt.Errorf("%s", strings.ReplaceAll(msg, mount, "."))
	}
	return res.YAML, nil
}
