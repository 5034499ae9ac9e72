package batch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/kpipe/kpipe/internal/fsread"
)

// OutDir is an output directory kept as build-all keeps its own (locked
// while a run writes there, a file rewritten only when it changed, a
// manifest of the files kpipe wrote, pruning by it), for runs whose units
// are not kustomization roots: `kpipe argocd build-all` writes one file
// per Application. Owners name the units in the manifest; they must not
// be paths a kustomization may lie at (a prefix such as "argocd:").
type OutDir struct {
	dir    string
	check  bool
	man    *manifest
	unlock func()
}

// OpenOutDir opens dir (absolute) for a run: created and locked, its
// manifest read; with check, nothing is written, locked or deleted.
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

// Put writes data to path (under the directory) for owner unless it
// holds data already, and says whether the file changed; with check it
// writes nothing and says whether the file is missing or differs (out of
// date). It returns data's digest (hex).
func (d *OutDir) Put(owner, path string, data []byte) (changed bool, digest string, err error) {
	sum := sha256.Sum256(data)
	digest = hex.EncodeToString(sum[:])
	if d.check {
		old, rerr := fsread.Own(path, int64(len(data)))
		return rerr != nil || string(old) != string(data), digest, nil
	}
	if changed, err = writeIfChanged(path, data); err != nil {
		return false, digest, err
	}
	d.man.add(owner, path, digest)
	return changed, digest, nil
}

// Keep records that path, owner's output, holds content of digest (hex)
// already: a unit found up to date.
func (d *OutDir) Keep(owner, path, digest string) {
	if !d.check {
		d.man.add(owner, path, digest)
	}
}

// Drop deletes path, the output of a unit that now fails, if kpipe wrote
// it and it is unchanged since; it says whether it deleted it.
func (d *OutDir) Drop(path string) bool {
	if d.check {
		return false
	}
	return d.man.removeOutput(path)
}

// Orphans lists the .yaml files under the directory (relative, slash
// separated, sorted) that are none of outputs: for a check.
func (d *OutDir) Orphans(outputs []string) []string {
	return orphans(d.dir, outputs, func(p string) string { return p })
}

// Close prunes, when prune is set, the outputs of owners not in live
// (only files kpipe wrote and that still hold what it wrote), writes the
// manifest back and unlocks the directory. It returns the outputs pruned
// and those kept because they changed since kpipe wrote them.
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

// Path is name (slash-separated) under the directory.
func (d *OutDir) Path(name string) string { return filepath.Join(d.dir, filepath.FromSlash(name)) }
