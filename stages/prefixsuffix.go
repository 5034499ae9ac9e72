package stages

import (
	"context"
	"errors"
	"fmt"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// PrefixSuffixConfig configures the PrefixTransformer, the
// SuffixTransformer and the PrefixSuffixTransformer (which applies the
// prefix, then the suffix).
type PrefixSuffixConfig struct {
	Prefix     string              `json:"prefix,omitempty"`
	Suffix     string              `json:"suffix,omitempty"`
	FieldSpecs []loaders.FieldSpec `json:"fieldSpecs,omitempty"`
}

// prefixSuffixSkipped are the kinds whose names must not change: their
// names mean something to the API server.
var prefixSuffixSkipped = []resource.GVK{
	{Kind: "CustomResourceDefinition"},
	{Group: "apiregistration.k8s.io", Kind: "APIService"},
	{Kind: "Namespace"},
}

// NewPrefixSuffix returns a stage of the given kind ("PrefixTransformer",
// "SuffixTransformer" or "PrefixSuffixTransformer") that adds the prefix
// and suffix to every field spec whose GVK selects an object's original
// GVK. Renaming metadata/name records the old ID, so references can follow.
// CustomResourceDefinitions, APIServices and Namespaces keep their names.
// The field specs must not be nil (kustomize's rule: an empty list is
// allowed, a missing one is a configuration error).
func NewPrefixSuffix(kind string, cfg PrefixSuffixConfig) (Stage, error) {
	if cfg.FieldSpecs == nil {
		return nil, errors.New("fieldSpecs is not expected to be nil")
	}
	switch kind {
	case "PrefixTransformer":
		cfg.Suffix = ""
	case "SuffixTransformer":
		cfg.Prefix = ""
	case "PrefixSuffixTransformer":
	default:
		return nil, fmt.Errorf("kpipe: internal error: no prefix/suffix stage of kind %q", kind)
	}
	cfg.FieldSpecs = append([]loaders.FieldSpec{}, cfg.FieldSpecs...)
	return &prefixSuffixStage{kind: kind, cfg: cfg}, nil
}

// PrefixFromConfig configures a PrefixTransformer from its builtin plugin
// config (`prefix:` and `fieldSpecs:`).
func PrefixFromConfig(data []byte) (Stage, error) {
	return prefixSuffixFromConfig("PrefixTransformer", data)
}

// SuffixFromConfig configures a SuffixTransformer from its builtin plugin
// config (`suffix:` and `fieldSpecs:`).
func SuffixFromConfig(data []byte) (Stage, error) {
	return prefixSuffixFromConfig("SuffixTransformer", data)
}

// PrefixSuffixFromConfig configures a PrefixSuffixTransformer from its
// builtin plugin config (`prefix:`, `suffix:` and `fieldSpecs:`).
func PrefixSuffixFromConfig(data []byte) (Stage, error) {
	return prefixSuffixFromConfig("PrefixSuffixTransformer", data)
}

func prefixSuffixFromConfig(kind string, data []byte) (Stage, error) {
	var cfg PrefixSuffixConfig
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: reading config: %w", kind, err)
	}
	return NewPrefixSuffix(kind, cfg)
}

type prefixSuffixStage struct {
	kind string
	cfg  PrefixSuffixConfig
}

func (s *prefixSuffixStage) Kind() string        { return s.kind }
func (s *prefixSuffixStage) Cheap()              {}
func (s *prefixSuffixStage) Fingerprint() []byte { return Fingerprint(s.kind, s.cfg) }

// Run adds the prefix to every object, then the suffix.
func (s *prefixSuffixStage) Run(_ context.Context, rs *resource.List) error {
	if s.kind != "SuffixTransformer" {
		if err := s.apply(rs, s.cfg.Prefix, true); err != nil {
			return err
		}
	}
	if s.kind != "PrefixTransformer" {
		return s.apply(rs, s.cfg.Suffix, false)
	}
	return nil
}

// apply adds one affix (a prefix when prefix is true) to the fields of
// every object.
func (s *prefixSuffixStage) apply(rs *resource.List, affix string, prefix bool) error {
	for i := 0; i < rs.Len(); i++ {
		orig := rs.At(i).OrigID().GVK
		if skipsAffix(orig) {
			continue
		}
		for _, fs := range s.cfg.FieldSpecs {
			if !orig.Selects(fs.GVK()) {
				continue
			}
			r := rs.Edit(i)
			if fs.Path == "metadata/name" {
				if prefix {
					r.AddNamePrefix(affix)
				} else {
					r.AddNameSuffix(affix)
				}
				if affix != "" {
					r.RememberID()
				}
			}
			err := fieldspec.Walk(r.Edit(), fs, fieldspec.CreateScalar, func(f fieldspec.Field) error {
				v, _ := resource.ScalarString(f.Value())
				if prefix {
					f.Set(affix + v)
				} else {
					f.Set(v + affix)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("%s: %w", s.kind, err)
			}
		}
	}
	return nil
}

// skipsAffix reports whether objects of the GVK keep their names.
func skipsAffix(g resource.GVK) bool {
	for _, sel := range prefixSuffixSkipped {
		if g.Selects(sel) {
			return true
		}
	}
	return false
}
