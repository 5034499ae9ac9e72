// Package rootindex is build-all's records of roots, kept in kpipe's cache
// (cache.Store's records): for each root, every input its last successful
// build read and the output it produced, so that a later run with the same
// settings can tell from file stats alone (through a cache.InputChecker)
// that a root is up to date, without loading its kustomizations; and what
// root discovery found, so that an unchanged tree need not be parsed to
// know its roots. `kpipe build` keeps its one root's record here too, and
// `kpipe diff` the records of the roots it rendered.
//
// It imports cache only.
package rootindex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"

	"github.com/kpipe/kpipe/cache"
)

// Index is the records of one set of build settings.
//
// An index belongs to one set of build settings (kpipe's binary, the flags
// that change output). Each record is a file of its own in the cache
// directory (v2/<x>/<hex>-r, named by the settings and the root), read
// when its root is asked for and written when it changed, so a run costs
// what it builds, whatever else the cache holds. Records are
// self-checking: a record is only trusted when every input it lists still
// has the digest it lists, so a stale or lost update costs a rebuild,
// never a wrong output.
type Index struct {
	s        *cache.Store // nil: in memory only
	settings cache.Key

	mu        sync.Mutex
	roots     map[string]*Record          // nil value: known to have no record
	sets      map[cache.Key][]cache.Input // input sets read or saved (nil value: none)
	discovery map[string]*DiscoveryRecord
}

// Record is one root's last successful build.
type Record struct {
	// Inputs are the inputs the root's build read, and Sets name more:
	// input sets (SaveInputSet) the root shares with other roots, the own
	// inputs of a base each. Unchanged checks both.
	Inputs []cache.Input
	Sets   []cache.Key
	// Output is the file the output was written to ("" when none) and
	// OutputDigest the output's digest.
	Output       string
	OutputDigest cache.Key
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
// Index only: its key, computed once, covers that index's settings.
type InputSet struct {
	Inputs []cache.Input

	once sync.Once
	key  cache.Key
}

// DiscoveryRecord is what root discovery found in one set of trees: the
// directories it walked, the kustomization files there and the roots they
// made.
type DiscoveryRecord struct {
	Files, Dirs []cache.Input
	Roots       []string
}

// storedRecord is a record file's content: what it is about (checked on
// reading) and one of the records.
type storedRecord struct {
	Settings  cache.Key
	Name      string
	Root      *Record
	Discovery *DiscoveryRecord
}

// Open returns the index of settings kept in s (in memory only for a nil
// store); its write failures are reported through s, once. Nothing is read
// until a record is asked for.
func Open(s *cache.Store, settings cache.Key) *Index {
	return &Index{s: s, settings: settings, roots: map[string]*Record{}, sets: map[cache.Key][]cache.Input{}, discovery: map[string]*DiscoveryRecord{}}
}

// Persistent reports whether the index is saved (it has a cache
// directory); records of an index that is not are never read again.
func (ri *Index) Persistent() bool { return ri.s != nil }

func (ri *Index) recordName(kind, name string) string {
	h := cache.NewKey("root-record", kind).Key(ri.settings).String(name).Sum()
	return hex.EncodeToString(h[:])
}

// read loads the record of kind about name; nil when there is none or it
// is unusable.
func (ri *Index) read(kind, name string) *storedRecord {
	if ri.s == nil {
		return nil
	}
	b, ok := ri.s.Record(ri.recordName(kind, name))
	if !ok {
		return nil
	}
	var s storedRecord
	if decodeState(b, &s) != nil || s.Settings != ri.settings || s.Name != name {
		return nil
	}
	return &s
}

// Root returns the record of root.
func (ri *Index) Root(root string) (Record, bool) {
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
		return Record{}, false
	}
	return *r, true
}

// maybeSaved says whether root may have a record: in a cache this process
// made (disk.fresh), only if this process wrote one.
func (ri *Index) maybeSaved(root string) bool {
	return ri.s == nil || ri.s.MayHaveRecord(string(ri.settings[:])+root)
}

