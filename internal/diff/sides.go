package diff

import (
	"context"
	"path/filepath"

	"github.com/kpipe/kpipe/internal/affected"
	"github.com/kpipe/kpipe/internal/gitfs"
	"github.com/kpipe/kpipe/loaders"
)

// Sides are the two revisions of a git review, read through the read
// seam: the old one (Base) from git's objects at BaseDir, a path never
// created on disk (<top>@base), and the new one (Head) at HeadDir: the
// working tree where it is, or a revision at <top>@head. Changes are the
// paths that differ (relative to Top). ReviewGit compares kustomization
// roots over them; kpipe diff --flux compares Flux Kustomizations.
type Sides struct {
	Repo             affected.Repo
	Base, Head       string // short names ("working tree" for the working tree)
	BaseDir, HeadDir string
	BaseFS, HeadFS   loaders.FS
	Changes          []affected.Change

	objects *gitfs.Repo
}

// OpenSides opens the revisions base ("": the merge base of HEAD with the
// default branch) and head ("": the working tree) of the repository
// holding dir (absolute). Close releases git.
func OpenSides(ctx context.Context, dir, base, head string) (*Sides, error) {
	objects, err := gitfs.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	s := &Sides{objects: objects}
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
	base, baseTree, err := objects.Commit(base)
	if err != nil {
		return fail(err)
	}
	headTree := ""
	if head != "" {
		if head, headTree, err = objects.Commit(head); err != nil {
			return fail(err)
		}
	}
	if head != "" {
		// Two trees: compared by their objects' names, reading only the
		// directories that differ.
		diffs, err := objects.Diff(baseTree, headTree)
		if err != nil {
			return fail(err)
		}
		for _, d := range diffs {
			s.Changes = append(s.Changes, affected.Change{Path: d.Path, Status: affected.Status(d.Status)})
		}
	} else if s.Changes, err = s.Repo.Git(ctx, base, ""); err != nil {
		return fail(err)
	}
	s.Base, s.Head = short(base), "working tree"
	s.BaseDir = revisionDir(s.Repo.Top, "base")
	s.BaseFS = loaders.NewFS(objects.Tree(baseTree), s.BaseDir)
	s.HeadDir, s.HeadFS = s.Repo.Top, loaders.Disk
	if head != "" {
		s.Head = short(head)
		s.HeadDir = revisionDir(s.Repo.Top, "head")
		s.HeadFS = loaders.NewFS(objects.Tree(headTree), s.HeadDir)
	}
	return s, nil
}

// ObjectsRead is the number of git objects read so far.
func (s *Sides) ObjectsRead() int { return s.objects.Reads() }

// Close releases git.
func (s *Sides) Close() error { return s.objects.Close() }

// Rel is p (a path of either side) relative to its side's tree.
func (s *Sides) Rel(p string) string {
	for _, d := range []string{s.BaseDir, s.HeadDir} {
		if rel, err := filepath.Rel(d, p); err == nil && (filepath.IsLocal(rel) || rel == ".") {
			return rel
		}
	}
	return p
}

// SortRoots sorts a Result's roots as ReviewGit does (by path).
func SortRoots(roots []RootDiff) { sortRoots(roots) }
