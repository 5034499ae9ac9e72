package cache

import (
	"os"
	"path/filepath"
	"sync"
)

// Input is one file or directory a build read.
type Input struct {
	// Path is the path the build named (absolute, maybe through symlinks);
	// Real is where it led (absolute, symlink-free).
	Path, Real string
	// Digest is the content's digest (for a directory, its listing's; see
	// FileIndex).
	Digest Key
	// stat is what a stat said of Real when Digest was taken (Stamp,
	// StampRead; zero when unknown): a check that finds Real as stat
	// describes it trusts Digest without reading it, as the file index
	// does with its own records.
	stat fileStat
}

// InputChecker tells whether recorded inputs are unchanged. It remembers
// every answer for the rest of the run, so an input shared by many roots
// is looked at once. It reads the tree its file index reads (the disk, or
// a Source). It is safe for concurrent use.
//
// In a tree that names content (ContentID), a directory whose name is
// the one a record holds is unchanged with everything below it since the
// record was made: an input of the same record below it that is its own
// real path is then unchanged without a look (the walk of a whole
// revision's directories, for a discovery record, costs a look at its top
// when nothing changed). Only inputs of the same record: another record,
// made from another revision, may hold another digest for a path below.
type InputChecker struct {
	files *FileIndex

	mu   sync.Mutex
	real map[string]realPath // path -> where it leads now
	same map[Input]bool
	sets map[Key]bool // sets of inputs, by key (UnchangedSet)
}

type realPath struct {
	real string
	err  error
	fi   os.FileInfo // the lstat of real, when it is not a symlink
}

// NewInputChecker returns a checker that finds digests through files.
func NewInputChecker(files *FileIndex) *InputChecker {
	return &InputChecker{files: files, real: map[string]realPath{}, same: map[Input]bool{}, sets: map[Key]bool{}}
}

// Files returns the file index the checker reads digests through.
func (c *InputChecker) Files() *FileIndex { return c.files }

// Digest returns the digest of the file or directory at path, an absolute
// symlink-free path, through the checker's file index.
func (c *InputChecker) Digest(path string) (Key, bool) { return c.files.Digest(path) }

// Unchanged reports whether every input (of one record) still leads where
// it led and has the digest it had.
func (c *InputChecker) Unchanged(inputs []Input) bool {
	var covered map[string]bool // directories unchanged by their content's name
	for _, in := range inputs {
		if covered != nil && in.Path == in.Real && below(covered, in.Path) {
			continue
		}
		if !c.unchanged(in) {
			return false
		}
		if in.stat.ID != "" && in.Path == in.Real {
			// Not only its listing: its name must be the one recorded.
			if fi, err := c.files.stat(in.Real); err == nil && fi.IsDir() && ContentID(fi) == in.stat.ID {
				if covered == nil {
					covered = map[string]bool{}
				}
				covered[in.Real] = true
			}
		}
	}
	return true
}

// UnchangedSet reports whether the inputs of the set named k are
// unchanged, as Unchanged does, asking once per k for the rest of the
// run: load reads the set's inputs (false: they cannot be read, and the
// set counts as changed).
func (c *InputChecker) UnchangedSet(k Key, load func() ([]Input, bool)) bool {
	c.mu.Lock()
	same, ok := c.sets[k]
	c.mu.Unlock()
	if !ok {
		in, found := load()
		same = found && c.Unchanged(in)
		c.mu.Lock()
		c.sets[k] = same
		c.mu.Unlock()
	}
	return same
}

// below reports whether one of p's ancestors is in dirs.
func below(dirs map[string]bool, p string) bool {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if dirs[d] {
			return true
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

func (c *InputChecker) unchanged(in Input) bool {
	c.mu.Lock()
	same, ok := c.same[in]
	c.mu.Unlock()
	if ok {
		return same
	}
	same = false
	if r := c.resolveInfo(in.Path); r.err == nil && r.real == in.Real {
		c.files.learn(in.Real, in.stat, in.Digest)
		var d Key
		var ok bool
		if r.fi != nil {
			d, ok = c.files.digestStat(in.Real, r.fi) // (resolving took its stat)
		} else {
			d, ok = c.files.Digest(in.Real)
		}
		same = ok && d == in.Digest
	}
	c.mu.Lock()
	c.same[in] = same
	c.mu.Unlock()
	return same
}

func (c *InputChecker) lstat(path string) (os.FileInfo, error) {
	if src := c.files.Source(); src != nil {
		return src.Lstat(path)
	}
	return os.Lstat(path)
}

func (c *InputChecker) evalSymlinks(path string) (string, error) {
	if src := c.files.Source(); src != nil {
		return src.EvalSymlinks(path)
	}
	return filepath.EvalSymlinks(path)
}

// resolve is filepath.EvalSymlinks for absolute, clean paths, remembering
// the directories it resolved on the way.
func (c *InputChecker) resolve(path string) (string, error) {
	r := c.resolveInfo(path)
	return r.real, r.err
}

// resolveInfo is resolve, with the lstat of where path leads when that is
// not a symlink (nil for the root and after a symlink).
func (c *InputChecker) resolveInfo(path string) realPath {
	c.mu.Lock()
	r, ok := c.real[path]
	c.mu.Unlock()
	if ok {
		return r
	}
	parent := filepath.Dir(path)
	if parent == path {
		return realPath{real: path}
	}
	r.real, r.err = c.resolve(parent)
	if r.err == nil {
		full := filepath.Join(r.real, filepath.Base(path))
		var fi os.FileInfo
		if fi, r.err = c.lstat(full); r.err == nil {
			r.real = full
			if fi.Mode()&os.ModeSymlink != 0 {
				r.real, r.err = c.evalSymlinks(full)
			} else {
				r.fi = fi
			}
		}
	}
	c.mu.Lock()
	c.real[path] = r
	c.mu.Unlock()
	return r
}
