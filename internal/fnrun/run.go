package fnrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resource"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/plugins"
)

// The annotations the function runner keeps an object's file and position
// in (the current spelling and the legacy one, both set and both removed).
const (
	PathAnnotation        = "internal.config.kubernetes.io/path"
	LegacyPathAnnotation  = "config.kubernetes.io/path"
	IndexAnnotation       = "internal.config.kubernetes.io/index"
	LegacyIndexAnnotation = "config.kubernetes.io/index"
	idAnnotation          = "config.k8s.io/id"
)

// Options are the settings of a run.
type Options struct {
	// Plugins are the function settings: EnableExec, Timeout, Env,
	// Environ and Warn (EnableAlpha is not needed).
	Plugins plugins.Options
	// DryRun, when set, receives the result as one YAML stream, each
	// object with its path annotations, and no file is written.
	DryRun io.Writer
}

// Result says what a run changed, as paths relative to the directory.
type Result struct {
	Written, Removed []string
	// Stopped names the function that returned no objects, when one did
	// (and nothing was written).
	Stopped string
}

// file is one configuration file as read.
type file struct {
	path string // relative, slash-separated
	objs []map[string]any
}

// fnEntry is one function config found in the directory.
type fnEntry struct {
	obj   *resource.Resource
	path  string
	index int
}

// Run runs the functions found in dir over its objects and writes the
// result back (see the package documentation).
func Run(ctx context.Context, dir string, o Options) (*Result, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("fn run: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("fn run: %s is not a directory", dir)
	}
	files, err := readDir(abs)
	if err != nil {
		return nil, err
	}
	var objs []*resource.Resource
	var fns []fnEntry
	for _, f := range files {
		for i, m := range f.objs {
			r := resource.New(resource.CopyMap(m))
			setPosition(r, f.path, i)
			objs = append(objs, r)
			if plugins.IsFunction(r) {
				fns = append(fns, fnEntry{obj: r, path: f.path, index: i})
			}
		}
	}
	sortFunctions(fns)
	res := &Result{}
	for _, fe := range fns {
		cfg := resource.New(resource.CopyMap(fe.obj.Object()))
		f, err := plugins.LoadFunction(plugins.Config{
			Object: cfg,
			Role:   plugins.Transformer,
			Dir:    filepath.Join(abs, filepath.FromSlash(path.Dir(fe.path))),
			Source: filepath.Join(dir, filepath.FromSlash(fe.path)),
			Read: func(p string) ([]byte, error) {
				return fsread.File(filepath.Join(abs, filepath.FromSlash(path.Dir(fe.path)), p))
			},
		}, o.Plugins)
		if err != nil {
			return nil, err
		}
		scope := scopeOf(fe.path)
		var in, out []*resource.Resource
		for _, r := range objs {
			if inScope(scope, pathOf(r)) {
				in = append(in, r)
			} else {
				out = append(out, r)
			}
		}
		got, err := f.Run(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, r := range got {
			// kustomize fn run writes YAML nodes, never JSON: a nested key
			// that is not a string does not fail there (keys.go).
			r.ClearNonStringKeys()
			r.RemoveAnnotation(idAnnotation)
		}
		objs = append(got, out...)
		if len(objs) == 0 {
			res.Stopped = f.Describe()
			return res, nil
		}
	}
	byFile, order, err := groupByFile(dir, abs, objs)
	if err != nil {
		return nil, err
	}
	if o.DryRun != nil {
		var all []*resource.Resource
		for _, p := range order {
			for i, r := range byFile[p] {
				setPosition(r, p, i)
				all = append(all, r)
			}
		}
		data, err := output.Marshal(all)
		if err != nil {
			return nil, err
		}
		_, err = o.DryRun.Write(data)
		return res, err
	}
	return res, write(abs, files, byFile, order, res)
}

// readDir reads the YAML files under root, in lexical order.
func readDir(root string) ([]file, error) {
	var files []file
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			return nil
		}
		data, err := fsread.File(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		vals, err := resource.DecodeValues(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		f := file{path: rel}
		for i, v := range vals {
			m, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: document %d is not an object but %s", p, i+1, resource.KindOf(v))
			}
			f.objs = append(f.objs, m)
		}
		files = append(files, f)
		return nil
	})
	return files, err
}

// setPosition records an object's file and index in its annotations.
func setPosition(r *resource.Resource, p string, i int) {
	r.SetAnnotation(PathAnnotation, p)
	r.SetAnnotation(LegacyPathAnnotation, p)
	r.SetAnnotation(IndexAnnotation, strconv.Itoa(i))
	r.SetAnnotation(LegacyIndexAnnotation, strconv.Itoa(i))
}

// pathOf is an object's path annotation ("" when it has none).
func pathOf(r *resource.Resource) string {
	ann := r.Annotations()
	if p := ann[PathAnnotation]; p != "" {
		return p
	}
	return ann[LegacyPathAnnotation]
}

