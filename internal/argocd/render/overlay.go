package render

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/kpipe/kpipe/loaders"
)

// editMark joins an app directory's path to the digest of its edited
// kustomization in the name of the directory that serves it.
const editMark = "@argocd-"

// edited is one app directory whose kustomization file Argo CD's edits
// changed: the directory appears a second time, as a sibling named by
// the edits (virtual), holding the same files but the kustomization
// file, whose content is data. Relative paths from it (../base) lead
// where they lead from the real directory; every other directory of the
// tree is shared, so that the bases an edited and an unedited root
// include are the same nodes of one graph, built once.
type edited struct {
	real    string // the app directory, absolute, symlink-free
	virtual string // real + editMark + digest
	name    string // the kustomization file's name
	data    []byte
}

// newEdited names the edited variant of real.
func newEdited(real, name string, data []byte) *edited {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(data)
	return &edited{real: real, virtual: real + editMark + hex.EncodeToString(h.Sum(nil))[:16], name: name, data: data}
}

// overlay is a loaders.FS that serves a tree (base) and, beside some of
// its directories, their edited variants.
type overlay struct {
	base  loaders.FS
	edits map[string]*edited // by virtual directory
}

// find returns the edited directory p lies in (or is) and p's path
// relative to it ("." for the directory itself).
func (o *overlay) find(p string) (*edited, string) {
	if !strings.Contains(p, editMark) {
		return nil, ""
	}
	for d := p; ; d = filepath.Dir(d) {
		if e, ok := o.edits[d]; ok {
			if d == p {
				return e, "."
			}
			return e, p[len(d)+1:]
		}
		if d == filepath.Dir(d) {
			return nil, ""
		}
	}
}

// toReal maps a path of an edited directory to the real directory's.
func (e *edited) toReal(rel string) string {
	if rel == "." {
		return e.real
	}
	return filepath.Join(e.real, rel)
}

// fromReal maps a path below the real directory to the edited one's;
// other paths are returned as they are.
func (e *edited) fromReal(p string) string {
	if p == e.real {
		return e.virtual
	}
	if loaders.Within(e.real, p) {
		return e.virtual + p[len(e.real):]
	}
	return p
}

func (o *overlay) stat(p string, stat func(string) (fs.FileInfo, error)) (fs.FileInfo, error) {
	e, rel := o.find(p)
	switch {
	case e == nil:
		return stat(p)
	case rel == e.name:
		return e.info(), nil
	case rel == ".":
		fi, err := stat(e.real)
		if err != nil {
			return nil, err
		}
		return renamed{fi, filepath.Base(e.virtual)}, nil
	}
	return stat(e.toReal(rel))
}

func (o *overlay) Stat(p string) (fs.FileInfo, error)  { return o.stat(p, o.base.Stat) }
func (o *overlay) Lstat(p string) (fs.FileInfo, error) { return o.stat(p, o.base.Lstat) }

func (o *overlay) EvalSymlinks(p string) (string, error) {
	e, rel := o.find(p)
	switch {
	case e == nil:
		return o.base.EvalSymlinks(p)
	case rel == e.name:
		return p, nil
	}
	r, err := o.base.EvalSymlinks(e.toReal(rel))
	if err != nil {
		return "", err
	}
	return e.fromReal(r), nil
}

func (o *overlay) Readlink(p string) (string, error) {
	if e, rel := o.find(p); e != nil {
		return o.base.Readlink(e.toReal(rel))
	}
	return o.base.Readlink(p)
}

func (o *overlay) ReadFile(p string, follow bool) ([]byte, fs.FileInfo, error) {
	e, rel := o.find(p)
	switch {
	case e == nil:
		return o.base.ReadFile(p, follow)
	case rel == e.name:
		return e.data, e.info(), nil
	}
	return o.base.ReadFile(e.toReal(rel), follow)
}

func (o *overlay) ReadDir(p string) (fs.FileInfo, []fs.DirEntry, error) {
	e, rel := o.find(p)
	switch {
	case e == nil:
		return o.base.ReadDir(p)
	case rel != ".":
		return o.base.ReadDir(e.toReal(rel))
	}
	fi, ents, err := o.base.ReadDir(e.real)
	if err != nil {
		return nil, nil, err
	}
	out := make([]fs.DirEntry, 0, len(ents)+1)
	for _, d := range ents {
		if d.Name() != e.name {
			out = append(out, d)
		}
	}
	out = append(out, fs.FileInfoToDirEntry(e.info()))
	return renamed{fi, filepath.Base(e.virtual)}, out, nil
}

// info is the edited kustomization file's stat.
func (e *edited) info() fs.FileInfo { return loaders.MemFileInfo(e.name, e.data) }

// renamed is a directory's stat under its edited variant's name, without
// what the tree said of its content (a git tree's name: the variant's
// content differs).
type renamed struct {
	fs.FileInfo
	name string
}

func (r renamed) Name() string { return r.name }
func (r renamed) Sys() any     { return nil }
