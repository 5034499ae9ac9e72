package fleet

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kpipe/kpipe/internal/affected"
	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/generate"
	"github.com/kpipe/kpipe/internal/argocd/render"
	"github.com/kpipe/kpipe/internal/diff"
)

// ReviewOptions are the settings of a comparison of two revisions,
// Application by Application.
type ReviewOptions struct {
	// Dir is where the review runs (in the repository), Paths where the
	// Applications are looked for (relative to Dir; none: Dir).
	Dir   string
	Paths []string
	// Base is the old revision ("": the merge base of HEAD with the
	// default branch), Head the new one ("": the working tree).
	Base, Head string
	// Settings are Argo CD's settings (Revision is each side's commit).
	Settings generate.Settings
	// RepoURLs name this repository besides its git remotes.
	RepoURLs []string
	// NewGitFileGlobbing and IncludeHiddenDirectories are the
	// ApplicationSet controller's and repo-server's options.
	NewGitFileGlobbing, IncludeHiddenDirectories bool
	// ApplicationSets expands ApplicationSets (DiscoverOptions).
	ApplicationSets Expander
	// Render are the renderer's options (the engine's, with the cache).
	Render render.Options
	// Diff tunes the comparison.
	Diff diff.Options
	// InputsOnly lists the Applications a change reaches (Affected)
	// without rendering the old revision (Review returns no diff then).
	InputsOnly bool
}

