package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/resource"
	"github.com/kpipe/kpipe/loaders"
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
//     complete the key. A node whose key is unchanged is not re-entered,
//     and its value is not even read unless a parent needs it. A node
//     whose build ran only cheap stages (stages.Cheap) is lazy: its
//     manifest says so and its accumulation is not stored, because
//     building it again from its bases' entries costs about what reading
//     its own would, and writing it would copy every base under it once
//     more (resolve).
//   - a stage: its kind, its fingerprint and the digest of its input
//     resources.
//   - a root's final output: the root node's key plus the finishing steps.
//     A root that no node of the run includes (most roots) keeps its
//     output with its node's manifest instead, in one entry under its
//     pre-key (finishedRoot): a later run takes the output when every
//     file the manifest lists still has the digest it had, which is the
//     same test as the full key's. Such a root writes one entry, not a
//     manifest and an output; a root that nodes include keeps both apart,
//     because its parents need its key without its output.
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
		pres: map[*Node]cache.Key{}, used: map[*Node][]readRecord{}, dirs: make(map[string]cache.Key, len(g.Nodes)),
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
// their parents, so their key comes from their definition and manifest
// only.
func (m *memo) componentKey(c *Node) (cache.Key, bool) {
	if k, ok := m.knownKey(c); ok {
		return k, true
	}
	k, _, ok := m.fullKey(c)
	if ok {
		m.setKey(c, k)
	}
	return k, ok
}

// fullKey completes a node's key with the files its manifest lists, as
// they are now; lazy is the manifest's mark that the node's accumulation
// is not stored.
func (m *memo) fullKey(n *Node) (k cache.Key, lazy, ok bool) {
	pre, ok := m.preKey(n)
	if !ok {
		return cache.Key{}, false, false
	}
	data, ok := m.Store.Get(m.manifestKey(pre))
	if !ok {
		return cache.Key{}, false, false
	}
	recs, lazy, ok := decodeManifest(data)
	if !ok {
		return cache.Key{}, false, false
	}
	k, ok = m.keyFromManifest(n, pre, recs)
	return k, lazy, ok
}

// keyFromManifest completes n's key from its pre-key and the files a
// stored manifest lists (recs, without real paths), digested as they are
// now, and keeps them as the files n's key covers.
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
	m.mu.Lock()
	m.used[n] = recs
	m.mu.Unlock()
	return m.completeKey(n.Dir, pre, recs), true
}

// finishedRoot looks a root up in its finished form (see
// Builder.keepsFinished): its output and the output's digest, stored
// with its manifest and its full key under its pre-key. It returns them,
// and the full key, when the key completed from the manifest's files as
// they are now is the stored one: the test a full key's entries pass
// (the files' digests, and where they resolve to), so the output is what
// building the root again would give.
func (m *memo) finishedRoot(n *Node) (k cache.Key, out []byte, sum cache.Key, ok bool) {
	pre, ok := m.preKey(n)
	if !ok {
		return k, nil, sum, false
	}
	data, ok := m.Store.Get(m.finishedKey(pre))
	if !ok {
		return k, nil, sum, false
	}
	recs, stored, out, sum, ok := decodeFinished(data)
	if !ok {
		return k, nil, sum, false
	}
	if k, ok = m.keyFromManifest(n, pre, recs); !ok || k != stored {
		m.mu.Lock()
		delete(m.used, n)
		m.mu.Unlock()
		return cache.Key{}, nil, cache.Key{}, false
	}
	return k, out, sum, true
}

// finishedManifest returns the manifest that root n's build recorded
// (remember), encoded for its finished form, and n's pre-key; nil when
// they are not known.
func (m *memo) finishedManifest(n *Node) ([]byte, cache.Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pre, okPre := m.pres[n]
	recs, okRecs := m.used[n]
	if !okPre || !okRecs {
		return nil, cache.Key{}
	}
	return encodeManifest(recs, false), pre
}

// finishedKey is the entry of a root's finished form, under its pre-key.
func (m *memo) finishedKey(pre cache.Key) cache.Key {
	return m.key("finished root").Key(pre).Sum()
}

// encodeFinished and decodeFinished store a root's finished form: the
// output, then the manifest of the root node (man, encodeManifest's
// encoding), the root's full key, the output's digest, and the
// manifest's length (4 bytes, little-endian). The output comes first so
// that one pass of SHA-256 over it gives both the output's digest and,
// going on over the rest, the entry's, and so that the entry is the
// output's own buffer with the rest appended in the capacity render left
// for it: kubeflow's outputs are megabytes of CRDs, and hashing them
// twice and copying them once more was most of what this form first
// cost there.
func encodeFinished(out, man []byte, key cache.Key) (entry []byte, sum, entrySum cache.Key) {
	h := sha256.New()
	h.Write(out)
	if c, err := h.(hash.Cloner).Clone(); err == nil {
		copy(sum[:], c.Sum(nil))
	} else {
		sum = cache.Digest(out) // (sha256's state always clones)
	}
	entry = append(out, man...)
	entry = append(entry, key[:]...)
	entry = append(entry, sum[:]...)
	entry = binary.LittleEndian.AppendUint32(entry, uint32(len(man)))
	h.Write(entry[len(out):])
	copy(entrySum[:], h.Sum(nil))
	return entry, sum, entrySum
}

