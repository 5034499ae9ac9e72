package engine

import (
	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/giturl"
	"github.com/kpipe/kpipe/internal/rootindex"
)

// Inputs lists everything root's build in this run read, with the digests
// the build used: the kustomization file and directory of every node it
// reached, its resource files, the directories its entries named, and the
// files its stages read (patches, generator sources, configurations...).
// A root whose inputs are all unchanged has an unchanged output (for the
// same SettingsKey), which lets build-all skip it without loading it.
//
// It returns false when the output may depend on something else: a remote
// base or an http(s) file, a
// `generators`, `transformers`, `validators` or `helmCharts` entry (a
// plugin may read anything, and its environment), or a node whose key the
// cache could not establish. It needs a Builder with a cache.
func (b *Builder) Inputs(root *Node) ([]cache.Input, bool) {
	own, sets, ok := b.InputSets(root)
	if !ok {
		return nil, false
	}
	n := len(own)
	for _, s := range sets {
		n += len(s.Inputs)
	}
	inputs := make([]cache.Input, 0, n)
	inputs = append(inputs, own...)
	for _, s := range sets {
		inputs = append(inputs, s.Inputs...)
	}
	return inputs, true
}

// InputSets is Inputs with the inputs of every other node root reaches
// (its bases and components) left in sets, one a node, each the same
// value for every root that reaches the node in this run: root's own
// inputs, and the sets. A caller that records many roots stores each set
// once (rootindex.Index.SaveInputSet) rather than in every root's record.
func (b *Builder) InputSets(root *Node) ([]cache.Input, []*rootindex.InputSet, bool) {
	m := b.memo
	if m == nil {
		return nil, nil, false
	}
	rootOwn := m.findNodeInputs(root) // (a root's own are asked for once a run: not kept)
	if rootOwn == nil {
		return nil, nil, false
	}
	var sets []*rootindex.InputSet
	seen := map[*Node]bool{root: true}
	var walk func(own *ownInputs) bool
	walk = func(own *ownInputs) bool {
		for _, n := range own.children {
			if n == nil || seen[n] {
				continue
			}
			seen[n] = true
			o := m.nodeInputs(n)
			if o == nil {
				return false
			}
			sets = append(sets, &o.set)
			if !walk(o) {
				return false
			}
		}
		return true
	}
	if !walk(rootOwn) {
		return nil, nil, false
	}
	return rootOwn.set.Inputs, sets, true
}

// ownInputs are the inputs of one node: an input with a child is the
// child's directory, whose own inputs are the child's set. They are kept
// as the set InputSets hands out, so that a set is the node's own list.
type ownInputs struct {
	set      rootindex.InputSet
	children []*Node // children[i]: the node set.Inputs[i] is the directory of, or nil
}

// nodeInputs returns n's own inputs, found once per run for the roots
// that share n (a base, a component); nil when n's output may depend on
// something no input covers (see Inputs). It is asked for only after n
// was resolved, when its key and the files it read are known.
func (m *memo) nodeInputs(n *Node) *ownInputs {
	m.mu.Lock()
	own, done := m.inputs[n]
	m.mu.Unlock()
	if done {
		return own
	}
	own = m.findNodeInputs(n)
	m.mu.Lock()
	m.inputs[n] = own
	m.mu.Unlock()
	return own
}

func (m *memo) findNodeInputs(n *Node) *ownInputs {
	if n.Repo != nil || giturl.IsHTTPURL(n.K.OpenAPI["path"]) {
		return nil // in a remote base, or a schema by URL: see Entry.Remote below
	}
	k := n.K
	if len(k.Generators)+len(k.Transformers)+len(k.Validators)+len(k.HelmCharts) > 0 {
		return nil
	}
	dir, ok := m.dirs[n.Dir]
	if !ok {
		return nil
	}
	kin, ok := m.fileInput(n)
	if !ok {
		return nil
	}
	m.mu.Lock()
	used, ok := m.used[n]
	m.mu.Unlock()
	if !ok {
		return nil
	}
	size := 2 + len(used) + len(n.Resources) + len(n.Components)
	own := &ownInputs{set: rootindex.InputSet{Inputs: make([]cache.Input, 0, size)}, children: make([]*Node, 0, size)}
	// Each input with its stat, so that the next run checks it by a stat.
	add := func(in cache.Input, child *Node) {
		own.set.Inputs = append(own.set.Inputs, m.filesOf(n).Stamp(in))
		own.children = append(own.children, child)
	}
	add(cache.Input{Path: n.Dir, Real: n.Dir, Digest: dir}, nil)
	add(kin, nil)
	for _, r := range used {
		if r.Tree {
			return nil // a whole tree (a chart): not one digest the file index can check
		}
		add(cache.Input{Path: n.Loader.Abs(r.Path), Real: r.Real, Digest: r.Digest}, nil)
	}
	for _, list := range [][]*Entry{n.Resources, n.Components} {
		for _, e := range list {
			switch {
			case e.Err != nil:
				return nil
			case e.Remote || (e.Child != nil && e.Child.Repo != nil):
				// A URL: what it names now is known only by asking (or, for
				// a pinned commit, by the fetcher's cache), not by a stat.
				return nil
			case e.Child != nil:
				d, ok := m.dirs[e.Child.Dir]
				if !ok {
					return nil
				}
				add(cache.Input{Path: n.Loader.Abs(e.Path), Real: e.Child.Dir, Digest: d}, e.Child)
			default:
				in := cache.Input{Path: n.Loader.Abs(e.Path), Real: e.File, Digest: m.dataDigest(n, e)}
				if e.src != nil {
					in = cache.StampRead(in, e.src.info, len(e.Data), m.loadStart)
				}
				add(in, nil)
			}
		}
	}
	return own
}

// fileInput is the input of n's kustomization file, found once per run.
// The file index learns its digest with the stat taken when it was read,
// so that checking it again after the build costs a stat, not a read.
func (m *memo) fileInput(n *Node) (cache.Input, bool) {
	f := n.File
	m.mu.Lock()
	in, ok := m.kinputs[f.Path]
	m.mu.Unlock()
	if ok {
		return in, in.Real != ""
	}
	if f.Real != "" {
		in = cache.Input{Path: f.Path, Real: f.Real, Digest: f.Sum}
		m.filesOf(n).Remember(f.Real, f.Info, int(f.Size), in.Digest, m.loadStart)
	}
	m.mu.Lock()
	m.kinputs[f.Path] = in
	m.mu.Unlock()
	return in, in.Real != ""
}

// dataDigest is the digest of a resource file entry's content, computed
// once for the entries that share a read (and kept with the read: a map of
// them was live memory the collector marked for the whole run). The file
// index learns the digest of a file large enough to keep a record for
// the next run, which then costs a stat instead of a read; a smaller
// file's input carries its stat instead (findNodeInputs).
func (m *memo) dataDigest(n *Node, e *Entry) cache.Key {
	if e.src == nil {
		return cache.Digest(e.Data)
	}
	src := e.src
	src.digestOnce.Do(func() { src.digest = cache.Digest(e.Data) })
	if ix := m.filesOf(n); ix.KeepsRecord(int64(len(e.Data))) {
		ix.Remember(e.File, src.info, len(e.Data), src.digest, m.loadStart)
	}
	return src.digest
}
