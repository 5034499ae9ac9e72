package engine

import (
	"bytes"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/stages"
)

// The memo is where the build meets the cache: this file holds its state
// (what it learnt of each node, what it records), memokey.go derives the
// keys, memoformat.go holds the stored formats, resolve.go takes nodes
// from it or builds them, runstage.go runs stages. Results are memoized at
// three levels, each under a key that covers everything that can change
// it (BuildKit's solver works the same way: a vertex's key is its own
// definition plus its inputs' keys):
//
//   - a node (one kustomization's accumulation): kpipe's version, the
//     options that change output, the kustomization file (its name and
//     content digest) and the context it is built in, the digest of
//     every resource file, the keys of its bases and components, and the
//     digest of every other file its stages read (patches, configurations,
//     generator files). Which other files a node reads is only known after
//     building it once, so it is recorded in a manifest stored under the
//     node's pre-key (everything but those files); on the next run the
//     manifest's files are hashed (cheaply, through the file index) to
//     complete the key. Nodes in several directories often share a
//     pre-key (overlays release-1 and release-2, each `resources:
//     [../base]` and `patches: [{path: patch.yaml}]`): the manifest names
//     only the files, which are the same names for all of them, and each
//     node's own content is in its full key. A manifest keeps a few read
//     sets (maxReadSets; another only when a file's content names other
//     files), and a key completed from one is taken only when an entry
//     under it proves that a build read exactly those files (candidates).
//     A node whose key is unchanged is not re-entered, and its value is
//     not even read unless a parent needs it. A node whose build ran only
//     cheap stages (stages.Cheap) is lazy: its accumulation is not stored,
//     only a mark under its key (lazyMark), because building it again from
//     its bases' entries costs about what reading its own would, and
//     writing it would copy every base under it once more (resolve).
//     A component, applied inside its parents, leaves the same mark.
//   - a stage: its kind, its fingerprint and the digest of its input
//     resources.
//   - a root's final output: under the root node's full key (rootKey).
//     It stands for the root's accumulation, which is not stored when no
//     node of the run includes the root.
//
// Every entry is named by what made it, so it never changes once written
// (but for a manifest gaining a read set): whichever node, path or
// runner wrote it last, a lookup of the same content finds it, and an
// existence check is all a remote cache needs to be told.
//
// Every influence is in the key (as the Go toolchain's buildActionID
// says of its action IDs), and nothing else is: no absolute path, working
// directory or inode number (the stat index may use those to skip
// hashing, never a key). A node is identified by its kustomization's
// content and the context it is built in (inherited namespace,
// buildMetadata origin, openapi schema), its entries by the paths the
// kustomization writes, and the files it reads by their path relative to
// the node's directory; a base's key enters its parents' keys. So a tree
// copied elsewhere (a CI checkout, Argo CD's or Flux's temporary
// directory) and built from any directory hits the cache, and since output
// embeds only relative paths its bytes equal a cold build's there
// (TestRelocatedTreeHitsCache). A node with helmCharts has the helm
// binary's base name, digest and environment in its pre-key, resolved
// before the node memo is consulted, so replacing helm invalidates it.
// Plugin stages' keys cover every file under the plugin's kustomization
// directory (package plugins, Fingerprint).
//
// Errors are never cached: a node or stage that fails stores nothing.

// Cache configures a build's use of the cache.
type Cache struct {
	// Store is the open cache; nil builds without one.
	Store *cache.Store
	// Files finds file digests cheaply; nil hashes every file. It is the
	// index of the graph's tree (LoadOptions.FS), or of the disk, which
	// the build then takes as the start of one for the tree
	// (cache.FileIndex.On).
	Files *cache.FileIndex
	// Version is kpipe's version, part of every key.
	Version string
}

// StageStats are the counts of one stage kind in a run.
type StageStats struct {
	Ran    int           `json:"ran"`
	Cached int           `json:"cached"`
	Time   time.Duration `json:"time"`
}

// NodeStats count how graph nodes were resolved in a run.
type NodeStats struct {
	// Built nodes ran their stages; Cached nodes came from the cache.
	Built, Cached int
}

