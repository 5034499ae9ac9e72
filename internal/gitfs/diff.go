package gitfs

import (
	"path"
	"sort"
)

// Change is one path that differs between two trees, as `git diff
// --name-status --no-renames` reports it: 'A' added, 'D' deleted, 'M'
// modified (its content, its mode or its type).
type Change struct {
	Path   string // slash-separated, relative to the trees' top
	Status byte
}

// Diff lists the files (and symlinks and submodules) that differ between
// the trees a and b (object names; Commit gives a revision's), sorted by
// path. Only directories whose object names differ are read: the cost
// follows the change, not the size of the trees.
func (r *Repo) Diff(a, b string) ([]Change, error) {
	var out []Change
	if err := r.diff(".", a, b, &out); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func (r *Repo) diff(dir, a, b string, out *[]Change) error {
	if a == b {
		return nil
	}
	ea, err := r.tree(a)
	if err != nil {
		return err
	}
	eb, err := r.tree(b)
	if err != nil {
		return err
	}
	byName := make(map[string]entry, len(eb))
	for _, e := range eb {
		byName[e.name] = e
	}
	for _, x := range ea {
		p := path.Join(dir, x.name)
		y, ok := byName[x.name]
		delete(byName, x.name)
		switch {
		case !ok:
			if err := r.all(p, x, 'D', out); err != nil {
				return err
			}
		case x.mode == modeTree && y.mode == modeTree:
			if err := r.diff(p, x.oid, y.oid, out); err != nil {
				return err
			}
		case x.mode == modeTree || y.mode == modeTree:
			// A directory replaced by a file or the reverse: what was
			// there goes, what is there comes.
			if err := r.all(p, x, 'D', out); err != nil {
				return err
			}
			if err := r.all(p, y, 'A', out); err != nil {
				return err
			}
		case x.oid != y.oid || x.mode != y.mode:
			*out = append(*out, Change{Path: p, Status: 'M'})
		}
	}
	for _, y := range byName {
		if err := r.all(path.Join(dir, y.name), y, 'A', out); err != nil {
			return err
		}
	}
	return nil
}

// all lists e (at p) and, for a directory, every file below it, as
// status.
func (r *Repo) all(p string, e entry, status byte, out *[]Change) error {
	if e.mode != modeTree {
		*out = append(*out, Change{Path: p, Status: status})
		return nil
	}
	entries, err := r.tree(e.oid)
	if err != nil {
		return err
	}
	for _, c := range entries {
		if err := r.all(path.Join(p, c.name), c, status, out); err != nil {
			return err
		}
	}
	return nil
}
