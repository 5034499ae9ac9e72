package batch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/lockedfile"

	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/loaders"
)

// ManifestName is the file in the output directory that lists the outputs
// kpipe wrote there, with their roots and digests. Pruning and the
// clean-up after a failing root delete only files it lists whose content
// is still the listed digest: never a file kpipe cannot prove it wrote.
const ManifestName = ".kpipe-outputs.json"

// LockName is the file in the output directory whose lock a run holds
// from reading the manifest to writing it back, so that runs into one
// output directory at once (two CI jobs, or shards given one directory)
// take turns: each finds the manifest the other left, and none prunes or
// cleans up a file another is writing. The lock is the operating
// system's (flock, LockFileEx), released when its process ends however
// it ends; the empty file stays.
const LockName = ".kpipe-outputs.lock"

// lockOutDir creates dir if needed and takes its lock, waiting for it;
// while it waits it says so once a second through warn (nil: silently).
// It gives up when ctx ends. A directory whose file system cannot lock
// (some network file systems) is used unlocked, with a warning.
func lockOutDir(ctx context.Context, dir string, warn func(string)) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	p := filepath.Join(dir, LockName)
	// kpipe's own file: never one a symlink or device stands in for.
	if st, err := os.Lstat(p); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (kpipe's lock of the output directory)", p)
	}
	type locked struct {
		unlock func()
		err    error
	}
	got := make(chan locked, 1)
	go func() {
		u, err := lockedfile.MutexAt(p).Lock()
		got <- locked{u, err}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case l := <-got:
			if l.err != nil {
				if warn != nil {
					warn(fmt.Sprintf("cannot lock the output directory (%v): a run writing there at the same time may lose the other's record of its outputs", l.err))
				}
				return func() {}, nil
			}
			return l.unlock, nil
		case <-tick.C:
			if warn != nil {
				warn(fmt.Sprintf("waiting for another kpipe run writing to %s", dir))
			}
		case <-ctx.Done():
			go func() {
				if l := <-got; l.err == nil {
					l.unlock()
				}
			}()
			return nil, context.Cause(ctx)
		}
	}
}

// manifest is the content of ManifestName. It is safe for concurrent use.
type manifest struct {
	dir string // the output directory ("" for none: the manifest does nothing)

	mu      sync.Mutex
	Version int                      `json:"version"`
	Outputs map[string]manifestEntry `json:"outputs"` // by slash path relative to dir
}

type manifestEntry struct {
	Root   string `json:"root"`
	Digest string `json:"digest"` // sha256 of the content written
}

// readManifest reads dir's manifest. A missing or unreadable one is an
// empty manifest: kpipe then deletes nothing it wrote before.
func readManifest(dir string) *manifest {
	m := &manifest{dir: dir, Version: 1, Outputs: map[string]manifestEntry{}}
	if dir == "" {
		return m
	}
	// kpipe's own state file: a symlink, FIFO or device there is ignored.
	data, err := fsread.Own(filepath.Join(dir, ManifestName), fsread.MaxFileSize)
	if err != nil {
		return m
	}
	var stored manifest
	if json.Unmarshal(data, &stored) == nil && stored.Version == 1 && stored.Outputs != nil {
		m.Outputs = stored.Outputs
	}
	return m
}

// rel is path relative to the output directory, slash-separated, or ""
// when path is not inside it.
func (m *manifest) rel(path string) string {
	r, err := filepath.Rel(m.dir, path)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(r)
}

// add records that path, root's output, now holds content of digest.
func (m *manifest) add(root, path, digest string) {
	if r := m.rel(path); r != "" {
		m.mu.Lock()
		m.Outputs[r] = manifestEntry{Root: root, Digest: digest}
		m.mu.Unlock()
	}
}

// removeOutput deletes path if the manifest lists it and it still holds
// what kpipe wrote; it reports whether it deleted it.
func (m *manifest) removeOutput(path string) bool {
	r := m.rel(path)
	if r == "" {
		return false
	}
	m.mu.Lock()
	e, ok := m.Outputs[r]
	delete(m.Outputs, r)
	m.mu.Unlock()
	return ok && removeIfDigest(path, e.Digest) == removed
}

// prune deletes the listed outputs whose roots are not in roots and no
// longer hold a kustomization file in fsys. It returns the outputs it deleted and
// those it left because they changed since kpipe wrote them (both as
// paths relative to the output directory, sorted); neither stays listed.
func (m *manifest) prune(fsys loaders.FS, roots []string) (pruned, kept []string) {
	live := make(map[string]bool, len(roots))
	for _, r := range roots {
		live[r] = true
	}
	return m.pruneBy(func(root string) bool { return live[root] || loaders.HasKustomization(fsys, root) })
}

// pruneBy deletes the listed outputs whose owners are not alive, as prune
// does.
func (m *manifest) pruneBy(alive func(owner string) bool) (pruned, kept []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for r, e := range m.Outputs {
		if alive(e.Root) {
			continue
		}
		delete(m.Outputs, r)
		switch removeIfDigest(filepath.Join(m.dir, filepath.FromSlash(r)), e.Digest) {
		case removed:
			pruned = append(pruned, r)
			removeEmptyParents(m.dir, filepath.Dir(filepath.Join(m.dir, filepath.FromSlash(r))))
		case modified:
			kept = append(kept, r)
		}
	}
	sort.Strings(pruned)
	sort.Strings(kept)
	return pruned, kept
}

// write saves the manifest atomically.
func (m *manifest) write() error {
	if m.dir == "" {
		return nil
	}
	m.mu.Lock()
	data, err := json.MarshalIndent(m, "", "  ")
	m.mu.Unlock()
	if err != nil {
		return err
	}
	// Unchanged, it is left as it is, as unchanged outputs are.
	_, err = writeIfChanged(filepath.Join(m.dir, ManifestName), append(data, '\n'))
	return err
}

type removal int

const (
	gone     removal = iota // the file is not there (or is not a regular file)
	removed                 // deleted
	modified                // there, but not what kpipe wrote: left alone
)

// removeIfDigest deletes the regular file path if its content has the
// sha256 digest (hex).
func removeIfDigest(path, digest string) removal {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return gone
	}
	data, err := fsread.Own(path, fsread.MaxFileSize)
	if err != nil {
		return modified
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != digest {
		return modified
	}
	if os.Remove(path) != nil {
		return modified
	}
	return removed
}

// removeEmptyParents removes dir and its parents up to (not including)
// top while they are empty.
func removeEmptyParents(top, dir string) {
	for dir != top && strings.HasPrefix(dir, top+string(filepath.Separator)) {
		if os.Remove(dir) != nil { // fails unless empty
			return
		}
		dir = filepath.Dir(dir)
	}
}