// scopeOf is the directory a function config at p applies to: its own, or
// the one above for a config in a `functions` directory.
func scopeOf(p string) string {
	d := path.Dir(p)
	if path.Base(d) == "functions" {
		d = path.Dir(d)
	}
	return d
}

// inScope reports whether an object at p lies in directory scope.
func inScope(scope, p string) bool {
	if scope == "." {
		return true
	}
	return p == scope || strings.HasPrefix(p, scope+"/")
}

// sortFunctions orders the function configs as kustomize does: deeper
// scopes first, then by scope name, then by file and index.
func sortFunctions(fns []fnEntry) {
	depth := func(d string) int {
		if d == "." {
			return 0
		}
		return strings.Count(d, "/") + 1
	}
	sort.SliceStable(fns, func(i, j int) bool {
		a, b := fns[i], fns[j]
		if a.path == b.path {
			return a.index < b.index
		}
		sa, sb := scopeOf(a.path), scopeOf(b.path)
		if da, db := depth(sa), depth(sb); da != db {
			return da > db
		}
		if sa != sb {
			return sa < sb
		}
		return a.path < b.path
	})
}

// groupByFile maps each object to its file, checking that every path stays
// inside the directory (abs is its absolute form), symlinks resolved: a
// path through a symlinked subdirectory that points elsewhere leaves it as
// much as `../` does. order lists the files in order of first object.
func groupByFile(dir, abs string, objs []*resource.Resource) (map[string][]*resource.Resource, []string, error) {
	realRoot, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, nil, fmt.Errorf("fn run: %w", err)
	}
	byFile := map[string][]*resource.Resource{}
	var order []string
	for _, r := range objs {
		p := pathOf(r)
		if p == "" {
			p = strings.ToLower(r.Kind()) + "_" + r.Name() + ".yaml"
			if ns := r.Namespace(); ns != "" {
				p = ns + "/" + p
			}
		}
		clean := path.Clean(filepath.ToSlash(p))
		if path.IsAbs(clean) || filepath.IsAbs(p) || clean == ".." || strings.HasPrefix(clean, "../") || clean == "." {
			return nil, nil, fmt.Errorf("object %s: its path annotation %q leaves the directory %s; refusing to write there", r.ID(), p, dir)
		}
		if real, ok := resolvedWithin(realRoot, filepath.Join(realRoot, filepath.FromSlash(clean))); !ok {
			return nil, nil, fmt.Errorf("object %s: its path annotation %q leaves the directory %s through a symlink (to %s); refusing to write there", r.ID(), p, dir, real)
		}
		if _, ok := byFile[clean]; !ok {
			order = append(order, clean)
		}
		byFile[clean] = append(byFile[clean], r)
	}
	return byFile, order, nil
}

// resolvedWithin reports whether the file full, once the symlinks of its
// directory (the part of it that exists) are resolved, lies below
// realRoot (absolute and symlink-free); it returns the resolved directory.
// The file itself may be a symlink: it is replaced by a rename, not written
// through.
func resolvedWithin(realRoot, full string) (string, bool) {
	dir, rest := filepath.Dir(full), ""
	for {
		if _, err := os.Lstat(dir); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir, false
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return dir, false
	}
	real = filepath.Join(real, rest)
	return real, loaders.Within(realRoot, real)
}

// stripped is an object's content as written: without the runner's
// annotations.
func stripped(r *resource.Resource) map[string]any {
	c := resource.New(resource.CopyMap(r.Object()))
	for _, a := range []string{PathAnnotation, LegacyPathAnnotation, IndexAnnotation, LegacyIndexAnnotation, idAnnotation} {
		c.RemoveAnnotation(a)
	}
	return c.Object()
}

// write writes the files whose objects changed and removes the files that
// hold no object any more.
func write(root string, files []file, byFile map[string][]*resource.Resource, order []string, res *Result) error {
	read := map[string][]map[string]any{}
	for _, f := range files {
		read[f.path] = f.objs
	}
	for _, p := range order {
		var objs []map[string]any
		for _, r := range byFile[p] {
			objs = append(objs, stripped(r))
		}
		data, err := encode(objs)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if old, ok := read[p]; ok {
			if before, err := encode(old); err == nil && bytes.Equal(before, data) {
				continue
			}
		}
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := output.WriteFileAtomic(full, data); err != nil {
			return err
		}
		res.Written = append(res.Written, p)
	}
	for _, f := range files {
		if _, ok := byFile[f.path]; ok {
			continue
		}
		if err := os.Remove(filepath.Join(root, filepath.FromSlash(f.path))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		res.Removed = append(res.Removed, f.path)
	}
	return nil
}

// encode renders objects as a YAML stream.
func encode(objs []map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	for i, m := range objs {
		b, err := output.MarshalValue(m)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}
