package batch

import (
	"context"
	"path/filepath"

	"github.com/kpipe/kpipe/internal/fsread"
)

// OutDir is an output directory kept as build-all keeps it, for another
// run of many outputs (kpipe flux build-all): locked while a run writes
// into it, each file written atomically and only when it changed, a
// manifest (ManifestName) of what was written and for whom, by which
// pruning and the clean-up after a failing output go, deleting only files
// kpipe wrote and that still hold what it wrote. Owners are strings the
// caller chooses (build-all's are root directories): two kinds of run
// must not share a directory.
type OutDir struct {
	dir    string
	check  bool
	man    *manifest
	unlock func()
}

// OpenOutDir opens dir (absolute) for a run: locked (waiting for another
// run, saying so through warn) and its manifest read; with check, it is
// only compared with, never locked or written.
func OpenOutDir(ctx context.Context, dir string, check bool, warn func(string)) (*OutDir, error) {
	d := &OutDir{dir: dir, check: check, unlock: func() {}}
	if check {
		d.man = readManifest("")
		return d, nil
	}
	unlock, err := lockOutDir(ctx, dir, warn)
	if err != nil {
		return nil, err
	}
	d.unlock = unlock
	d.man = readManifest(dir)
	return d, nil
}

// Path is name (slash-separated) under the directory.
func (d *OutDir) Path(name string) string { return filepath.Join(d.dir, filepath.FromSlash(name)) }

// Write writes data, owner's output, to path unless it holds it already,
// and says whether the file had to change (with check: whether it is
// missing or differs; nothing is written). digest is data's sha256 (hex).
func (d *OutDir) Write(owner, path string, data []byte, digest string) (changed bool, err error) {
	if d.check {
		old, err := fsread.Own(path, int64(len(data)))
		return err != nil || string(old) != string(data), nil
	}
	wrote, err := writeIfChanged(path, data)
	if err == nil {
		d.man.add(owner, path, digest)
	}
	return wrote, err
}

// Remove deletes path (a failing owner's previous output) if a run wrote
// it and it still holds what was written; it says whether it did.
func (d *OutDir) Remove(path string) bool {
	if d.check {
		return false
	}
	return d.man.removeOutput(path)
}

// Orphans lists the .yaml files under the directory that are none of
// outputs (relative, slash-separated, sorted).
func (d *OutDir) Orphans(outputs []string) []string {
	return orphans(d.dir, outputs, func(p string) string { return p })
}

// Close ends the run: with prune, the outputs of owners live does not
// hold are deleted (if still what was written; those that changed are
// kept and listed); the manifest is written and the lock released. With
// check it does nothing.
func (d *OutDir) Close(live []string, prune bool) (pruned, kept []string, err error) {
	defer d.unlock()
	if d.check {
		return nil, nil, nil
	}
	if prune {
		alive := make(map[string]bool, len(live))
		for _, o := range live {
			alive[o] = true
		}
		pruned, kept = d.man.pruneBy(func(owner string) bool { return alive[owner] })
	}
	return pruned, kept, d.man.write()
}
