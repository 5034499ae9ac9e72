package engine

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/stages"
)

// NodeExplain is what Options.Explain reports about one node: whether it
// came from the cache or was built, and, for a node built, which of its
// named inputs changed since the record the last build of the same node
// (the same directory in the same context) left in the cache.
type NodeExplain struct {
	// Node is the node's directory, with its context (an inherited
	// namespace, a buildMetadata origin) when it has one.
	Node string `json:"node"`
	// Status is "hit" (from the cache; for a root, with where its
	// output came from), "built", "built, runs plugins"
	// (such a node is never cached whole; its plugin stages are, see
	// Stages), "built, not cacheable" (its key cannot be known), or
	// "failed (...)" (an error is never cached).
	Status string `json:"status"`
	// NoEarlierRecord says no earlier build of the node left a record:
	// nothing to compare with (a first build, or a cleared cache; records
	// are kept by directory, so also a tree copied to another path).
	NoEarlierRecord bool `json:"noEarlierRecord,omitempty"`
	// Cache says, for a node built, why the cache held no entry for it
	// ("not in the cache: ..."): it was never built with its
	// kustomization, resources, bases and settings, or never with the
	// current content of the files it reads, or one of those is gone.
	// Records are of this machine's builds and of this path; this is
	// what a build from another path, or from a remote cache, missed.
	Cache string `json:"cache,omitempty"`
	// Changed are the inputs that differ from the earlier record.
	Changed []InputChange `json:"changed,omitempty"`
	// Stages are the node's cached stages (plugins, functions, helm).
	Stages []StageExplain `json:"stages,omitempty"`
}

// StageExplain is one cached stage's part in a NodeExplain.
type StageExplain struct {
	Stage           string        `json:"stage"`
	Status          string        `json:"status"` // "hit" or "ran"
	NoEarlierRecord bool          `json:"noEarlierRecord,omitempty"`
	Changed         []InputChange `json:"changed,omitempty"`
}

// InputChange is one named input that differs between two records: a file
// ("file deployment.yaml"), a base ("resource ../base"), a setting
// ("setting EnableHelm"), the kpipe binary ("kpipe"), a plugin's
// executable, config or environment variable ("env SOPS_AGE_KEY_FILE")...
// Old or New is empty when the input is absent on that side. Values are
// short digests, or setting values; never a file's or variable's content.
type InputChange struct {
	Input string `json:"input"`
	Old   string `json:"old,omitempty"`
	New   string `json:"new,omitempty"`
}

// String is the one-line form: "file x.yaml changed", "resource y added".
func (c InputChange) String() string {
	switch {
	case c.Old == "":
		return c.Input + " added"
	case c.New == "":
		return c.Input + " removed"
	case strings.HasPrefix(c.Input, "setting ") || c.Input == "kpipe":
		return fmt.Sprintf("%s changed (%s -> %s)", c.Input, c.Old, c.New)
	}
	return c.Input + " changed"
}

