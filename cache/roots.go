package cache

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
)

// RootIndex records, for each build root, every input its last successful
// build read and the output it produced, so that a later run with the same
// settings can tell from file stats alone (through a FileIndex) that a
// root is up to date, without loading its kustomizations. It also records
// what root discovery found, so an unchanged tree need not be parsed to
// know its roots.
//
// An index belongs to one set of build settings (kpipe's binary, the flags
// that change output). Each record is a file of its own in the cache
// directory (v2/<x>/<hex>-r, named by the settings and the root), read
// when its root is asked for and written when it changed, so a run costs
// what it builds, whatever else the cache holds. Records are
// self-checking: a record is only trusted when every input it lists still
// has the digest it lists, so a stale or lost update costs a rebuild,
// never a wrong output.
type RootIndex struct {
	d        objects // nil: in memory only
	settings Key

	mu        sync.Mutex
	roots     map[string]*RootRecord // nil value: known to have no record
	sets      map[Key][]Input        // input sets read or saved (nil value: none)
	discovery map[string]*DiscoveryRecord
}

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

// RootRecord is one root's last successful build.
type RootRecord struct {
	// Inputs are the inputs the root's build read, and Sets name more:
	// input sets (SaveInputSet) the root shares with other roots, the own
	// inputs of a base each. Unchanged checks both.
	Inputs []Input
	Sets   []Key
	// Output is the file the output was written to ("" when none) and
	// OutputDigest the output's digest.
	Output       string
	OutputDigest Key
	// Warnings are the messages the build printed (kustomize's
	// deprecation notices), printed again with a stored output.
	Warnings []string
}

// InputSet is the own inputs of one base (a node roots include), which
// every root record that includes the base names by the set's key instead
// of listing them again: at 10,000 roots, repeating the bases' inputs in
// every root's record cost about 5% of the user CPU of filling the cache.
// A set is stored once a run, in a record named by its own digest, so a
// name never changes content; a root whose set is lost or damaged is
// built again. A set must not be copied once saved, and is saved into one
// RootIndex only: its key, computed once, covers that index's settings.
type InputSet struct {
	Inputs []Input

	once sync.Once
	key  Key
}

// DiscoveryRecord is what root discovery found in one set of trees: the
// directories it walked, the kustomization files there and the roots they
// made.
type DiscoveryRecord struct {
	Files, Dirs []Input
	Roots       []string
}

// storedRecord is a record file's content: what it is about (checked on
// reading) and one of the records.
type storedRecord struct {
	Settings  Key
	Name      string
	Root      *RootRecord
	Discovery *DiscoveryRecord
}

// loadRootIndex returns the root index for the given settings kept in the
// cache directory dir; with dir "" (or a directory that is not a kpipe
// cache) it lives in memory only. Nothing is read until a root is asked
// for; the error is always nil (it is kept for callers).
func loadRootIndex(dir string, settings Key) (*RootIndex, error) {
	ri := &RootIndex{settings: settings, roots: map[string]*RootRecord{}, sets: map[Key][]Input{}, discovery: map[string]*DiscoveryRecord{}}
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, markerName)); err == nil {
			ri.d = newDisk(dir)
		}
	}
	return ri, nil
}

// RootIndex returns the root index for settings kept in s's directory (in
// memory only for a nil store); its write failures are reported through
// s, once.
func (s *Store) RootIndex(settings Key) *RootIndex {
	ri, _ := loadRootIndex("", settings)
	if s != nil {
		ri.d = s.objects
	}
	return ri
}

// Persistent reports whether the index is saved (it has a cache
// directory); records of an index that is not are never read again.
func (ri *RootIndex) Persistent() bool { return ri.d != nil }

func (ri *RootIndex) recordName(kind, name string) string {
	h := NewKey("root-record", kind).Key(ri.settings).String(name).Sum()
	return hex.EncodeToString(h[:])
}

// read loads the record of kind about name; nil when there is none or it
// is unusable.
func (ri *RootIndex) read(kind, name string) *storedRecord {
	if ri.d == nil {
		return nil
	}
	b, err := ri.d.read(ri.d.name(ri.recordName(kind, name), sufRecord))
	if err != nil {
		return nil
	}
	var s storedRecord
	if decodeState(b, &s) != nil || s.Settings != ri.settings || s.Name != name {
		return nil
	}
	return &s
}

// Root returns the record of root.
func (ri *RootIndex) Root(root string) (RootRecord, bool) {
	ri.mu.Lock()
	r, known := ri.roots[root]
	ri.mu.Unlock()
	if !known {
		if ri.maybeSaved(root) {
			if s := ri.read("root", root); s != nil && s.Root != nil {
				r = s.Root
			}
		}
		ri.mu.Lock()
		if _, set := ri.roots[root]; !set {
			ri.roots[root] = r
		}
		r = ri.roots[root]
		ri.mu.Unlock()
	}
	if r == nil {
		return RootRecord{}, false
	}
	return *r, true
}

// maybeSaved says whether root may have a record: in a cache this process
// made (disk.fresh), only if this process wrote one.
func (ri *RootIndex) maybeSaved(root string) bool {
	if ri.d == nil || ri.d.freshRoots() == nil {
		return true
	}
	_, ok := ri.d.freshRoots().Load(string(ri.settings[:]) + root)
	return ok
}

// SetRoot records root's build; a nil record forgets the root. A
// persistent index writes the record at once and keeps no copy in memory.
func (ri *RootIndex) SetRoot(root string, r *RootRecord) {
	if ri.d != nil {
		ri.mu.Lock()
		delete(ri.roots, root)
		ri.mu.Unlock()
		if saved := ri.d.freshRoots(); saved != nil {
			saved.Store(string(ri.settings[:])+root, true)
		}
		ri.saveRecord("root", root, &storedRecord{Settings: ri.settings, Name: root, Root: r})
		return
	}
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if r != nil {
		c := *r
		r = &c
	}
	ri.roots[root] = r
}

