package render

import (
	"bytes"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
)

// Reads is what rendering one Application read: through its Views
// (package generate's reads: the app directory's listing, the
// .argocd-source files, a Directory source's files, helm value files,
// the kustomization file the edits read), the engine's (a Kustomize
// source's build) and helm's (the chart, read whole). It says which
// Applications a change reaches (`kpipe diff --argocd`, `kpipe affected
// --argocd`), what manifest-generate-paths should name (`kpipe argocd
// paths`), and lets a run skip an Application whose inputs are unchanged.
// It is safe for concurrent use.
type Reads struct {
	mu     sync.Mutex
	files  map[string]bool // absolute paths read, or looked for
	dirs   map[string]bool // directories listed
	trees  map[string]bool // directories read whole
	engine engine.ReadSet
	inputs []cache.Input // the engine's, exact
	// inexact says why the inputs are not all known (a helm chart, a
	// build with plugins): no record can be kept.
	inexact string
}

// NewReads returns an empty Reads.
func NewReads() *Reads {
	return &Reads{files: map[string]bool{}, dirs: map[string]bool{}, trees: map[string]bool{}}
}

// View is t seen through r: every read is recorded.
func (r *Reads) View(t *Tree) *View { return &View{t: t, r: r} }

func (r *Reads) add(m map[string]bool, p string) {
	r.mu.Lock()
	m[p] = true
	r.mu.Unlock()
}

// Tree records that dir (absolute) was read whole: anything below it can
// change the output.
func (r *Reads) Tree(dir string) { r.add(r.trees, dir) }

// File records that path (absolute) was read, or looked for.
func (r *Reads) File(path string) { r.add(r.files, path) }

// Inexact records that the inputs are not all known, and why.
func (r *Reads) Inexact(why string) {
	r.mu.Lock()
	if r.inexact == "" {
		r.inexact = why
	}
	r.mu.Unlock()
}

// addEngine adds a kustomize build's reads and its inputs (ok false: not
// all known).
func (r *Reads) addEngine(rs engine.ReadSet, inputs []cache.Input, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.engine.Files = append(r.engine.Files, rs.Files...)
	r.engine.Dirs = append(r.engine.Dirs, rs.Dirs...)
	r.engine.Trees = append(r.engine.Trees, rs.Trees...)
	r.engine.Either = append(r.engine.Either, rs.Either...)
	if !ok && r.inexact == "" {
		r.inexact = "a kustomize build whose inputs are not all known (plugins, helm charts or remote bases)"
	}
	r.inputs = append(r.inputs, inputs...)
}

// ReadSet is every path read: files (and those looked for), the
// directories listed (Dirs: a file added or removed there counts; see
// Listed), the directories read whole, in engine.ReadSet's terms. Paths
// are absolute in the Tree's Files, sorted.
func (r *Reads) ReadSet() engine.ReadSet {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := func(m map[string]bool, more []string) []string {
		out := make([]string, 0, len(m)+len(more))
		for p := range m {
			out = append(out, p)
		}
		out = append(out, more...)
		slices.Sort(out)
		return slices.Compact(out)
	}
	return engine.ReadSet{
		Files:  keys(r.files, r.engine.Files),
		Dirs:   keys(nil, r.engine.Dirs),
		Trees:  keys(r.trees, r.engine.Trees),
		Either: keys(nil, r.engine.Either),
	}
}

// Listed are the directories whose listing was read (an added or removed
// entry there can change the output), sorted.
func (r *Reads) Listed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.dirs))
	for d := range r.dirs {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// Inputs are the reads as a record's inputs, with their digests through
// files (an index of t.Files): every file read, every directory listed
// (a path looked for and missing is covered by its directory's listing),
// and the engine's. ok is false when they are not all known (why says
// why).
func (r *Reads) Inputs(t *Tree, files *cache.FileIndex) (inputs []cache.Input, why string) {
	r.mu.Lock()
	if r.inexact != "" {
		r.mu.Unlock()
		return nil, r.inexact
	}
	if len(r.trees) > 0 {
		r.mu.Unlock()
		return nil, "a directory read whole"
	}
	var paths, dirs []string
	for p := range r.files {
		paths = append(paths, p)
	}
	for d := range r.dirs {
		dirs = append(dirs, d)
	}
	inputs = append(inputs, r.inputs...)
	r.mu.Unlock()
	slices.Sort(paths)
	slices.Sort(dirs)
	listed := map[string]bool{}
	for _, d := range dirs {
		listed[d] = true
	}
	add := func(p string) bool {
		real, err := t.Files.EvalSymlinks(p)
		if err != nil {
			return false
		}
		d, ok := files.Digest(real)
		if !ok {
			return false
		}
		inputs = append(inputs, files.Stamp(cache.Input{Path: p, Real: real, Digest: d}))
		return true
	}
	for _, p := range paths {
		if add(p) {
			continue
		}
		// Missing (or unreadable): the listing of the nearest directory
		// that exists says when it appears.
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			if listed[d] {
				break
			}
			if fi, err := t.Files.Stat(d); err == nil && fi.IsDir() {
				listed[d] = true
				dirs = append(dirs, d)
				break
			}
			if d == filepath.Dir(d) {
				return nil, "a path outside the tree"
			}
		}
	}
	for _, d := range dirs {
		if !add(d) {
			return nil, "a directory that cannot be listed"
		}
	}
	return inputs, ""
}

// View is a Tree whose reads are recorded in a Reads: the FS of the
// app.Checkout one Application is rendered from.
type View struct {
	t *Tree
	r *Reads
}

// Tree is the viewed tree.
func (v *View) Tree() *Tree { return v.t }

func (v *View) file(name string) { v.r.File(v.t.Abs(name)) }

// Open opens name, recorded as a file read.
func (v *View) Open(name string) (fs.File, error) { v.file(name); return v.t.Open(name) }

// ReadFile reads name, recorded. An .argocd-source file that names the
// ARGOCD_APP_* values makes the reads inexact: the output may follow the
// revision.
func (v *View) ReadFile(name string) ([]byte, error) {
	v.file(name)
	data, err := v.t.ReadFile(name)
	if err == nil && strings.HasPrefix(path.Base(name), ".argocd-source") && bytes.Contains(data, []byte("ARGOCD_APP_")) {
		v.r.Inexact("an .argocd-source file naming ARGOCD_APP_* values")
	}
	return data, err
}

// ReadDir lists name, recorded as a listing.
func (v *View) ReadDir(name string) ([]fs.DirEntry, error) {
	v.r.add(v.r.dirs, v.t.Abs(name))
	return v.t.ReadDir(name)
}

// Stat stats name, recorded as looked for.
func (v *View) Stat(name string) (fs.FileInfo, error) { v.file(name); return v.t.Stat(name) }

// Lstat is fs.ReadLinkFS's, recorded as looked for.
func (v *View) Lstat(name string) (fs.FileInfo, error) { v.file(name); return v.t.Lstat(name) }

// ReadLink is fs.ReadLinkFS's, recorded.
func (v *View) ReadLink(name string) (string, error) { v.file(name); return v.t.ReadLink(name) }

// CheckSymlinks is the tree's (source.SymlinkChecker): a property of the
// whole tree, checked once, not an Application's read.
func (v *View) CheckSymlinks() error { return v.t.CheckSymlinks() }