// Explain returns the nodes' explanations of this run, by node (empty
// unless Options.Explain).
func (b *Builder) Explain() []NodeExplain {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]NodeExplain, 0, len(b.explains))
	for _, e := range b.explains {
		ex := *e
		sort.Slice(ex.Stages, func(i, j int) bool { return ex.Stages[i].Stage < ex.Stages[j].Stage })
		out = append(out, ex)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// explainRecordKey names the record of a node's (or stage's) inputs. It
// is not salted with kpipe's version, so that a new kpipe can say its own
// version is what changed.
func explainRecordKey(identity string) cache.Key {
	return cache.NewKey("explain-v1", "explain").String(identity).Sum()
}

// compareRecord stores rec under identity and returns how it differs from
// the record stored there before (first: there was none).
func (m *memo) compareRecord(identity string, rec map[string]string) (changed []InputChange, first bool) {
	k := explainRecordKey(identity)
	var old map[string]string
	if data, ok := m.Store.GetLocal(k); ok && json.Unmarshal(data, &old) == nil {
		for name, v := range rec {
			if ov, ok := old[name]; !ok {
				changed = append(changed, InputChange{Input: name, New: v})
			} else if ov != v {
				changed = append(changed, InputChange{Input: name, Old: ov, New: v})
			}
		}
		for name, ov := range old {
			if _, ok := rec[name]; !ok {
				changed = append(changed, InputChange{Input: name, Old: ov})
			}
		}
		sort.Slice(changed, func(i, j int) bool { return changed[i].Input < changed[j].Input })
	} else {
		first = true
	}
	if data, err := json.Marshal(rec); err == nil {
		m.Store.PutLocal(k, data) // about this machine's builds: never uploaded
	}
	return changed, first
}

// settingsRecord names the settings by their flags, with their values
// (settingValues), for nodeRecord.
func settingsRecord(o Options, r loaders.Restriction) map[string]string {
	rec := map[string]string{}
	for _, s := range settingValues(o, r) {
		rec["setting "+s[0]] = s[1]
	}
	return rec
}

func short(k cache.Key) string { return hex.EncodeToString(k[:6]) }

// nodeRecord names the inputs of n's key as they are in this run.
func (m *memo) nodeRecord(n *Node) map[string]string {
	rec := map[string]string{"kpipe": m.Version}
	for name, v := range m.settingsRec {
		rec[name] = v
	}
	if d, ok := m.kustomizationDigest(n); ok {
		rec["kustomization "+n.KustFileName()] = short(d)
	}
	if c := strings.TrimPrefix(n.Key, n.Dir) + n.schemaID(); c != "" {
		rec["context"] = c
	}
	if len(n.K.HelmCharts) > 0 && m.helm != nil {
		if h, err := m.helm(); err == nil {
			rec["helm binary"] = h.Path + " " + h.Digest[:min(len(h.Digest), 12)]
			rec["helm environment"] = short(cache.Digest([]byte(strings.Join(h.EnvFingerprint, "\x00"))))
		}
	}
	entry := func(prefix string, e *Entry) {
		switch {
		case e.Err != nil:
			rec[prefix+e.Path] = "error"
		case e.Child != nil:
			if k, ok := m.knownKey(e.Child); ok {
				rec[prefix+e.Path] = short(k)
			} else {
				rec[prefix+e.Path] = "unknown"
			}
		default:
			rec[prefix+e.Path] = short(m.dataDigest(n, e))
		}
	}
	for _, e := range n.Resources {
		entry("resource ", e)
	}
	for _, e := range n.Components {
		entry("component ", e)
	}
	for _, e := range n.PluginDirs {
		entry("plugin configs ", e)
	}
	m.mu.Lock()
	used := m.used[n]
	m.mu.Unlock()
	for _, r := range used {
		name := "file " + r.Path
		if r.Tree {
			name = "tree " + r.Path
		}
		rec[name] = short(r.Digest)
	}
	return rec
}

// explainNode records n's explanation after it was resolved.
func (b *Builder) explainNode(n *Node, r *nodeResult) {
	m := b.memo
	if !b.opts.Explain || m == nil || m.Store == nil {
		return
	}
	m.mu.Lock()
	volatile := m.volatile[n]
	m.mu.Unlock()
	status := "built"
	switch {
	case r.output != nil:
		status = "hit (its output, stored under its key)"
	case r.fromCache && r.lazy:
		status = statusUnneeded
	case r.fromCache:
		status = statusHit
	case r.err != nil:
		status = "failed (an error is never cached: it is built again every run)"
	case n.IsComponent() && !b.isRoot(n):
		status = "applied in its referrers (a component is cached as part of them)"
	case volatile:
		status = "built, runs plugins"
	case r.key == (cache.Key{}) && r.err == nil:
		status = "built, not cacheable"
	}
	rec := m.nodeRecord(n)
	changed, first := m.compareRecord("node\x00"+n.Key, rec)
	e := b.explainOf(n.Key)
	b.mu.Lock()
	e.Status = status
	if !r.fromCache {
		e.Changed, e.NoEarlierRecord, e.Cache = changed, first, r.miss
	}
	b.mu.Unlock()
}

// Statuses of a node found in the cache (explainNode).
const (
	statusHit      = "hit"
	statusUnneeded = "unchanged (lazy: read, or built, only if a dependent is rebuilt)"
)

// explainRoot records where root n's output came from, its node having
// been found in the cache: explainNode could not know it yet. A status
// that says the node was built after all (a dependent asked for it; load)
// stays, whichever came first.
func (b *Builder) explainRoot(n *Node, status string) {
	if !b.opts.Explain || b.memo == nil || b.memo.Store == nil {
		return
	}
	e := b.explainOf(n.Key)
	b.mu.Lock()
	if e.Status == statusHit || e.Status == statusUnneeded {
		e.Status = status
	}
	b.mu.Unlock()
}

// explainOf returns the explanation being filled for the node with key k.
func (b *Builder) explainOf(k string) *NodeExplain {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.explains == nil {
		b.explains = map[string]*NodeExplain{}
	}
	e, ok := b.explains[k]
	if !ok {
		e = &NodeExplain{Node: k}
		b.explains[k] = e
	}
	return e
}

// explainStage records a cached stage's explanation: hit or ran, and which
// of its named inputs changed since its last record.
func (b *Builder) explainStage(ctx context.Context, s stages.Stage, input cache.Key, hit bool) {
	if !b.opts.Explain || b.memo == nil || b.memo.Store == nil {
		return
	}
	c, _ := ctx.Value(nodeCountsKey{}).(*nodeCounts)
	if c == nil {
		return
	}
	name := s.Kind()
	if d, ok := asPlugin(s); ok {
		name = d.Describe()
	}
	rec := map[string]string{"kpipe": b.memo.Version, "input resources": short(input)}
	inner := s
	for {
		if x, ok := inner.(interface{ ExplainInputs() map[string]string }); ok {
			for k, v := range x.ExplainInputs() {
				rec[k] = v
			}
			break
		}
		u, ok := inner.(interface{ Unwrap() stages.Stage })
		if !ok {
			rec["definition"] = hex.EncodeToString(s.Fingerprint()[:6])
			break
		}
		inner = u.Unwrap()
	}
	changed, first := b.memo.compareRecord("stage\x00"+c.key+"\x00"+name, rec)
	se := StageExplain{Stage: name, Status: "ran"}
	if hit {
		se.Status = "hit"
	} else {
		se.Changed, se.NoEarlierRecord = changed, first
	}
	e := b.explainOf(c.key)
	b.mu.Lock()
	e.Stages = append(e.Stages, se)
	b.mu.Unlock()
}
