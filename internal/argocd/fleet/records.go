package fleet

import (
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/rootindex"
)

// records are the records of the Applications rendered before, in the
// cache: for each (by name and spec), every input its rendering read and
// its outputs, so that an Application whose inputs are unchanged is not
// rendered again, as build-all skips an unchanged root (package
// rootindex). An Application's record is kept only when every input is
// known: not for a Helm source (the chart is read whole), a kustomize
// build that runs plugins or helm charts, or one that names the
// ARGOCD_APP_* values (the revision changes with every commit).
type records struct {
	index   *rootindex.Index
	store   *cache.Store
	checker *cache.InputChecker
	files   *cache.FileIndex
	version string
}

// newRecords returns the records of s's renders; nil without a cache,
// or with --verify-cache.
func newRecords(s *Source) *records {
	eo := s.Renderer.Options().Engine
	store := eo.Cache.Store
	if store == nil || eo.VerifyCache {
		return nil
	}
	settings := s.Settings
	settings.Revision = ""
	sj, _ := json.Marshal(settings)
	key := cache.NewKey(eo.Cache.Version, "argocd-settings").String(string(sj)).String(eo.Helm.Command).Sum()
	files := s.Renderer.FileIndex(s.Tree)
	return &records{index: rootindex.Open(store, key), store: store, checker: cache.NewInputChecker(files), files: files, version: eo.Cache.Version}
}

// name is u's record's name: its name and spec.
func (r *records) name(u *Unit) string {
	return "argocd-app:" + u.Name + ":" + hex.EncodeToString(u.Spec[:])
}

func (r *records) key(kind, name string) cache.Key {
	return cache.NewKey(r.version, kind).String(name).Sum()
}

// recordable reports whether u's output may be kept in a record.
func recordable(u *Unit) bool {
	b, _ := json.Marshal(u.App)
	return !strings.Contains(string(b), "ARGOCD_APP_")
}

// lookup returns u's outputs and inputs when its record's inputs are
// unchanged and, with output set, that file holds the recorded output
// (whichever run, with an output directory or not, made the record).
func (r *records) lookup(u *Unit, output string, intact func(path string, d cache.Key) bool) (*Output, []cache.Input, bool) {
	if r == nil || u.App == nil {
		return nil, nil, false
	}
	name := r.name(u)
	rec, ok := r.index.Root(name)
	if !ok || !r.index.Unchanged(r.checker, rec) {
		return nil, nil, false
	}
	if output != "" && !intact(output, rec.OutputDigest) {
		return nil, nil, false
	}
	m, d, ok := r.store.GetDigest(r.key("argocd-manifests", name))
	if !ok || d != rec.OutputDigest {
		return nil, nil, false
	}
	n, ok := r.store.Get(r.key("argocd-normalized", name))
	if !ok {
		return nil, nil, false
	}
	inputs, ok := r.index.AllInputs(rec)
	if !ok {
		return nil, nil, false
	}
	return &Output{Manifests: m, Normalized: n, Cached: true}, inputs, true
}

// save keeps u's outputs and inputs, when all are known; it returns the
// inputs (nil when none could be kept).
func (r *records) save(s *Source, u *Unit, out *Output, output string) []cache.Input {
	if r == nil || out.Err != "" || out.Skipped != "" || out.Reads == nil || !recordable(u) {
		return nil
	}
	inputs, why := out.Reads.Inputs(s.Tree, r.files)
	if why != "" {
		return nil
	}
	name := r.name(u)
	sum := cache.Digest(out.Manifests)
	r.store.PutDigest(r.key("argocd-manifests", name), out.Manifests, sum, true)
	r.store.PutSensitive(r.key("argocd-normalized", name), out.Normalized)
	r.index.SetRoot(name, &rootindex.Record{Inputs: inputs, Output: output, OutputDigest: sum})
	return inputs
}