// memo is the cache state of one Builder.
type memo struct {
	Cache // Files: the index of the graph's tree
	// disk is the index of the disk (remote checkouts, the helm binary):
	// Files when the tree is the disk.
	disk    *cache.FileIndex
	optsKey cache.Key // the digest of settings, which every key of the run takes
	// settingsRec names the settings and their values, for --explain.
	settingsRec map[string]string

	mu    sync.Mutex
	reads map[*Node]map[string]readRecord
	keys  map[*Node]cache.Key // full keys known so far
	pres  map[*Node]cache.Key // pre-keys computed so far (fixed for a run)
	// used are the files each node's stages read, as its full key covers
	// them (from this run's reads, or the stored manifest).
	used map[*Node][]readRecord
	// seen are the read sets of each node's manifest as its lookup found
	// them (candidates), for remember to keep; manifestMu makes a
	// manifest's reading, merging and writing one step (record).
	seen       map[*Node][]readSet
	manifestMu sync.Mutex
	// components make each component's remembering one step
	// (rememberComponent).
	components map[*Node]*componentOnce
	// dirs are the digests of the nodes' directories (their listings) when
	// the build started.
	dirs map[string]cache.Key
	// kinputs remembers what Inputs found, for the roots that share
	// nodes.
	kinputs map[string]cache.Input
	inputs  map[*Node]*ownInputs // nil: the node cannot be recorded
	// volatile nodes run external plugins: what those read (executables,
	// the environment, any file) is not in a node's key, so such a node,
	// and every node that includes it, is built each run; its stages,
	// plugin stages included, are still memoized.
	volatile map[*Node]bool
	// loadStart is when the graph's load began (no later than the stat
	// of any file it read).
	loadStart time.Time
	// helm resolves the helm binary (path, digest, environment) once per
	// build; a node with helmCharts has them in its pre-key, so replacing
	// helm invalidates the node memo, not only the chart stage.
	helm func() (stages.HelmSettings, error)
}

// readRecord is one file a node's stages read.
type readRecord struct {
	Path   string    // as the kustomization names it
	Real   string    // absolute, symlinks resolved
	Digest cache.Key // of the content read (a tree: of its listing)
	Tree   bool      // a directory read whole (a helm chart)
}

func newMemo(c Cache, g *Graph, o Options) *memo {
	// dirs gets an entry per node's directory now, so it is made that
	// size. The maps of nodes are not: a build-all forgets each node once
	// the roots that reach it are written (Builder.forget), so that they
	// hold the nodes being built, not every node of the run.
	m := &memo{Cache: c, optsKey: settings(cache.NewKey("", "options"), o, g.restriction).Sum(),
		reads: map[*Node]map[string]readRecord{}, keys: map[*Node]cache.Key{},
		pres: map[*Node]cache.Key{}, used: map[*Node][]readRecord{}, seen: map[*Node][]readSet{}, components: map[*Node]*componentOnce{}, dirs: make(map[string]cache.Key, len(g.Nodes)),
		volatile: map[*Node]bool{}, kinputs: map[string]cache.Input{}, inputs: map[*Node]*ownInputs{},
		loadStart: g.loadStart}
	if o.Explain {
		m.settingsRec = settingsRecord(o, g.restriction)
	}
	if m.Files == nil {
		m.Files, _ = cache.LoadFileIndex("")
	}
	var src cache.Source
	if fsys := g.FS(); fsys != loaders.Disk {
		src = fsys
	}
	if m.Files.Source() == nil {
		m.disk = m.Files
	} else {
		m.disk = m.Files.On(nil)
	}
	if m.Files.Source() != src {
		m.Files = m.Files.On(src)
	}
	// Each node's directory is digested before anything is built (a root's
	// record must not pair a listing taken after the build with its
	// output), on every worker: a cold run lists every directory.
	// (A build-all's discovery walk listed most of them already: Known.)
	var dirs []string
	var dirNodes []*Node
	for _, n := range g.Nodes {
		if _, ok := m.dirs[n.Dir]; !ok {
			if d, ok := m.filesOf(n).Known(n.Dir, g.loadStart); ok {
				m.dirs[n.Dir] = d
				continue
			}
			m.dirs[n.Dir] = cache.Key{}
			dirs = append(dirs, n.Dir)
			dirNodes = append(dirNodes, n)
		}
	}
	digests := make([]cache.Key, len(dirs))
	found := make([]bool, len(dirs))
	forEach(len(dirs), o.Jobs, func(i int) { digests[i], found[i] = m.filesOf(dirNodes[i]).Digest(dirs[i]) })
	for i, dir := range dirs {
		if found[i] {
			m.dirs[dir] = digests[i]
		} else {
			delete(m.dirs, dir)
		}
	}
	for _, n := range g.Nodes {
		n := n
		ix := m.filesOf(n)
		n.Loader.OnRead(func(path, real string, data []byte, fi os.FileInfo) {
			d := ix.Record(real, data, fi)
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.reads[n] == nil {
				m.reads[n] = map[string]readRecord{}
			}
			m.reads[n][path] = readRecord{Path: path, Real: real, Digest: d}
		})
		n.Loader.OnReadTree(func(path, real string, listing []byte) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.reads[n] == nil {
				m.reads[n] = map[string]readRecord{}
			}
			// A tree's own record is keyed apart from a file of the same path.
			m.reads[n][path+"/"] = readRecord{Path: path, Real: real, Digest: cache.Digest(listing), Tree: true}
		})
	}
	return m
}