// saveRecord writes (or, when it holds nothing, removes) a record.
func (ri *RootIndex) saveRecord(kind, name string, s *storedRecord) {
	path := ri.d.name(ri.recordName(kind, name), sufRecord)
	if s.Root == nil && s.Discovery == nil {
		ri.d.remove(path)
		return
	}
	ri.d.write(path, encodeState(s))
}

// inputSetKind is the kind of an input set's record: its name is the
// hex of the record's own digest (see SaveInputSet).
const inputSetKind = "input-set"

// SaveInputSet stores s, once however many roots name it, and returns its
// key: the digest that ends the set's record (encodeState), so a record
// read back under the key is the one saved.
func (ri *RootIndex) SaveInputSet(s *InputSet) Key {
	s.once.Do(func() {
		b := encodeState(&storedRecord{Settings: ri.settings, Name: inputSetKind, Root: &RootRecord{Inputs: s.Inputs}})
		copy(s.key[:], b[len(b)-len(s.key):])
		if ri.d != nil {
			ri.d.write(ri.d.name(ri.recordName(inputSetKind, hex.EncodeToString(s.key[:])), sufRecord), b)
			return
		}
		ri.mu.Lock()
		ri.sets[s.key] = s.Inputs
		ri.mu.Unlock()
	})
	return s.key
}

// inputSet returns the inputs of the set saved under k; false when it is
// missing or damaged.
func (ri *RootIndex) inputSet(k Key) ([]Input, bool) {
	ri.mu.Lock()
	in, known := ri.sets[k]
	ri.mu.Unlock()
	if known {
		return in, in != nil
	}
	if ri.d != nil {
		b, err := ri.d.read(ri.d.name(ri.recordName(inputSetKind, hex.EncodeToString(k[:])), sufRecord))
		var s storedRecord
		if err == nil && decodeState(b, &s) == nil && s.Settings == ri.settings && s.Name == inputSetKind && s.Root != nil &&
			Key(b[len(b)-len(k):]) == k {
			in = s.Root.Inputs
			if in == nil {
				in = []Input{}
			}
		}
	}
	ri.mu.Lock()
	ri.sets[k] = in
	ri.mu.Unlock()
	return in, in != nil
}

// Unchanged reports whether every input of rec, its sets' included, still
// leads where it led and has the digest it had, as c sees it. A set that
// cannot be read counts as changed.
func (ri *RootIndex) Unchanged(c *InputChecker, rec RootRecord) bool {
	if !c.Unchanged(rec.Inputs) {
		return false
	}
	for _, k := range rec.Sets {
		c.mu.Lock()
		same, ok := c.sets[k]
		c.mu.Unlock()
		if !ok {
			in, found := ri.inputSet(k)
			same = found && c.Unchanged(in)
			c.mu.Lock()
			c.sets[k] = same
			c.mu.Unlock()
		}
		if !same {
			return false
		}
	}
	return true
}

// AllInputs returns rec's inputs with those of its sets; false when a set
// cannot be read.
func (ri *RootIndex) AllInputs(rec RootRecord) ([]Input, bool) {
	if len(rec.Sets) == 0 {
		return rec.Inputs, true
	}
	all := append([]Input(nil), rec.Inputs...)
	for _, k := range rec.Sets {
		in, ok := ri.inputSet(k)
		if !ok {
			return nil, false
		}
		all = append(all, in...)
	}
	return all, true
}

// Discovery returns the discovery record stored under key.
func (ri *RootIndex) Discovery(key string) (DiscoveryRecord, bool) {
	ri.mu.Lock()
	r, known := ri.discovery[key]
	ri.mu.Unlock()
	if !known {
		if s := ri.read("discovery", key); s != nil && s.Discovery != nil {
			r = s.Discovery
		}
		ri.mu.Lock()
		ri.discovery[key] = r
		ri.mu.Unlock()
	}
	if r == nil {
		return DiscoveryRecord{}, false
	}
	return *r, true
}

// SetDiscovery stores a discovery record under key. A persistent index
// writes it at once and keeps no copy in memory (a tree of 4,000 roots
// has a record of 11,000 inputs), as SetRoot does.
func (ri *RootIndex) SetDiscovery(key string, r DiscoveryRecord) {
	if ri.d != nil {
		ri.mu.Lock()
		delete(ri.discovery, key)
		ri.mu.Unlock()
		ri.saveRecord("discovery", key, &storedRecord{Settings: ri.settings, Name: key, Discovery: &r})
		return
	}
	ri.mu.Lock()
	defer ri.mu.Unlock()
	ri.discovery[key] = &r
}

// Save writes what the index has not written yet: nothing, as SetRoot,
// SaveInputSet and SetDiscovery write their records at once; it is kept
// for callers. Write failures are reported by the store the index came
// from, once; the error is always nil.
func (ri *RootIndex) Save() error {
	return nil
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
	sets map[Key]bool // input sets, by key (RootIndex.Unchanged)
}

type realPath struct {
	real string
	err  error
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
	if real, err := c.resolve(in.Path); err == nil && real == in.Real {
		c.files.learn(in.Real, in.stat, in.Digest)
		d, ok := c.files.Digest(in.Real)
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
		if fi, r.err = c.lstat(full); r.err == nil {
			r.real = full
			if fi.Mode()&os.ModeSymlink != 0 {
				r.real, r.err = c.evalSymlinks(full)
			}
		}
	}
	c.mu.Lock()
	c.real[path] = r
	c.mu.Unlock()
	return r.real, r.err
}