// Affected is one Application a change reaches.
type Affected struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	// Status is the diff's (changed, added, removed, error, failing), or
	// "" with InputsOnly.
	Status string `json:"status,omitempty"`
	// Because are the changed paths (relative to the repository) that
	// reach it, or "spec" when the Application itself changed.
	Because []string `json:"because,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Review renders, at two revisions, the Applications a change reaches and
// compares their objects as the controller sees them (normalized), as
// `kpipe diff` compares kustomization roots: an Application is rendered
// when it is new or gone, when its spec changed (an ApplicationSet's
// expansion included), or when what its rendering read (recorded by an
// earlier run, else learnt by rendering it) meets a changed path. The old
// revision is read from git's objects, the new one too or from the
// working tree. The result's roots are Applications, by name.
func Review(ctx context.Context, o ReviewOptions) (*diff.Result, []Affected, error) {
	sides, err := diff.OpenSides(ctx, o.Dir, o.Base, o.Head)
	if err != nil {
		return nil, nil, err
	}
	defer sides.Close()
	top := sides.Repo.Top
	res := &diff.Result{Unit: "application"}
	res.Base, res.Head = sides.Names()
	trees, err := sides.Trees(o.Paths)
	if err != nil {
		return nil, nil, err
	}
	if len(sides.Changes) == 0 {
		return res, nil, nil
	}
	defer func() { res.ObjectsRead = sides.ObjectsRead() }()
	dirs := make([]string, len(trees))
	for i, t := range trees {
		dirs[i] = filepath.ToSlash(t)
	}
	repos := app.NewRepos(append(Remotes(ctx, top), o.RepoURLs...)...)
	r := render.New(o.Render)
	var headTree *render.Tree
	var tracked func() ([]string, error)
	headRev := sides.Head
	if sides.Head == "" {
		if headTree, err = render.DiskTree(top); err != nil {
			return nil, nil, err
		}
		tracked = func() ([]string, error) { return Tracked(ctx, top) }
		headRev = Head(ctx, top)
	} else {
		headTree = render.GitTree(sides.Objects.Tree(sides.HeadTree), sides.HeadDir)
	}
	baseTree := render.GitTree(sides.Objects.Tree(sides.BaseTree), sides.BaseDir)
	hs, bs := o.Settings, o.Settings
	hs.Revision, bs.Revision = headRev, sides.Base
	head := Source{Tree: headTree, Label: top, Repos: repos, Renderer: r, Settings: hs}
	base := Source{Tree: baseTree, Label: top, Repos: repos, Renderer: r, Settings: bs}
	disc := DiscoverOptions{Dirs: dirs, NewGitFileGlobbing: o.NewGitFileGlobbing, IncludeHiddenDirectories: o.IncludeHiddenDirectories, ApplicationSets: o.ApplicationSets}

	// The new side: every Application, up to date from its record or
	// rendered, with what it read.
	hd := disc
	hd.Tracked = tracked
	before := r.Stats()
	run, err := Run(ctx, Options{Source: head, Discover: hd, Reads: true})
	if err != nil && !errors.Is(err, ErrNoApplications) {
		return nil, nil, err
	}
	newBuilt := r.Stats().NodesBuilt - before.NodesBuilt
	var heads []Unit
	if run != nil {
		heads = run.Units
	}
	bd := disc
	bd.Tree, bd.Repos, bd.ControllerNamespace = baseTree, repos, o.Settings.ControllerNamespace
	bases, err := baseUnits(bd, heads, sides.Changes, dirs)
	if err != nil {
		return nil, nil, err
	}
	byName := func(us []Unit) map[string]*Unit {
		m := make(map[string]*Unit, len(us))
		for i := range us {
			m[us[i].Name] = &us[i]
		}
		return m
	}
	oldUnits, newUnits := byName(bases), byName(heads)
	changes := affected.Under(headTree.Dir, sides.Changes)
	m := affected.NewMatcher(headTree.Files, changes)
	rel := func(p string) string {
		if r, err := filepath.Rel(headTree.Dir, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	var hits []Affected
	for _, name := range unionNames(oldUnits, newUnits) {
		nu, ou := newUnits[name], oldUnits[name]
		a := Affected{Name: name}
		switch {
		case nu == nil:
			a.File, a.Because = ou.File, []string{"removed"}
		case ou == nil:
			a.File, a.Because = nu.File, []string{"added"}
		default:
			a.File = nu.File
			if nu.Spec != ou.Spec || nu.Err != ou.Err || nu.Skipped != ou.Skipped {
				a.Because = []string{"spec"}
				break
			}
			if rp, ok := run.Reads[name]; ok {
				for _, p := range match(m, changes, rp) {
					a.Because = append(a.Because, rel(p))
				}
			}
		}
		if len(a.Because) > 0 {
			hits = append(hits, a)
		}
	}
	if o.InputsOnly {
		for i := range hits {
			if nu := newUnits[hits[i].Name]; nu != nil {
				if out := run.Outputs[hits[i].Name]; out != nil {
					hits[i].Error = out.Err
				} else if nu.Err != "" {
					hits[i].Error = nu.Err
				}
			}
		}
		return res, hits, nil
	}
	// The old side: the Applications reached, rendered together.
	var olds []*Unit
	for _, h := range hits {
		if ou := oldUnits[h.Name]; ou != nil && ou.App != nil && ou.Skipped == "" {
			olds = append(olds, ou)
		}
	}
	before = r.Stats()
	oldOuts := base.RenderAll(ctx, olds)
	res.OldBuilt = r.Stats().NodesBuilt - before.NodesBuilt
	res.NewBuilt = newBuilt
	oldOut := map[string]*Output{}
	for i, u := range olds {
		oldOut[u.Name] = oldOuts[i]
	}
	var out []Affected
	for _, h := range hits {
		res.Compared++
		rd := compare(h.Name, oldUnits[h.Name], newUnits[h.Name], oldOut[h.Name], run.outputOf(h.Name), o.Diff)
		if rd == nil {
			res.Unchanged++
			continue
		}
		res.Roots = append(res.Roots, *rd)
		h.Status, h.Error = rd.Status, firstNonEmpty(rd.NewError, rd.OldError)
		out = append(out, h)
	}
	slices.SortFunc(res.Roots, func(a, b diff.RootDiff) int { return strings.Compare(a.Path, b.Path) })
	return res, out, nil
}

// baseUnits are the old side's Units, reading what the change can have
// changed only: the new side's Applications from files the change did
// not touch are the old side's too; the changed files, and every file
// holding an ApplicationSet (whose expansion may follow any change), are
// read again at the old revision.
func baseUnits(o DiscoverOptions, heads []Unit, changes []affected.Change, dirs []string) ([]Unit, error) {
	changed := map[string]bool{}
	var files []string
	for _, c := range changes {
		p := filepath.ToSlash(c.Path)
		changed[p] = true
		switch path.Ext(p) {
		case ".yaml", ".yml", ".json":
			if c.Status != affected.Added && inDirs(p, dirs) && !hidden(p) {
				files = append(files, p)
			}
		}
	}
	for _, u := range heads {
		if u.Set != "" || changed[u.File] {
			files = append(files, u.File)
		}
	}
	slices.Sort(files)
	files = slices.Compact(files)
	reread := map[string]bool{}
	for _, f := range files {
		reread[f] = true
	}
	out, err := DiscoverFiles(o, files)
	if err != nil {
		return nil, err
	}
	for _, u := range heads {
		if !reread[u.File] {
			out = append(out, u)
		}
	}
	slices.SortStableFunc(out, func(a, b Unit) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// inDirs reports whether the slash path p lies in one of dirs.
func inDirs(p string, dirs []string) bool {
	if len(dirs) == 0 {
		return true
	}
	for _, d := range dirs {
		if below(d, p) {
			return true
		}
	}
	return false
}

// hidden reports a path through a hidden directory (Find skips those).
func hidden(p string) bool {
	parts := strings.Split(p, "/")
	for _, s := range parts[:len(parts)-1] {
		if strings.HasPrefix(s, ".") {
			return true
		}
	}
	return false
}

func (r *Result) outputOf(name string) *Output {
	if r == nil {
		return nil
	}
	return r.Outputs[name]
}

// state is one side of an Application: its normalized objects, or why
// there are none.
func state(u *Unit, out *Output) (yaml []byte, errText string) {
	switch {
	case u.Err != "":
		return nil, u.Err
	case u.Skipped != "":
		return nil, "skipped: " + u.Skipped
	case out == nil:
		return nil, "not rendered"
	case out.Skipped != "":
		return nil, "skipped: " + out.Skipped
	case out.Err != "":
		return nil, out.Err
	}
	return out.Normalized, ""
}

// compare compares an Application's two sides; nil when they agree.
func compare(name string, ou, nu *Unit, oo, no *Output, o diff.Options) *diff.RootDiff {
	rd := &diff.RootDiff{Path: name}
	switch {
	case ou == nil:
		rd.Status = diff.RootAdded
		y, e := state(nu, no)
		if rd.NewError = e; e == "" {
			rd.Changes, _, _ = diff.Compare(nil, y, o)
		}
		return rd
	case nu == nil:
		rd.Status = diff.RootRemoved
		y, e := state(ou, oo)
		if rd.OldError = e; e == "" {
			rd.Changes, _, _ = diff.Compare(y, nil, o)
		}
		return rd
	}
	oy, oe := state(ou, oo)
	ny, ne := state(nu, no)
	if oe != "" || ne != "" {
		if oe == ne {
			rd.Status, rd.NewError = diff.RootFailing, ne
			return rd
		}
		rd.Status, rd.OldError, rd.NewError = diff.RootError, oe, ne
		return rd
	}
	changes, reordered, err := diff.Compare(oy, ny, o)
	if err != nil {
		rd.Status, rd.NewError = diff.RootError, err.Error()
		return rd
	}
	if len(changes) == 0 && !(o.OrderMatters && reordered) {
		return nil
	}
	rd.Status, rd.Changes, rd.Reordered = diff.RootChanged, changes, reordered
	return rd
}

func unionNames(a, b map[string]*Unit) []string {
	var out []string
	for n := range a {
		out = append(out, n)
	}
	for n := range b {
		if a[n] == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
