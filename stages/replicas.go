package stages

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// ReplicasConfig configures the ReplicaCountTransformer: one replica count
// and the fields that hold replica counts.
type ReplicasConfig struct {
	Replica    loaders.Replica     `json:"replica,omitempty"`
	FieldSpecs []loaders.FieldSpec `json:"fieldSpecs,omitempty"`
}

// NewReplicas returns the ReplicaCountTransformer stage. For each field
// spec, the objects named Replica.Name whose current or previous ID the
// spec's GVK selects get the count, as an integer, at the spec's path
// (created where the spec says create). It fails when no spec selects any
// object.
func NewReplicas(cfg ReplicasConfig) Stage {
	cfg.FieldSpecs = append([]loaders.FieldSpec(nil), cfg.FieldSpecs...)
	return &replicasStage{cfg: cfg}
}

// ReplicasFromConfig configures a ReplicaCountTransformer from its builtin
// plugin config (`replica:` and `fieldSpecs:`).
func ReplicasFromConfig(data []byte) (Stage, error) {
	var cfg ReplicasConfig
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, fmt.Errorf("ReplicaCountTransformer: reading config: %w", err)
	}
	return NewReplicas(cfg), nil
}

type replicasStage struct {
	cfg ReplicasConfig
}

func (s *replicasStage) Kind() string        { return "ReplicaCountTransformer" }
func (s *replicasStage) Cheap()              {}
func (s *replicasStage) Fingerprint() []byte { return Fingerprint(s.Kind(), s.cfg) }

// Run sets the count in every object a field spec selects.
func (s *replicasStage) Run(_ context.Context, rs *resource.List) error {
	found := false
	for _, fs := range s.cfg.FieldSpecs {
		sel := fs.GVK()
		for i := 0; i < rs.Len(); i++ {
			if !s.selects(rs.At(i), sel) {
				continue
			}
			found = true
			if !fs.Matches(rs.At(i).GVK()) {
				continue
			}
			if err := s.set(rs.Edit(i).Edit(), fs); err != nil {
				return fmt.Errorf("%s: %w", s.Kind(), err)
			}
		}
	}
	if !found {
		gvks := make([]string, len(s.cfg.FieldSpecs))
		for i, fs := range s.cfg.FieldSpecs {
			gvks[i] = fs.GVK().String()
		}
		return fmt.Errorf("%s: resource with name %s does not match a config with the following GVK %v",
			s.Kind(), s.cfg.Replica.Name, gvks)
	}
	return nil
}

// selects reports whether one of r's IDs, current or previous, has the
// replica's name and a GVK that sel selects.
func (s *replicasStage) selects(r *resource.Resource, sel resource.GVK) bool {
	return r.AnyID(func(id resource.ID) bool { return id.Name == s.cfg.Replica.Name && id.GVK.Selects(sel) })
}

// set writes the count at fs's path in obj. A field that exists keeps a
// quoted string's style (kustomize writes `"5"` over `"2"`); a null, plain
// or created field becomes an integer.
func (s *replicasStage) set(obj map[string]any, fs loaders.FieldSpec) error {
	count := s.cfg.Replica.Count
	// First the fields that exist; none of them is left as "".
	err := fieldspec.Walk(obj, fs, fieldspec.CreateNone, func(f fieldspec.Field) error {
		v := f.Value()
		switch t := v.(type) {
		case map[string]any, []any:
			return wrongNodeKind("ScalarNode", v)
		case string:
			if !isPlainString(t) {
				f.Set(strconv.FormatInt(count, 10))
				return nil
			}
		}
		f.Set(int(count))
		return nil
	})
	if err != nil || !fs.CreateIfNotPresent {
		return err
	}
	// Then the fields to create, which Walk creates as "".
	return fieldspec.Walk(obj, fs, fieldspec.CreateScalar, func(f fieldspec.Field) error {
		if f.Value() == "" {
			f.Set(int(count))
		}
		return nil
	})
}
