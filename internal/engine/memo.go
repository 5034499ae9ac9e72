package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/rescodec"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// This file is where the build meets the cache. Results are memoized at
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

// settingValues lists the options that change a build's output, by their
// flags, each value spelled as Go quotes a string (a list in brackets, a
// bool as true or false): a run's keys take them in this order (settings),
// and --explain names those that changed (settingsRecord). (They were
// JSON; encoding/json's first call, which builds its encoder for the type,
// was about 1% of a warm `kpipe build`.) TestSettingsCoverTheOptions fails
// when a field of HelmOptions is left out.
func settingValues(o Options, r loaders.Restriction) [][2]string {
	o = o.withDefaults()
	versions := make([]string, len(o.Helm.APIVersions))
	for i, v := range o.Helm.APIVersions {
		versions[i] = strconv.Quote(v)
	}
	return [][2]string{
		{"--reorder", strconv.Quote(o.Reorder)},
		{"--enable-managedby-label", strconv.FormatBool(o.ManagedByLabel)},
		{"--enable-alpha-plugins", strconv.FormatBool(o.EnableAlphaPlugins)},
		{"--enable-exec", strconv.FormatBool(o.EnableExec)},
		{"--enable-helm", strconv.FormatBool(o.EnableHelm)},
		{"--load-restrictor", strconv.Quote(r.String())},
		{"--helm-command", strconv.Quote(o.Helm.Command)},
		{"--helm-api-versions", "[" + strings.Join(versions, ",") + "]"},
		{"--helm-kube-version", strconv.Quote(o.Helm.KubeVersion)},
		{"--helm-debug", strconv.FormatBool(o.Helm.Debug)},
	}
}

// settings adds settingValues to b.
func settings(b *cache.KeyBuilder, o Options, r loaders.Restriction) *cache.KeyBuilder {
	for _, s := range settingValues(o, r) {
		b.String(s[0]).String(s[1])
	}
	return b
}