// finishedTrailer is what a finished form adds to the output besides the
// manifest.
const finishedTrailer = 2*sha256.Size + 4

func decodeFinished(data []byte) (recs []readRecord, key cache.Key, out []byte, sum cache.Key, ok bool) {
	if len(data) < finishedTrailer {
		return nil, key, nil, sum, false
	}
	n := uint64(binary.LittleEndian.Uint32(data[len(data)-4:]))
	rest := data[:len(data)-4]
	copy(sum[:], rest[len(rest)-len(sum):])
	rest = rest[:len(rest)-len(sum)]
	copy(key[:], rest[len(rest)-len(key):])
	rest = rest[:len(rest)-len(key)]
	if n > uint64(len(rest)) {
		return nil, key, nil, sum, false
	}
	man := rest[len(rest)-int(n):]
	if recs, _, ok = decodeManifest(man); !ok {
		return nil, key, nil, sum, false
	}
	return recs, key, rest[:len(rest)-int(n)], sum, true
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
// and forgets them: remember asks once, and keeps them as m.used (a
// 10,000-root build held both, for every node, to the end).
func (m *memo) recorded(n *Node) []readRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := make([]readRecord, 0, len(m.reads[n]))
	for _, r := range m.reads[n] {
		recs = append(recs, r)
	}
	delete(m.reads, n)
	sort.Slice(recs, func(i, j int) bool { return recs[i].Path < recs[j].Path })
	return recs
}

// setVolatile marks n as running external plugins.
func (m *memo) setVolatile(n *Node) {
	m.mu.Lock()
	m.volatile[n] = true
	m.mu.Unlock()
}

// remember stores n's manifest after n was built (or applied, for a
// component) in this run, with lazy (see encodeManifest), and returns n's
// full key; false for a volatile node, which gets no key. With
// withOutput, the manifest is not stored here: finishRoot stores it with
// the root's output (Builder.keepsFinished).
func (m *memo) remember(n *Node, lazy, withOutput bool) (cache.Key, bool) {
	m.mu.Lock()
	v := m.volatile[n]
	m.mu.Unlock()
	if v {
		return cache.Key{}, false
	}
	for _, e := range n.Components {
		if e.Child != nil {
			if _, ok := m.knownKey(e.Child); !ok {
				if _, ok := m.remember(e.Child, false, false); !ok {
					return cache.Key{}, false
				}
			}
		}
	}
	pre, ok := m.preKey(n)
	if !ok {
		return cache.Key{}, false
	}
	recs := m.recorded(n)
	if !withOutput {
		m.Store.Put(m.manifestKey(pre), encodeManifest(recs, lazy))
	}
	m.mu.Lock()
	m.used[n] = recs
	m.mu.Unlock()
	k := m.completeKey(n.Dir, pre, recs)
	m.setKey(n, k)
	return k, true
}

// encodeManifest and decodeManifest store the files a node's stages read
// (cache.Encoder's encoding): the count, and for each file its path as
// the kustomization names it, its digest and whether it is a tree; last,
// lazy: the node's accumulation is not stored, because its build ran
// only cheap stages (see resolve). A node whose key is checked reads one,
// and resolves each path again (fullKey), so the real paths are not
// stored: they were absolute, most of a manifest's bytes, and never read.
func encodeManifest(recs []readRecord, lazy bool) []byte {
	w := cache.NewEncoder(manifestFormat)
	w.Uint(len(recs))
	for _, r := range recs {
		w.String(r.Path)
		w.Key(r.Digest)
		w.Bool(r.Tree)
	}
	w.Bool(lazy)
	return w.Bytes()
}

const manifestFormat = 3

// decodeManifest reads what encodeManifest wrote; false for anything else.
// The records it returns have no real paths.
func decodeManifest(data []byte) (recs []readRecord, lazy, ok bool) {
	r := cache.NewDecoder(data, manifestFormat)
	n := r.Uint()
	recs = make([]readRecord, 0, n)
	for i := 0; i < n; i++ {
		recs = append(recs, readRecord{Path: r.String(), Digest: r.Key(), Tree: r.Bool()})
	}
	lazy = r.Bool()
	return recs, lazy, r.Done()
}

