package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// RootIndex records, for each build root, every input its last successful
// build read and the output it produced, so that a later run with the same
// settings can tell from file stats alone (through a FileIndex) that a
// root is up to date, without loading its kustomizations or opening the
// store. It also records what root discovery found, so an unchanged tree
// need not be parsed to know its roots.
//
// An index belongs to one set of build settings (kpipe's binary, the flags
// that change output): each set has its own file, "roots-<digest>.idx" in
// the cache directory. Records are self-checking: a record is only trusted
// when every input it lists still has the digest it lists, so a stale or
// lost update costs a rebuild, never a wrong output.
type RootIndex struct {
	path string

	mu    sync.Mutex
	data  rootIndexData
	dirty bool
}

type rootIndexData struct {
	Roots     map[string]RootRecord
	Discovery map[string]DiscoveryRecord
}

// storedRootIndex is rootIndexData as stored: every distinct input once,
// and records that refer to them by position (the roots of a monorepo
// share most of their inputs).
type storedRootIndex struct {
	Inputs    []Input
	Roots     map[string]storedRootRecord
	Discovery map[string]storedDiscoveryRecord
}

type storedRootRecord struct {
	Inputs       []int32
	Output       string
	OutputDigest Key
}

type storedDiscoveryRecord struct {
	Files, Dirs []int32
	Roots       []string
}

// store interns d's inputs.
func (d rootIndexData) store() storedRootIndex {
	s := storedRootIndex{Roots: map[string]storedRootRecord{}, Discovery: map[string]storedDiscoveryRecord{}}
	pos := map[Input]int32{}
	intern := func(ins []Input) []int32 {
		out := make([]int32, len(ins))
		for i, in := range ins {
			p, ok := pos[in]
			if !ok {
				p = int32(len(s.Inputs))
				pos[in] = p
				s.Inputs = append(s.Inputs, in)
			}
			out[i] = p
		}
		return out
	}
	for k, r := range d.Roots {
		s.Roots[k] = storedRootRecord{Inputs: intern(r.Inputs), Output: r.Output, OutputDigest: r.OutputDigest}
	}
	for k, r := range d.Discovery {
		s.Discovery[k] = storedDiscoveryRecord{Files: intern(r.Files), Dirs: intern(r.Dirs), Roots: r.Roots}
	}
	return s
}

// load expands s; false when it refers to inputs it does not have.
func (s storedRootIndex) load() (rootIndexData, bool) {
	d := rootIndexData{Roots: map[string]RootRecord{}, Discovery: map[string]DiscoveryRecord{}}
	ok := true
	expand := func(ps []int32) []Input {
		out := make([]Input, len(ps))
		for i, p := range ps {
			if p < 0 || int(p) >= len(s.Inputs) {
				ok = false
				return nil
			}
			out[i] = s.Inputs[p]
		}
		return out
	}
	for k, r := range s.Roots {
		d.Roots[k] = RootRecord{Inputs: expand(r.Inputs), Output: r.Output, OutputDigest: r.OutputDigest}
	}
	for k, r := range s.Discovery {
		d.Discovery[k] = DiscoveryRecord{Files: expand(r.Files), Dirs: expand(r.Dirs), Roots: r.Roots}
	}
	return d, ok
}

// Input is one file or directory a build read.
type Input struct {
	// Path is the path the build named (absolute, maybe through symlinks);
	// Real is where it led (absolute, symlink-free).
	Path, Real string
	// Digest is the content's digest (for a directory, its listing's; see
	// FileIndex).
	Digest Key
}

// RootRecord is one root's last successful build.
type RootRecord struct {
	Inputs []Input
	// Output is the file the output was written to ("" when none) and
	// OutputDigest the output's digest.
	Output       string
	OutputDigest Key
}

// DiscoveryRecord is what root discovery found in one set of trees: the
// directories it walked, the kustomization files there and the roots they
// made.
type DiscoveryRecord struct {
	Files, Dirs []Input
	Roots       []string
}