// filesOf is the file index of the tree n lies in: the disk for a node
// of a remote base's checkout.
func (m *memo) filesOf(n *Node) *cache.FileIndex {
	if n.Repo != nil {
		return m.disk
	}
	return m.Files
}

// forget drops what the memo learned of n, which no root left to build
// reaches (Builder.forget). (The input of its kustomization file goes too:
// another node of the same directory that asks for it again gets the same
// one, computed again.) Directories' digests stay, by directory.
func (m *memo) forget(n *Node) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n.File != nil {
		delete(m.kinputs, n.File.Path)
	}
	delete(m.reads, n)
	delete(m.keys, n)
	delete(m.pres, n)
	delete(m.used, n)
	delete(m.seen, n)
	delete(m.components, n)
	delete(m.inputs, n)
	delete(m.volatile, n)
}

// knownKey returns the full key of a node resolved earlier in this run.
func (m *memo) knownKey(n *Node) (cache.Key, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[n]
	return k, ok
}

func (m *memo) setKey(n *Node, k cache.Key) {
	m.mu.Lock()
	m.keys[n] = k
	m.mu.Unlock()
}

// readSet is one set of files a build of a node read: each file's path
// as the kustomization names it and whether it is a tree (Real and Digest
// are unset). lazy says the build that recorded it ran only cheap stages
// (--explain tells such a node apart; see resolve).
type readSet struct {
	recs []readRecord
	lazy bool
}

// same reports whether two read sets name the same files.
func (s readSet) same(o readSet) bool {
	return slices.EqualFunc(s.recs, o.recs, func(a, b readRecord) bool { return a.Path == b.Path && a.Tree == b.Tree })
}

// maxReadSets bounds the read sets a manifest keeps. Nodes that share a
// pre-key (the same kustomization, resources and bases in several
// directories) read files of the same names, whatever those files hold:
// one read set serves them all. Only a file whose content names other
// files (a transformer config's patch path) gives another.
const maxReadSets = 8

// candidate is a full key a node may have: its pre-key completed with
// one of the read sets its manifest records, the files digested as they
// are now.
type candidate struct {
	key  cache.Key
	recs []readRecord // with real paths and current digests
	lazy bool
}

// Why a node's lookup found nothing (--explain).
const (
	missNoManifest = "not in the cache: never built with this kustomization, resources, bases and settings"
	missNoEntry    = "not in the cache: never built with the current content of the files it reads"
	missGone       = "not in the cache: a file its earlier builds read is gone"
)

// candidates returns the keys n may have, most recently recorded first:
// one for each read set of its manifest whose files are all there. None
// of them is n's key until an entry under it proves that a build read
// exactly those files with that content (resolve, componentKey): then,
// as for any trace, n built now would read the same files and give the
// same value. When there is none, why says why, for --explain ("" when
// n has no pre-key).
func (m *memo) candidates(n *Node) (cands []candidate, why string) {
	pre, ok := m.preKey(n)
	if !ok {
		return nil, ""
	}
	data, ok := m.Store.Get(m.manifestKey(pre))
	if !ok {
		return nil, missNoManifest
	}
	sets, ok := decodeManifest(data)
	if !ok {
		return nil, missNoManifest
	}
	m.mu.Lock()
	m.seen[n] = sets
	m.mu.Unlock()
	for _, s := range sets {
		recs := slices.Clone(s.recs)
		if k, ok := m.keyFromManifest(n, pre, recs); ok {
			cands = append(cands, candidate{key: k, recs: recs, lazy: s.lazy})
		}
	}
	if len(cands) == 0 {
		return nil, missGone
	}
	return cands, missNoEntry
}

