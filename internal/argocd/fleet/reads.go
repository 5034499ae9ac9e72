package fleet

import (
	"path/filepath"
	"slices"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/affected"
	"github.com/kpipe/kpipe/internal/argocd/render"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/loaders"
)

// ReadPaths are what rendering an Application read, for matching
// changes: Set in engine.ReadSet's terms (package affected's matcher),
// and Listed, the directories whose listing was read (a file added or
// removed there can change the output: the app directory, where
// Chart.yaml or .argocd-source files decide, a Directory source's
// directories).
type ReadPaths struct {
	Set    engine.ReadSet
	Listed []string
}

func readsOfReads(r *render.Reads) ReadPaths {
	return ReadPaths{Set: r.ReadSet(), Listed: r.Listed()}
}

// readsOfInputs are a record's inputs as ReadPaths: each input a file or
// a directory listing (told apart by a stat now).
func readsOfInputs(fsys loaders.FS, inputs []cache.Input) ReadPaths {
	var rp ReadPaths
	for _, in := range inputs {
		rp.Set.Either = append(rp.Set.Either, in.Path)
		if in.Real != in.Path {
			rp.Set.Either = append(rp.Set.Either, in.Real)
		}
		if fi, err := fsys.Stat(in.Real); err == nil && fi.IsDir() {
			rp.Listed = append(rp.Listed, in.Path)
		}
	}
	return rp
}

// match returns the changed paths (absolute in the tree) that reach an
// Application that read rp.
func match(m *affected.Matcher, changes []affected.Change, rp ReadPaths) []string {
	hit := m.Match(rp.Set)
	if len(rp.Listed) > 0 {
		for _, c := range changes {
			if c.Status != affected.Modified && slices.Contains(rp.Listed, filepath.Dir(c.Path)) {
				hit = append(hit, c.Path)
			}
		}
	}
	slices.Sort(hit)
	return slices.Compact(hit)
}
