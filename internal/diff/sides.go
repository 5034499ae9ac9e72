package diff

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kpipe/kpipe/internal/affected"
	"github.com/kpipe/kpipe/internal/gitfs"
	"github.com/kpipe/kpipe/loaders"
)

// Sides are the two revisions a git review compares: the old one read
// from git's objects, the new one too, or the working tree.
type Sides struct {
	// Dir is where the review runs (absolute, symlinks resolved).
	Dir string
	// Objects reads the revisions (the caller closes it); Repo is the
	// repository.
	Objects *gitfs.Repo
	Repo    affected.Repo
	// Base and Head are the commits ("" Head: the working tree), BaseTree
	// and HeadTree their trees.
	Base, Head, BaseTree, HeadTree string
	// Changes are the paths that differ, relative to Repo.Top.
	Changes []affected.Change
	// BaseDir and BaseFS are where the old side's files appear (a path
	// never created on disk, <top>@base: see revisionDir) and the tree
	// that serves them; HeadDir and HeadFS the new side's (the working
	// tree itself, or <top>@head).
	BaseDir, HeadDir string
	BaseFS, HeadFS   loaders.FS
}

// OpenSides opens the repository holding dir and the two revisions of a
// review: base ("": the merge base of HEAD with the default branch) and
// head ("": the working tree), and lists the paths that differ (two
// trees are compared by their objects' names, reading only the
// directories that differ).
func OpenSides(ctx context.Context, dir, base, head string) (*Sides, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	// git cat-file starts while rev-parse finds the top level.
	objects, err := gitfs.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	s := &Sides{Dir: dir, Objects: objects}
	fail := func(err error) (*Sides, error) {
		objects.Close()
		return nil, err
	}
	if s.Repo, err = affected.OpenRepo(ctx, dir); err != nil {
		return fail(err)
	}
	if base == "" {
		if base, err = s.Repo.DefaultBase(ctx); err != nil {
			return fail(err)
		}
	}
	if s.Base, s.BaseTree, err = objects.Commit(base); err != nil {
		return fail(err)
	}
	if head != "" {
		if s.Head, s.HeadTree, err = objects.Commit(head); err != nil {
			return fail(err)
		}
		diffs, err := objects.Diff(s.BaseTree, s.HeadTree)
		if err != nil {
			return fail(err)
		}
		for _, d := range diffs {
			s.Changes = append(s.Changes, affected.Change{Path: d.Path, Status: affected.Status(d.Status)})
		}
	} else if s.Changes, err = s.Repo.Git(ctx, s.Base, ""); err != nil {
		return fail(err)
	}
	// The two sides: a revision at <top>@base or <top>@head, the working
	// tree where it is.
	s.BaseDir = revisionDir(s.Repo.Top, "base")
	s.BaseFS = loaders.NewFS(objects.Tree(s.BaseTree), s.BaseDir)
	s.HeadDir, s.HeadFS = s.Repo.Top, loaders.Disk
	if s.Head != "" {
		s.HeadDir = revisionDir(s.Repo.Top, "head")
		s.HeadFS = loaders.NewFS(objects.Tree(s.HeadTree), s.HeadDir)
	}
	return s, nil
}

// Trees are paths (relative to Dir, or absolute; none: Dir) relative to
// the repository's top level; a path outside it is an error.
func (s *Sides) Trees(paths []string) ([]string, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var rels []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Dir, p)
		}
		rel, err := filepath.Rel(s.Repo.Top, p)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return nil, fmt.Errorf("%s is outside the repository at %s", p, s.Repo.Top)
		}
		rels = append(rels, rel)
	}
	return rels, nil
}

// Names are the two revisions' short names, as a Result shows them
// ("working tree" for the working tree).
func (s *Sides) Names() (base, head string) {
	head = "working tree"
	if s.Head != "" {
		head = short(s.Head)
	}
	return short(s.Base), head
}

// ObjectsRead is the number of git objects read so far.
func (s *Sides) ObjectsRead() int { return s.Objects.Reads() }

// Close releases git.
func (s *Sides) Close() error { return s.Objects.Close() }

// SortRoots sorts a Result's roots as ReviewGit does (by path).
func SortRoots(roots []RootDiff) { sortRoots(roots) }