// accept takes c as n's full key: an entry under it was found.
func (m *memo) accept(n *Node, c candidate) {
	m.mu.Lock()
	m.used[n] = c.recs
	m.keys[n] = c.key
	m.mu.Unlock()
}

// recorded returns the files read through n's loader this run, by path,
// and with drop forgets them: remember asks once, and keeps them as
// m.used (a 10,000-root build held both, for every node, to the end). A
// component's stay: other parents may be applying it (rememberComponent).
func (m *memo) recorded(n *Node, drop bool) []readRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := make([]readRecord, 0, len(m.reads[n]))
	for _, r := range m.reads[n] {
		recs = append(recs, r)
	}
	if drop {
		delete(m.reads, n)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Path < recs[j].Path })
	return recs
}

// setVolatile marks n as running external plugins.
func (m *memo) setVolatile(n *Node) {
	m.mu.Lock()
	m.volatile[n] = true
	m.mu.Unlock()
}

// remember records the files n's build (or, for a component, its
// applications) read in this run in n's manifest, with lazy (see
// readSet), and returns n's full key; false for a volatile node, which
// gets no key. The caller stores what proves the key (resolve); a
// component's mark is stored here.
func (m *memo) remember(n *Node, lazy bool) (cache.Key, bool) {
	m.mu.Lock()
	v := m.volatile[n]
	m.mu.Unlock()
	if v {
		return cache.Key{}, false
	}
	for _, e := range n.Components {
		if e.Child != nil {
			if _, ok := m.rememberComponent(e.Child); !ok {
				return cache.Key{}, false
			}
		}
	}
	pre, ok := m.preKey(n)
	if !ok {
		return cache.Key{}, false
	}
	recs := m.recorded(n, !n.IsComponent())
	m.record(n, pre, readSet{recs: recs, lazy: lazy})
	m.mu.Lock()
	m.used[n] = recs
	m.mu.Unlock()
	k := m.completeKey(n.Dir, pre, recs)
	m.setKey(n, k)
	return k, true
}

// rememberComponent is component c's full key, remembered (and marked)
// by the first parent applied in this run that asks. Every application
// of c reads the same files, and each has read them all once it is
// done, so the first parent's are c's; the others may still be reading
// them: c's reads are left in place for them (recorded), and c is
// remembered once. (Remembered twice, the second took an empty read set,
// and parents keyed by it missed every change of c's patches.)
func (m *memo) rememberComponent(c *Node) (cache.Key, bool) {
	if k, ok := m.knownKey(c); ok {
		return k, true
	}
	m.mu.Lock()
	once := m.components[c]
	if once == nil {
		once = &componentOnce{}
		m.components[c] = once
	}
	m.mu.Unlock()
	once.Do(func() {
		if once.key, once.ok = m.knownKey(c); once.ok {
			return
		}
		if once.key, once.ok = m.remember(c, false); once.ok {
			m.Store.Put(once.key, lazyMark)
		}
	})
	return once.key, once.ok
}

// componentOnce is a component's remembering (rememberComponent).
type componentOnce struct {
	sync.Once
	key cache.Key
	ok  bool
}

// record adds read set s to the manifest under pre: first, with the sets
// it held (as this run's lookup of n found it, and as the directory holds
// it now: another node with that pre-key may have written it since), at
// most maxReadSets. An unchanged manifest is not written again.
func (m *memo) record(n *Node, pre cache.Key, s readSet) {
	s.recs = slices.Clone(s.recs)
	for i := range s.recs {
		s.recs[i] = readRecord{Path: s.recs[i].Path, Tree: s.recs[i].Tree}
	}
	m.manifestMu.Lock()
	defer m.manifestMu.Unlock()
	key := m.manifestKey(pre)
	stored, _ := m.Store.GetLocal(key)
	now, _ := decodeManifest(stored)
	m.mu.Lock()
	seen := m.seen[n]
	delete(m.seen, n)
	m.mu.Unlock()
	sets := []readSet{s}
	for _, o := range append(now, seen...) {
		if len(sets) == maxReadSets {
			break
		}
		if !slices.ContainsFunc(sets, o.same) {
			sets = append(sets, o)
		}
	}
	data := encodeManifest(sets)
	if !bytes.Equal(data, stored) {
		m.Store.Put(key, data)
	}
}