// SetRoot records root's build; a nil record forgets the root. A
// persistent index writes the record at once and keeps no copy in memory.
func (ri *Index) SetRoot(root string, r *Record) {
	if ri.s != nil {
		ri.mu.Lock()
		delete(ri.roots, root)
		ri.mu.Unlock()
		ri.s.NoteRecord(string(ri.settings[:]) + root)
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
func (ri *Index) saveRecord(kind, name string, s *storedRecord) {
	name = ri.recordName(kind, name)
	if s.Root == nil && s.Discovery == nil {
		ri.s.RemoveRecord(name)
		return
	}
	ri.s.WriteRecord(name, encodeState(s))
}

// inputSetKind is the kind of an input set's record: its name is the
// hex of the record's own digest (see SaveInputSet).
const inputSetKind = "input-set"

// SaveInputSet stores s, once however many roots name it, and returns its
// key: the digest that ends the set's record (encodeState), so a record
// read back under the key is the one saved.
func (ri *Index) SaveInputSet(s *InputSet) cache.Key {
	s.once.Do(func() {
		b := encodeState(&storedRecord{Settings: ri.settings, Name: inputSetKind, Root: &Record{Inputs: s.Inputs}})
		copy(s.key[:], b[len(b)-len(s.key):])
		if ri.s != nil {
			ri.s.WriteRecord(ri.recordName(inputSetKind, hex.EncodeToString(s.key[:])), b)
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
func (ri *Index) inputSet(k cache.Key) ([]cache.Input, bool) {
	ri.mu.Lock()
	in, known := ri.sets[k]
	ri.mu.Unlock()
	if known {
		return in, in != nil
	}
	if ri.s != nil {
		b, ok := ri.s.Record(ri.recordName(inputSetKind, hex.EncodeToString(k[:])))
		var s storedRecord
		if ok && decodeState(b, &s) == nil && s.Settings == ri.settings && s.Name == inputSetKind && s.Root != nil &&
			cache.Key(b[len(b)-len(k):]) == k {
			in = s.Root.Inputs
			if in == nil {
				in = []cache.Input{}
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
func (ri *Index) Unchanged(c *cache.InputChecker, rec Record) bool {
	if !c.Unchanged(rec.Inputs) {
		return false
	}
	for _, k := range rec.Sets {
		if !c.UnchangedSet(k, func() ([]cache.Input, bool) { return ri.inputSet(k) }) {
			return false
		}
	}
	return true
}

// AllInputs returns rec's inputs with those of its sets; false when a set
// cannot be read.
func (ri *Index) AllInputs(rec Record) ([]cache.Input, bool) {
	if len(rec.Sets) == 0 {
		return rec.Inputs, true
	}
	all := append([]cache.Input(nil), rec.Inputs...)
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
func (ri *Index) Discovery(key string) (DiscoveryRecord, bool) {
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
func (ri *Index) SetDiscovery(key string, r DiscoveryRecord) {
	if ri.s != nil {
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

// A record is the cache's binary encoding (cache.Encoder) followed by its
// SHA-256: a record that does not match its digest, or does not decode,
// is ignored, as if missing.

// recordFormat is the first byte of a record's encoding. (4: inputs
// carry their stat, see cache.Input; 5: a root record names input sets;
// 6: a stat may be a content's name, see cache.ContentID.)
const recordFormat = 6

// errBadRecord says a record failed verification.
var errBadRecord = errors.New("cache record does not match its digest")

// encodeState encodes a record.
func encodeState(s *storedRecord) []byte {
	w := cache.NewEncoder(recordFormat)
	// Most of a record is its inputs: size the buffer for them (and the
	// trailing digest) once, as they are written (paths after the prefix
	// they share). Sized by their whole paths, it was twice what a record
	// of a synthetic tree's root took, fresh memory that the pending pack
	// then held on to.
	var sets int
	var inputs, files, dirs []cache.Input
	if s.Root != nil {
		sets, inputs = len(s.Root.Sets), s.Root.Inputs
	}
	if s.Discovery != nil {
		files, dirs = s.Discovery.Files, s.Discovery.Dirs
	}
	w.Reserve(2*sha256.Size+len(s.Name)+64+sets*sha256.Size, inputs, files, dirs)
	w.Key(s.Settings)
	w.String(s.Name)
	if w.Bool(s.Root != nil) {
		w.Inputs(s.Root.Inputs)
		w.Uint(len(s.Root.Sets))
		for _, k := range s.Root.Sets {
			w.Key(k)
		}
		w.String(s.Root.Output)
		w.Key(s.Root.OutputDigest)
		w.Strings(s.Root.Warnings)
	}
	if w.Bool(s.Discovery != nil) {
		w.Inputs(s.Discovery.Files)
		w.Inputs(s.Discovery.Dirs)
		w.Strings(s.Discovery.Roots)
	}
	sum := sha256.Sum256(w.Bytes())
	return append(w.Bytes(), sum[:]...)
}

// decodeState decodes a record.
func decodeState(data []byte, s *storedRecord) error {
	if len(data) < sha256.Size+1 {
		return errBadRecord
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return errBadRecord
	}
	r := cache.NewDecoder(body, recordFormat)
	s.Settings = r.Key()
	s.Name = r.String()
	if r.Bool() {
		s.Root = &Record{Inputs: r.Inputs(), Sets: r.Keys()}
		s.Root.Output, s.Root.OutputDigest, s.Root.Warnings = r.String(), r.Key(), r.Strings()
	}
	if r.Bool() {
		s.Discovery = &DiscoveryRecord{Files: r.Inputs(), Dirs: r.Inputs(), Roots: r.Strings()}
	}
	if !r.Done() {
		return errBadRecord
	}
	return nil
}
