package engine

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
)

// This file derives the memo's keys (memo.go says what each covers): the
// settings every key of a run takes, a node's pre-key and its full key
// (completed from a manifest of the files it read), a component's, a
// root's output's and a manifest's.

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
	values := [][2]string{
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
	if o.Kustomize581 {
		// (Only when set: the keys of v5.8.2 builds stay as they were.)
		values = append(values, [2]string{"kustomize", "v5.8.1"})
	}
	return values
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
// options that change output. It names a rootindex.Index.
func SettingsKey(o Options, r loaders.Restriction) cache.Key {
	return settings(cache.NewKey(o.Cache.Version, "settings"), o, r).Sum()
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
