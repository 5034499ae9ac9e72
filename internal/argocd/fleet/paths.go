package fleet

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/render"
)

// Paths is what the argocd.argoproj.io/manifest-generate-paths annotation
// of a should say, from what rendering it read (reads): the directories
// holding every file read and every directory listed or read whole,
// inside the repository, those below another dropped. An entry inside
// the first source's path is relative to it ("." for the path itself),
// another starts with "/" (from the repository's root), as Argo CD reads
// the annotation. Paths outside the repository are not named (Argo CD
// would not see them change).
func Paths(a *app.Application, tree *render.Tree, reads *render.Reads) []string {
	rs := reads.ReadSet()
	var dirs []string
	inside := func(p string) (string, bool) {
		rel, err := filepath.Rel(tree.Dir, p)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return "", false
		}
		return filepath.ToSlash(rel), true
	}
	addDir := func(p string) {
		if rel, ok := inside(p); ok {
			dirs = append(dirs, rel)
		}
	}
	addFile := func(p string) {
		if rel, ok := inside(p); ok && rel != "." {
			dirs = append(dirs, path.Dir(rel))
		}
	}
	for _, f := range rs.Files {
		if fi, err := tree.Files.Stat(f); err == nil && fi.IsDir() {
			addDir(f)
			continue
		}
		addFile(f)
	}
	for _, e := range rs.Either {
		if fi, err := tree.Files.Stat(e); err == nil && fi.IsDir() {
			addDir(e)
			continue
		}
		addFile(e)
	}
	for _, d := range append(append(rs.Dirs, rs.Trees...), reads.Listed()...) {
		addDir(d)
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	// Drop what lies below another entry.
	var top []string
	for _, d := range dirs {
		if len(top) > 0 && below(top[len(top)-1], d) {
			continue
		}
		top = append(top, d)
	}
	srcPath := "."
	spec := a.Spec
	spec.Normalize()
	if srcs := spec.GetSources(); len(srcs) > 0 && srcs[0].Path != "" {
		srcPath = path.Clean(strings.TrimPrefix(srcs[0].Path, "./"))
	}
	out := make([]string, 0, len(top))
	// The source's path first, then what lies below it, then the rest.
	slices.SortStableFunc(top, func(a, b string) int {
		rank := func(d string) int {
			switch {
			case d == srcPath:
				return 0
			case below(srcPath, d):
				return 1
			}
			return 2
		}
		return rank(a) - rank(b)
	})
	for _, d := range top {
		switch {
		case d == srcPath:
			out = append(out, ".")
		case below(srcPath, d):
			out = append(out, strings.TrimPrefix(d, srcPath+"/"))
		case d == ".":
			out = append(out, "/")
		default:
			out = append(out, "/"+d)
		}
	}
	return out
}

// below reports whether p is dir or lies below it (slash paths, "." the
// root).
func below(dir, p string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}