// encodeAccumulation and decodeAccumulation store a node's result:
// accumulationFormat; 1 when Config is kustomize's default field specs,
// which most nodes have and which is large, so not stored, else 0; the
// length (uvarint) and encoding of the rest (encodeExtra: the Config when
// it is not the default, the Vars), empty when there is neither; then the
// resources in resource.AppendListUnsorted's encoding, which is most of
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
	buf, err := resource.AppendListUnsorted(buf, rs)
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
	rs, err := resource.DecodeList(list)
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
	if b.isRoot(n) && !b.opts.VerifyCache {
		if k, out, sum, ok := m.finishedRoot(n); ok {
			// The root's output stands for its accumulation, as below;
			// load builds the accumulation if a node asks for it.
			m.setKey(n, k)
			b.count(func(s *Stats) { s.NodesCached++ })
			return &nodeResult{key: k, fromCache: true, lazy: true, output: out, outputSum: sum}
		}
	}
	if k, lazy, ok := m.fullKey(n); ok && !b.opts.VerifyCache && (lazy || (b.isRoot(n) && m.Store.Has(m.key("root").Key(k).Sum())) || m.Store.Has(k)) {
		// (A root's finished output stands for its accumulation, which is
		// not stored when no node includes the root, and so does a lazy
		// node's key: load builds either when needed after all. The
		// output is asked for first: with a remote cache each question
		// is a round trip, and most roots have no accumulation entry.)
		m.setKey(n, k)
		b.count(func(s *Stats) { s.NodesCached++ })
		return &nodeResult{key: k, fromCache: true, lazy: lazy}
	}
	acc, err := b.buildNode(ctx, n)
	if err != nil {
		return &nodeResult{err: err}
	}
	r := &nodeResult{acc: acc}
	// A node whose build ran only cheap stages (or none: it gathered its
	// files and its bases) is lazy: its accumulation is not stored by the
	// build that made it. Building it again costs what its bases' entries
	// cost to read plus a few field edits, about what reading its own
	// entry would, and that entry would be the costliest to write, the
	// whole content of every base under it once more; most such nodes
	// are never asked for again (their dependents' outputs are stored).
	// A later run that finds its key takes it as found; load reads it, or
	// builds and then stores it, only when a dependent that is rebuilt
	// asks for it.
	lazy := !ranCostly(ctx)
	r.finished = b.keepsFinished(n)
	if k, ok := m.remember(n, lazy, r.finished); ok {
		if !lazy {
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
// first use; if the cached value is unusable the node is built instead.
func (b *Builder) load(ctx context.Context, n *Node, r *nodeResult) (*Accumulation, error) {
	r.once.Do(func() {
		if !r.fromCache {
			return
		}
		if data, ok := b.memo.Store.Get(r.key); ok {
			if acc, err := b.decodeAccumulation(data); err == nil {
				r.acc = acc
				return
			}
		}
		if b.opts.Explain && r.lazy {
			status := "built when a dependent asked (lazy: not stored by the build that made it; stored now)"
			if b.isRoot(n) && !b.storesAccumulation(n) {
				status = "built (lazy: not stored by the build that made it)"
			}
			e := b.explainOf(n.Key)
			b.mu.Lock()
			e.Status = status
			b.mu.Unlock()
		}
		r.rebuilt = true
		r.acc, r.err = b.buildNode(ctx, n)
		if r.lazy && r.err == nil {
			// A lazy node asked for after all (a dependent changed, or
			// one that runs plugins is built every run) is stored now:
			// the next run that needs it reads it.
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
			in, err = resource.EncodeList(rs)
		}
		if err == nil {
			key = b.memo.key("stage").String(s.Kind()).Bytes(s.Fingerprint()).Key(cache.Digest(in)).Sum()
			cacheable = true
			if data, ok := b.memo.Store.Get(key); ok {
				if out, err := resource.DecodeList(data); err == nil {
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
		got, err := resource.EncodeList(rs)
		if err != nil {
			return nil, err
		}
		if want == nil {
			if err := s.Run(ctx, again); err != nil {
				return nil, err
			}
			if want, err = resource.EncodeList(again); err != nil {
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
		if enc, err := resource.EncodeList(rs); err == nil {
			b.memo.put(key, enc, isPlugin || hasSecret(rs.All()))
			out = enc
		}
	}
	b.stageDone(ctx, s.Kind(), false, time.Since(start))
	return out, nil
}

// expensive reports whether a stage is worth a cache entry of its own:
// an external plugin or function, or helm.
func expensive(s stages.Stage, isPlugin bool) bool {
	return isPlugin || s.Kind() == "HelmChartInflationGenerator"
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