// LoadRootIndex reads the root index for the given settings from the cache
// directory dir: an empty index when there is none, and with dir "" one
// that is never saved. An index file that cannot be read or fails
// verification is reported in the error, and the index returned is empty
// (the next Save replaces the file).
func LoadRootIndex(dir string, settings Key) (*RootIndex, error) {
	ri := &RootIndex{data: rootIndexData{Roots: map[string]RootRecord{}, Discovery: map[string]DiscoveryRecord{}}}
	if dir == "" {
		return ri, nil
	}
	ri.path = filepath.Join(dir, fmt.Sprintf("roots-%x.idx", settings[:12]))
	var s storedRootIndex
	if err := readState(ri.path, &s); err != nil {
		ri.dirty = true
		return ri, err
	}
	d, ok := s.load()
	if !ok {
		ri.dirty = true
		return ri, fmt.Errorf("%s: %w", ri.path, errBadStateFile)
	}
	ri.data = d
	return ri, nil
}

// Persistent reports whether the index is saved (it has a cache
// directory); records of an index that is not are never read again.
func (ri *RootIndex) Persistent() bool { return ri.path != "" }

// Root returns the record of root.
func (ri *RootIndex) Root(root string) (RootRecord, bool) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	r, ok := ri.data.Roots[root]
	return r, ok
}

// SetRoot records root's build; a nil record forgets the root.
func (ri *RootIndex) SetRoot(root string, r *RootRecord) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if r == nil {
		if _, ok := ri.data.Roots[root]; ok {
			delete(ri.data.Roots, root)
			ri.dirty = true
		}
		return
	}
	ri.data.Roots[root] = *r
	ri.dirty = true
}

// Discovery returns the discovery record stored under key.
func (ri *RootIndex) Discovery(key string) (DiscoveryRecord, bool) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	r, ok := ri.data.Discovery[key]
	return r, ok
}

// SetDiscovery stores a discovery record under key.
func (ri *RootIndex) SetDiscovery(key string, r DiscoveryRecord) {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	ri.data.Discovery[key] = r
	ri.dirty = true
}

// Save writes the index back when it changed.
func (ri *RootIndex) Save() error {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if !ri.dirty || ri.path == "" {
		return nil
	}
	if err := writeState(ri.path, ri.data.store()); err != nil {
		return err
	}
	ri.dirty = false
	return nil
}

// InputChecker tells whether recorded inputs are unchanged. It remembers
// every answer for the rest of the run, so an input shared by many roots
// is looked at once. It is safe for concurrent use.
type InputChecker struct {
	files *FileIndex

	mu   sync.Mutex
	real map[string]realPath // path -> where it leads now
	same map[Input]bool
}

type realPath struct {
	real string
	err  error
}

// NewInputChecker returns a checker that finds digests through files.
func NewInputChecker(files *FileIndex) *InputChecker {
	return &InputChecker{files: files, real: map[string]realPath{}, same: map[Input]bool{}}
}

// Digest returns the digest of the file or directory at path, an absolute
// symlink-free path, through the checker's file index.
func (c *InputChecker) Digest(path string) (Key, bool) { return c.files.Digest(path) }

// Unchanged reports whether every input still leads where it led and has
// the digest it had.
func (c *InputChecker) Unchanged(inputs []Input) bool {
	for _, in := range inputs {
		if !c.unchanged(in) {
			return false
		}
	}
	return true
}

func (c *InputChecker) unchanged(in Input) bool {
	c.mu.Lock()
	same, ok := c.same[in]
	c.mu.Unlock()
	if ok {
		return same
	}
	same = false
	if real, err := c.resolve(in.Path); err == nil && real == in.Real {
		d, ok := c.files.Digest(in.Real)
		same = ok && d == in.Digest
	}
	c.mu.Lock()
	c.same[in] = same
	c.mu.Unlock()
	return same
}

// resolve is filepath.EvalSymlinks for absolute, clean paths, remembering
// the directories it resolved on the way.
func (c *InputChecker) resolve(path string) (string, error) {
	c.mu.Lock()
	r, ok := c.real[path]
	c.mu.Unlock()
	if ok {
		return r.real, r.err
	}
	parent := filepath.Dir(path)
	if parent == path {
		return path, nil
	}
	r.real, r.err = c.resolve(parent)
	if r.err == nil {
		full := filepath.Join(r.real, filepath.Base(path))
		var fi os.FileInfo
		if fi, r.err = os.Lstat(full); r.err == nil {
			r.real = full
			if fi.Mode()&os.ModeSymlink != 0 {
				r.real, r.err = filepath.EvalSymlinks(full)
			}
		}
	}
	c.mu.Lock()
	c.real[path] = r
	c.mu.Unlock()
	return r.real, r.err
}

// removeStateFiles deletes the state files of the cache directory dir.
func removeStateFiles(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".idx") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
