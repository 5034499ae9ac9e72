package engine

import (
	"errors"
	"sort"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/stages"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// A stored accumulation's extra part (encodeAccumulation) is its field-spec
// configuration, when it is not kustomize's default, and its vars, in
// cache.Encoder's encoding: a bool for the configuration, then each of its
// lists (configLists' order, then the name references), then the vars by
// name. It was encoding/gob's, whose package initialiser cost every kpipe
// process about a millisecond at start, for a part most accumulations do
// not have. TestExtraRoundTrip fills every field of the types by
// reflection, so a field added to them and not here fails it.

// extraFormat is the first byte of an extra part.
const extraFormat = 1

// configLists are the field-spec lists of a configuration, in their
// encoding's order.
func configLists(c *fieldspec.Config) []*[]loaders.FieldSpec {
	return []*[]loaders.FieldSpec{&c.NamePrefix, &c.NameSuffix, &c.Namespace, &c.CommonLabels, &c.Labels,
		&c.TemplateLabels, &c.VolumeClaimTemplateLabels, &c.CommonAnnotations, &c.VarReference, &c.Images, &c.Replicas}
}

// encodeExtra encodes cfg (nil: none) and vars.
func encodeExtra(cfg *fieldspec.Config, vars stages.VarSet) []byte {
	w := cache.NewEncoder(extraFormat)
	if w.Bool(cfg != nil) {
		for _, l := range configLists(cfg) {
			encodeSpecs(w, *l)
		}
		w.Uint(len(cfg.NameReference))
		for _, r := range cfg.NameReference {
			w.String(r.Group)
			w.String(r.Version)
			w.String(r.Kind)
			encodeSpecs(w, r.FieldSpecs)
		}
	}
	names := make([]string, 0, len(vars.ByName))
	for n := range vars.ByName {
		names = append(names, n)
	}
	sort.Strings(names)
	w.Uint(len(names))
	for _, n := range names {
		v := vars.ByName[n]
		for _, s := range []string{n, v.Name, v.ObjRef.APIVersion, v.ObjRef.Group, v.ObjRef.Version, v.ObjRef.Kind,
			v.ObjRef.Name, v.ObjRef.Namespace, v.FieldRef.FieldPath} {
			w.String(s)
		}
	}
	return w.Bytes()
}

func encodeSpecs(w *cache.Encoder, l []loaders.FieldSpec) {
	w.Uint(len(l))
	for _, fs := range l {
		w.String(fs.Group)
		w.String(fs.Version)
		w.String(fs.Kind)
		w.String(fs.Path)
		w.Bool(fs.CreateIfNotPresent)
	}
}

var errBadExtra = errors.New("malformed stored configuration or vars")

// decodeExtra reads what encodeExtra wrote. An empty list or set comes
// back nil, as from gob before.
func decodeExtra(data []byte) (*fieldspec.Config, stages.VarSet, error) {
	r := cache.NewDecoder(data, extraFormat)
	var cfg *fieldspec.Config
	var vars stages.VarSet
	if r.Bool() {
		cfg = &fieldspec.Config{}
		for _, l := range configLists(cfg) {
			*l = decodeSpecs(r)
		}
		if n := r.Uint(); n > 0 {
			cfg.NameReference = make([]fieldspec.NameBackReference, n)
			for i := range cfg.NameReference {
				nr := &cfg.NameReference[i]
				nr.Group, nr.Version, nr.Kind = r.String(), r.String(), r.String()
				nr.FieldSpecs = decodeSpecs(r)
			}
		}
	}
	if n := r.Uint(); n > 0 {
		vars.ByName = make(map[string]loaders.Var, n)
		for range n {
			key := r.String()
			var v loaders.Var
			v.Name, v.ObjRef.APIVersion, v.ObjRef.Group, v.ObjRef.Version = r.String(), r.String(), r.String(), r.String()
			v.ObjRef.Kind, v.ObjRef.Name, v.ObjRef.Namespace, v.FieldRef.FieldPath = r.String(), r.String(), r.String(), r.String()
			vars.ByName[key] = v
		}
	}
	if !r.Done() {
		return nil, stages.VarSet{}, errBadExtra
	}
	return cfg, vars, nil
}

func decodeSpecs(r *cache.Decoder) []loaders.FieldSpec {
	n := r.Uint()
	if n == 0 {
		return nil
	}
	l := make([]loaders.FieldSpec, n)
	for i := range l {
		l[i] = loaders.FieldSpec{Group: r.String(), Version: r.String(), Kind: r.String(), Path: r.String(), CreateIfNotPresent: r.Bool()}
	}
	return l
}