// SettingsKey is the digest of everything besides its inputs that a
// build's output depends on: kpipe's version (o.Cache.Version) and the
// options that change output. It names a cache.RootIndex.
func SettingsKey(o Options, r loaders.Restriction) cache.Key {
	return settings(cache.NewKey(o.Cache.Version, "settings"), o, r).Sum()
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

func (m *memo) key(kind string) *cache.KeyBuilder {
	return cache.NewKey(m.Version, kind).Key(m.optsKey)
}

// preKey is a node's key without the files its stages read; false when it
// cannot be known (an entry failed to load, or a base's key is unknown).
// Once known it cannot change within a run, so it is computed once.
func (m *memo) preKey(n *Node) (cache.Key, bool) {
	m.mu.Lock()
	k, ok := m.pres[n]
	m.mu.Unlock()
	if ok {
		return k, true
	}
	k, ok = m.computePreKey(n)
	if ok {
		m.mu.Lock()
		m.pres[n] = k
		m.mu.Unlock()
	}
	return k, ok
}

func (m *memo) computePreKey(n *Node) (cache.Key, bool) {
	if n.openapiErr != nil {
		return cache.Key{}, false
	}
	kb := m.key("node")
	kd, ok := m.kustomizationDigest(n)
	if !ok {
		return cache.Key{}, false
	}
	// Relocatable: no absolute path enters a key. The node is identified by
	// its kustomization's content; entries by the paths it writes (relative
	// to it) and files by their path relative to the node's directory.
	// n.Key is the directory plus the context the node is built in
	// (inherited namespace, buildMetadata origin, openapi): keep the
	// context, drop the directory.
	kb.String(strings.TrimPrefix(n.Key, n.Dir)).Key(kd).String(n.schemaID())
	if n.Repo != nil {
		// A node of a remote base: its repository and the commit its ref
		// resolved to (its files are also keyed by content, like any).
		kb.String("git").String(n.Repo.Spec.CloneURL()).String(n.Repo.Checkout.Commit)
	}
	if pullsRangeChart(n) {
		return cache.Key{}, false // a chart pulled again every run: never cached
	}
	if len(n.K.HelmCharts) > 0 && m.helm != nil {
		h, err := m.helm()
		if err != nil {
			return cache.Key{}, false
		}
		kb.String("helm").String(filepath.Base(h.Path)).String(h.Digest).String(strings.Join(h.EnvFingerprint, "\x00"))
	}
	for _, e := range n.Resources {
		switch {
		case e.Err != nil:
			return cache.Key{}, false
		case e.Child != nil:
			ck, ok := m.knownKey(e.Child)
			if !ok {
				return cache.Key{}, false
			}
			kb.String(e.Path).Key(ck)
		default:
			kb.String(e.Path).String(relTo(n.Dir, e.File)).Key(m.dataDigest(n, e))
		}
	}
	for _, e := range n.Components {
		if e.Err != nil {
			return cache.Key{}, false
		}
		ck, ok := m.componentKey(e.Child)
		if !ok {
			return cache.Key{}, false
		}
		kb.String(e.Path).Key(ck)
	}
	for _, e := range n.PluginDirs {
		if e.Err != nil {
			return cache.Key{}, false
		}
		ck, ok := m.knownKey(e.Child)
		if !ok {
			return cache.Key{}, false
		}
		kb.String("plugins:" + e.Path).Key(ck)
	}
	return kb.Sum(), true
}

// kustomizationDigest is what a node's key takes from its kustomization:
// the file's name and the digest of its bytes. The parsed kustomization
// is a function of those (and of the node's context, which the key takes
// from n.Key, and of kpipe's version, which salts every key); the file's
// digest is computed once per run for the root records anyway, where
// encoding the parsed form cost a few percent of a cold run. A node whose
// file is not at hand is keyed by its parsed form, as JSON.
func (m *memo) kustomizationDigest(n *Node) (cache.Key, bool) {
	if n.File != nil {
		if in, ok := m.fileInput(n); ok {
			return cache.NewKey("kustomization", filepath.Base(n.File.Path)).Key(in.Digest).Sum(), true
		}
	}
	k, err := json.Marshal(n.K)
	if err != nil {
		return cache.Key{}, false
	}
	return cache.Digest(k), true
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

// componentKey is a component's full key. Components are applied inside
// their parents, so their key comes from their definition and the files
// their applications read only: the first of the keys their manifest
// gives that an application left its mark under (remember).
func (m *memo) componentKey(c *Node) (cache.Key, bool) {
	if k, ok := m.knownKey(c); ok {
		return k, true
	}
	cands, _ := m.candidates(c)
	for _, cd := range cands {
		if m.Store.Has(cd.key) {
			m.accept(c, cd)
			return cd.key, true
		}
	}
	return cache.Key{}, false
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

// keyFromManifest completes n's key from its pre-key and the files of one
// read set (recs, without real paths), digested as they are now, which
// it fills in; false when one of them cannot be resolved or read.
func (m *memo) keyFromManifest(n *Node, pre cache.Key, recs []readRecord) (cache.Key, bool) {
	for i, r := range recs {
		real, _, err := n.Loader.Resolve(r.Path)
		if err != nil {
			return cache.Key{}, false
		}
		var d cache.Key
		if r.Tree {
			listing, err := loaders.TreeListing(n.Loader.FS(), real)
			if err != nil {
				return cache.Key{}, false
			}
			d = cache.Digest(listing)
		} else {
			var ok bool
			if d, ok = m.filesOf(n).Digest(real); !ok {
				return cache.Key{}, false
			}
		}
		recs[i].Real, recs[i].Digest = real, d
	}
	return m.completeKey(n.Dir, pre, recs), true
}

// rootKey is the entry of a root's output, under the root node's full
// key.
func (m *memo) rootKey(k cache.Key) cache.Key {
	return m.key("root").Key(k).Sum()
}

// lazyMark is the entry a lazy node (see resolve) or a component leaves
// under its full key in place of an accumulation: the proof that a build
// read exactly the files that key covers, which lets a later run take the
// key (candidates). It is no accumulation (decodeAccumulation refuses
// it): load builds the node when a dependent asks for it, and stores its
// accumulation over it.
var lazyMark = []byte("lazy")

// encodeManifest and decodeManifest store a manifest, the read sets of a
// node's builds (cache.Encoder's encoding): the count, and for each set
// its lazy mark, the count of its files and for each file its path as
// the kustomization names it and whether it is a tree. A node whose key
// is checked reads one and resolves each path again (candidates), so
// neither real paths nor digests are stored: the digests are in the full
// key, and the entry under it is the proof that they were read. A
// manifest is the same bytes for every node with its pre-key, wherever
// its tree lies and whatever its files hold.
func encodeManifest(sets []readSet) []byte {
	w := cache.NewEncoder(manifestFormat)
	w.Uint(len(sets))
	for _, s := range sets {
		w.Bool(s.lazy)
		w.Uint(len(s.recs))
		for _, r := range s.recs {
			w.String(r.Path)
			w.Bool(r.Tree)
		}
	}
	return w.Bytes()
}

const manifestFormat = 4

// decodeManifest reads what encodeManifest wrote; false for anything
// else, and for more than maxReadSets sets.
func decodeManifest(data []byte) (sets []readSet, ok bool) {
	r := cache.NewDecoder(data, manifestFormat)
	n := r.Uint()
	if n > maxReadSets {
		return nil, false
	}
	sets = make([]readSet, 0, n)
	for i := 0; i < n; i++ {
		s := readSet{lazy: r.Bool()}
		c := r.Uint()
		s.recs = make([]readRecord, 0, c)
		for j := 0; j < c; j++ {
			s.recs = append(s.recs, readRecord{Path: r.String(), Tree: r.Bool()})
		}
		sets = append(sets, s)
	}
	return sets, r.Done()
}

func (m *memo) manifestKey(pre cache.Key) cache.Key {
	return m.key("manifest").Key(pre).Sum()
}

func (m *memo) completeKey(dir string, pre cache.Key, recs []readRecord) cache.Key {
	kb := m.key("node+files").Key(pre)
	for _, r := range recs {
		kb.String(r.Path).String(relTo(dir, r.Real)).Key(r.Digest)
		if r.Tree {
			kb.String("tree")
		}
	}
	return kb.Sum()
}

// relTo returns path relative to dir (slash-separated, with .. for files
// outside it), so that keys do not change when a tree moves: a key depends
// on the layout of the files a node reads around it, never on where the
// tree sits on disk.
func relTo(dir, path string) string {
	r, err := filepath.Rel(dir, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
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

// encodeAccumulation and decodeAccumulation store a node's result:
// accumulationFormat; 1 when Config is kustomize's default field specs,
// which most nodes have and which is large, so not stored, else 0; the
// length (uvarint) and encoding of the rest (encodeExtra: the Config when
// it is not the default, the Vars), empty when there is neither; then the
// resources in rescodec.AppendListUnsorted's encoding, which is most of
// the bytes. The encoding is written
// into a buffer reused across nodes (Builder.scratch) and copied out at
// its final size.
func (b *Builder) encodeAccumulation(acc *Accumulation) ([]byte, error) {
	var extra []byte
	if !acc.PlainConfig || len(acc.Vars.ByName) > 0 {
		var cfg *fieldspec.Config
		if !acc.PlainConfig {
			cfg = acc.Config
		}
		extra = encodeExtra(cfg, acc.Vars)
	}
	bp, _ := b.scratch.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	buf := append((*bp)[:0], accumulationFormat)
	if acc.PlainConfig {
		buf = append(buf, 1)
	} else {
		buf = append(buf, 0)
	}
	buf = binary.AppendUvarint(buf, uint64(len(extra)))
	buf = append(buf, extra...)
	rs := acc.Resources
	if rs == nil {
		rs = resource.NewList()
	}
	buf, err := rescodec.AppendListUnsorted(buf, rs)
	out := append([]byte(nil), buf...)
	if cap(buf) <= maxScratch {
		*bp = buf[:0]
		b.scratch.Put(bp)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// accumulationFormat is the first byte of a stored accumulation.
const accumulationFormat = 4

// maxScratch bounds the encoding buffer kept for the next node.
const maxScratch = 64 << 20

func (b *Builder) decodeAccumulation(data []byte) (*Accumulation, error) {
	if len(data) < 2 || data[0] != accumulationFormat || data[1] > 1 {
		return nil, errBadAccumulation
	}
	acc := &Accumulation{PlainConfig: data[1] == 1}
	n, w := binary.Uvarint(data[2:])
	rest := data[2:]
	if w <= 0 || n > uint64(len(rest)-w) {
		return nil, errBadAccumulation
	}
	extra, list := rest[w:w+int(n)], rest[w+int(n):]
	if len(extra) > 0 {
		cfg, vars, err := decodeExtra(extra)
		if err != nil {
			return nil, err
		}
		acc.Config, acc.Vars = cfg, vars
	}
	rs, err := rescodec.DecodeList(list)
	if err != nil {
		return nil, err
	}
	acc.Resources = rs
	if acc.PlainConfig {
		cfg, err := b.plainConfig()
		if err != nil {
			return nil, err
		}
		acc.Config = cfg
	}
	if acc.Config == nil {
		acc.Config = &fieldspec.Config{}
	}
	acc.Resources.Freeze()
	return acc, nil
}

var errBadAccumulation = errors.New("malformed stored accumulation")

// visit resolves one graph node: from the cache when its key is known and
// stored, else by building it.
func (b *Builder) visit(ctx context.Context, n *Node) *nodeResult {
	counts := &nodeCounts{node: n.Dir, key: n.Key}
	ctx = withNodeCounts(ctx, counts)
	start := time.Now()
	r := b.resolve(ctx, n)
	b.explainNode(n, r)
	r.stagesRan, r.stagesCached = counts.ran, counts.cached
	b.emit(Event{Kind: NodeDone, Node: n.Dir, Start: start, Dur: time.Since(start), Cached: r.fromCache})
	if b.opts.Progress != nil {
		b.opts.Progress()
	}
	return r
}

func (b *Builder) resolve(ctx context.Context, n *Node) *nodeResult {
	m := b.memo
	if m == nil || (n.IsComponent() && !b.isRoot(n)) {
		acc, err := b.buildNode(ctx, n)
		return &nodeResult{acc: acc, err: err}
	}
	var miss string
	if !b.opts.VerifyCache {
		cands, why := m.candidates(n)
		miss = why
		if b.isRoot(n) {
			// A root's output stands for its accumulation, which is not
			// stored when no node includes the root: load builds it if a
			// node asks for it. (The output is asked for first: with a
			// remote cache each question is a round trip, and most roots
			// have no accumulation entry.)
			for _, c := range cands {
				if out, sum, ok := m.Store.GetDigest(m.rootKey(c.key)); ok {
					m.accept(n, c)
					b.count(func(s *Stats) { s.NodesCached++ })
					return &nodeResult{key: c.key, fromCache: true, lazy: true, output: out, outputSum: sum}
				}
			}
		}
		for _, c := range cands {
			// The entry under the key is the node's accumulation, or the
			// mark a lazy node leaves (lazyMark): load reads it, or
			// builds the node, only when a dependent asks.
			if m.Store.Has(c.key) {
				m.accept(n, c)
				b.count(func(s *Stats) { s.NodesCached++ })
				return &nodeResult{key: c.key, fromCache: true, lazy: c.lazy}
			}
		}
	}
	acc, err := b.buildNode(ctx, n)
	if err != nil {
		return &nodeResult{err: err}
	}
	r := &nodeResult{acc: acc, miss: miss}
	// A node whose build ran only cheap stages (or none: it gathered its
	// files and its bases) is lazy: its accumulation is not stored by the
	// build that made it, only a mark under its key (lazyMark). Building
	// it again costs what its bases' entries cost to read plus a few
	// field edits, about what reading its own entry would, and that entry
	// would be the costliest to write, the whole content of every base
	// under it once more; most such nodes are never asked for again
	// (their dependents' outputs are stored). A later run that finds the
	// mark takes the key as found; load reads the entry, or builds the
	// node and stores its accumulation, only when a dependent that is
	// rebuilt asks for it.
	lazy := !ranCostly(ctx)
	if k, ok := m.remember(n, lazy); ok {
		switch {
		case !b.storesAccumulation(n):
			// A root no node includes: its output (finishRoot) is its
			// entry.
		case lazy:
			m.Store.Put(k, lazyMark)
		default:
			b.storeAccumulation(n, k, acc)
		}
		r.key = k
	}
	return r
}

// storeAccumulation stores n's accumulation under its key k, unless n is a
// root no other node of the run includes (storesAccumulation): its
// finished output is stored (finishRoot), and nothing else reads it.
func (b *Builder) storeAccumulation(n *Node, k cache.Key, acc *Accumulation) {
	if !b.storesAccumulation(n) {
		return
	}
	if data, err := b.encodeAccumulation(acc); err == nil {
		b.memo.put(k, data, hasSecret(acc.Resources.All()) || runsPlugins(n))
	}
}

// load returns a node result's accumulation, reading it from the cache on
// first use; if the entry is a lazy node's mark, or unusable, the node is
// built instead, and its accumulation stored under its key.
func (b *Builder) load(ctx context.Context, n *Node, r *nodeResult) (*Accumulation, error) {
	r.once.Do(func() {
		if !r.fromCache {
			return
		}
		marked := false
		if data, ok := b.memo.Store.Get(r.key); ok {
			if marked = bytes.Equal(data, lazyMark); !marked {
				if acc, err := b.decodeAccumulation(data); err == nil {
					r.acc = acc
					return
				}
			}
		}
		if b.opts.Explain {
			status := "built when a dependent asked (its entry was missing or unreadable; stored now)"
			switch {
			case b.isRoot(n) && !b.storesAccumulation(n):
				status = "built (lazy: not stored by the build that made it)"
			case marked || r.lazy:
				status = "built when a dependent asked (lazy: not stored by the build that made it; stored now)"
			}
			e := b.explainOf(n.Key)
			b.mu.Lock()
			e.Status = status
			b.mu.Unlock()
		}
		r.rebuilt = true
		r.acc, r.err = b.buildNode(ctx, n)
		if r.err == nil {
			// Asked for after all (a dependent changed, or one that runs
			// plugins is built every run): stored now, so that the next
			// run that needs it reads it. (The key was found under an
			// entry that proves it: the build read the files it covers.)
			b.storeAccumulation(n, r.key, r.acc)
		}
	})
	return r.acc, r.err
}

// runStage runs one configured stage over rs. Every stage of a build runs
// through here: with a cache, a stage whose kind, fingerprint and input are
// unchanged takes its output from the cache instead of running.
func (b *Builder) runStage(ctx context.Context, s stages.Stage, rs *resource.List) error {
	_, err := b.runStageEncoded(ctx, s, rs, nil)
	return err
}

// runStages runs stages in order over rs; the encoding of one stage's
// output, which its cache entry needs, is the next stage's input encoding.
func (b *Builder) runStages(ctx context.Context, list []stages.Stage, rs *resource.List) error {
	var enc []byte
	for _, s := range list {
		var err error
		if enc, err = b.runStageEncoded(ctx, s, rs, enc); err != nil {
			return fmt.Errorf("%s: %w", s.Kind(), err)
		}
	}
	return nil
}

// runStageEncoded is runStage given the encoding of rs when the caller
// has it (nil otherwise); it returns the encoding of the output, or nil
// without a cache.
//
// A plugin stage (one with a Describe method) is not cached with
// --no-cache-plugins. With --verify-cache a stage found in the cache runs
// anyway and its output must equal the cached one; a plugin stage not in
// the cache runs twice, and both outputs must be equal.
func (b *Builder) runStageEncoded(ctx context.Context, s stages.Stage, rs *resource.List, in []byte) ([]byte, error) {
	start := time.Now()
	var key cache.Key
	cacheable := false
	if _, cheap := s.(stages.Cheap); cheap {
		if err := s.Run(ctx, rs); err != nil {
			return nil, err
		}
		rs.Settle() // the stage is done with the trees: IDs are kept
		b.stageDone(ctx, s.Kind(), false, time.Since(start))
		return nil, nil
	}
	if c, _ := ctx.Value(nodeCountsKey{}).(*nodeCounts); c != nil {
		c.mu.Lock()
		c.costly++
		c.mu.Unlock()
	}
	desc, isPlugin := asPlugin(s)
	var want []byte // --verify-cache: the output the stage must give
	// Only stages that cost more than storing them are memoized on their
	// own (plugins, functions, helm); the others are memoized as part of
	// their node.
	if b.memo != nil && b.memo.Store != nil && expensive(s, isPlugin) && !(isPlugin && b.opts.NoCachePlugins) {
		var err error
		if in == nil {
			in, err = rescodec.EncodeList(rs)
		}
		if err == nil {
			key = b.memo.key("stage").String(s.Kind()).Bytes(s.Fingerprint()).Key(cache.Digest(in)).Sum()
			cacheable = true
			if data, ok := b.memo.Store.Get(key); ok {
				if out, err := rescodec.DecodeList(data); err == nil {
					if !b.opts.VerifyCache {
						rs.Replace(out.All())
						b.explainStage(ctx, s, cache.Digest(in), true)
						b.stageDone(ctx, s.Kind(), true, time.Since(start))
						return data, nil
					}
					want = data
				}
			}
		}
	}
	var again *resource.List // --verify-cache: a second run's input
	if b.opts.VerifyCache && isPlugin && want == nil {
		rs.Freeze()
		again = rs.Copy()
	}
	if err := s.Run(ctx, rs); err != nil {
		return nil, err
	}
	rs.Settle()
	if b.opts.VerifyCache && (want != nil || again != nil) {
		got, err := rescodec.EncodeList(rs)
		if err != nil {
			return nil, err
		}
		if want == nil {
			if err := s.Run(ctx, again); err != nil {
				return nil, err
			}
			if want, err = rescodec.EncodeList(again); err != nil {
				return nil, err
			}
		}
		if !bytes.Equal(got, want) {
			if isPlugin {
				return nil, fmt.Errorf("--verify-cache: %s printed different output for the same input: it is not a pure function of its config and input (build with --no-cache-plugins while it is not)", desc.Describe())
			}
			return nil, fmt.Errorf("--verify-cache: the %s stage gave a different output than the one cached for the same input (a kpipe bug, or a cache written by a different kpipe)", s.Kind())
		}
	}
	var out []byte
	if cacheable {
		b.explainStage(ctx, s, cache.Digest(in), false)
		if enc, err := rescodec.EncodeList(rs); err == nil {
			b.memo.put(key, enc, isPlugin || hasSecret(rs.All()))
			out = enc
		}
	}
	b.stageDone(ctx, s.Kind(), false, time.Since(start))
	return out, nil
}

// expensive reports whether a stage is worth a cache entry of its own:
// an external plugin or function, helm, or an embedder's stage (whose
// node is not memoized: see definedStage).
func expensive(s stages.Stage, isPlugin bool) bool {
	return isPlugin || s.Kind() == "HelmChartInflationGenerator" || isDefined(s)
}

// isDefined reports whether s is, or wraps, an embedder's stage
// (definedStage).
func isDefined(s stages.Stage) bool {
	for {
		if _, ok := s.(*definedStage); ok {
			return true
		}
		u, ok := s.(interface{ Unwrap() stages.Stage })
		if !ok {
			return false
		}
		s = u.Unwrap()
	}
}

// describer is implemented by plugin stages, which name themselves for
// messages.
type describer interface{ Describe() string }

// asPlugin returns the external plugin stage s is, or wraps (origin
// annotations wrap plugin stages), if any.
func asPlugin(s stages.Stage) (describer, bool) {
	for {
		if d, ok := s.(describer); ok {
			return d, true
		}
		u, ok := s.(interface{ Unwrap() stages.Stage })
		if !ok {
			return nil, false
		}
		s = u.Unwrap()
	}
}

// nodeCounts counts the stage runs of one node's build.
type nodeCounts struct {
	node, key   string // the node's directory and its key in the graph
	mu          sync.Mutex
	ran, cached int
	costly      int // stages run or cached that are not stages.Cheap
}

// ranCostly says whether a stage that is not stages.Cheap ran (or came
// from the cache) in the node ctx counts for.
func ranCostly(ctx context.Context) bool {
	c, _ := ctx.Value(nodeCountsKey{}).(*nodeCounts)
	if c == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.costly > 0
}

type nodeCountsKey struct{}

func withNodeCounts(ctx context.Context, c *nodeCounts) context.Context {
	return context.WithValue(ctx, nodeCountsKey{}, c)
}

func (b *Builder) stageDone(ctx context.Context, kind string, cached bool, d time.Duration) {
	c, _ := ctx.Value(nodeCountsKey{}).(*nodeCounts)
	if b.opts.Events != nil {
		ev := Event{Kind: StageDone, Stage: kind, Start: time.Now().Add(-d), Dur: d, Cached: cached}
		if c != nil {
			ev.Node = c.node
		}
		b.emit(ev)
	}
	if c != nil {
		c.mu.Lock()
		if cached {
			c.cached++
		} else {
			c.ran++
		}
		c.mu.Unlock()
	}
	b.count(func(st *Stats) {
		if st.Stages == nil {
			st.Stages = map[string]StageStats{}
		}
		ss := st.Stages[kind]
		if cached {
			ss.Cached++
		} else {
			ss.Ran++
		}
		ss.Time += d
		st.Stages[kind] = ss
	})
}

func (b *Builder) count(f func(*Stats)) {
	b.mu.Lock()
	f(&b.stats)
	b.mu.Unlock()
}
