package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// Role-binding subject modes of the NamespaceTransformer: which subjects of
// a RoleBinding or ClusterRoleBinding get the new namespace.
const (
	// subjectsDefaultOnly sets it on subjects named "default" (the default).
	subjectsDefaultOnly = "defaultOnly"
	// subjectsAllServiceAccounts sets it on every ServiceAccount subject.
	subjectsAllServiceAccounts = "allServiceAccounts"
	// subjectsNone leaves subjects alone.
	subjectsNone = "none"
)

// helmGeneratedAnnotation marks objects inflated from a helm chart; the
// namespace transformer leaves them to helm.
const helmGeneratedAnnotation = "internal.config.kubernetes.io/helm-generated"

// NamespaceConfig configures the NamespaceTransformer, in the shape of its
// builtin plugin config.
type NamespaceConfig struct {
	Metadata struct {
		Name      string `json:"name,omitempty"`
		Namespace string `json:"namespace,omitempty"`
	} `json:"metadata"`
	FieldSpecs []loaders.FieldSpec `json:"fieldSpecs,omitempty"`
	// UnsetOnly sets the namespace only where none is set yet.
	UnsetOnly bool `json:"unsetOnly"`
	// SetRoleBindingSubjects is one of the Subjects* modes; empty means
	// SubjectsDefaultOnly.
	SetRoleBindingSubjects string `json:"setRoleBindingSubjects"`
}

// NewNamespace returns the NamespaceTransformer stage: every namespaced
// object gets metadata.namespace, and every field spec the object's GVK
// selects gets the namespace too (a Namespace object's own name, a
// webhook's service namespace, ...). Objects made by helm are skipped. It
// fails when two objects end up with the same ID.
func NewNamespace(cfg NamespaceConfig) (Stage, error) {
	switch cfg.SetRoleBindingSubjects {
	case subjectsDefaultOnly, subjectsAllServiceAccounts, subjectsNone:
	case "":
		cfg.SetRoleBindingSubjects = subjectsDefaultOnly
	default:
		return nil, fmt.Errorf("invalid value %q for setRoleBindingSubjects: must be one of %q, %q or %q",
			cfg.SetRoleBindingSubjects, subjectsDefaultOnly, subjectsNone, subjectsAllServiceAccounts)
	}
	cfg.FieldSpecs = append([]loaders.FieldSpec(nil), cfg.FieldSpecs...)
	return &namespaceStage{cfg: cfg}, nil
}

// NamespaceFromConfig configures a NamespaceTransformer from its builtin
// plugin config.
func NamespaceFromConfig(data []byte) (Stage, error) {
	var cfg NamespaceConfig
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, fmt.Errorf("unmarshalling NamespaceTransformer config: %w", err)
	}
	return NewNamespace(cfg)
}

type namespaceStage struct {
	cfg NamespaceConfig
}

func (s *namespaceStage) Kind() string        { return "NamespaceTransformer" }
func (s *namespaceStage) Cheap()              {}
func (s *namespaceStage) Fingerprint() []byte { return Fingerprint(s.Kind(), s.cfg) }

// Run sets the namespace on every object, one at a time, checking after
// each that its new ID is unique.
func (s *namespaceStage) Run(_ context.Context, rs *resource.List) error {
	ns := s.cfg.Metadata.Namespace
	if ns == "" {
		return nil
	}
	// How many resources have each current ID, kept up to date as IDs
	// change, so that each step's conflict check is a map lookup (a scan
	// of the list per resource made large builds quadratic).
	count := make(map[resource.ID]int, rs.Len())
	for _, r := range rs.All() {
		count[r.ID().Key()]++
	}
	for i := 0; i < rs.Len(); i++ {
		r := rs.At(i)
		if helm, _ := r.Annotation(helmGeneratedAnnotation); len(r.Object()) == 0 || helm == "true" {
			continue
		}
		before := r.ID().Key()
		r = rs.Edit(i)
		r.RememberID()
		if err := s.apply(r); err != nil {
			return err
		}
		after := r.ID().Key()
		count[before]--
		count[after]++
		if count[after] != 1 {
			return fmt.Errorf("namespace transformation produces ID conflict: %s", describeAll(rs, rs.ByCurrentID(r.ID())))
		}
	}
	return nil
}

// apply sets the namespace in one object.
func (s *namespaceStage) apply(r *resource.Resource) error {
	obj := r.Edit()
	gvk := r.GVK()
	set := s.setter()
	if !gvk.IsClusterScoped() {
		meta := loaders.FieldSpec{Path: "metadata/namespace", CreateIfNotPresent: true}
		if err := fieldspec.Walk(obj, meta, fieldspec.CreateScalar, set); err != nil {
			return fmt.Errorf("namespace transformation failed: %w", err)
		}
	}
	roleBinding := gvk.Kind == "RoleBinding" || gvk.Kind == "ClusterRoleBinding"
	if roleBinding {
		if err := s.setSubjects(obj); err != nil {
			return err
		}
	}
	for _, fs := range s.cfg.FieldSpecs {
		switch {
		case fs.Path == "metadata/namespace":
			continue // done above, for namespaced objects only
		case fs.Path == "metadata/name" && r.APIVersion() != "v1":
			continue // only core/v1 Namespace objects take it as a name
		case roleBinding && (fs.Kind == "RoleBinding" || fs.Kind == "ClusterRoleBinding") && fs.Path == "subjects/namespace":
			continue // setSubjects decides
		case !fs.Matches(gvk):
			continue
		}
		err := fieldspec.Walk(obj, fs, fieldspec.CreateScalar, set)
		if err != nil {
			if strings.Contains(err.Error(), "wrong node kind") {
				return fmt.Errorf("namespace field specs must target scalar nodes: %w", err)
			}
			return fmt.Errorf("namespace transformation failed: %w", err)
		}
	}
	return nil
}

// setter writes the namespace into a field (only an empty one, with
// UnsetOnly).
func (s *namespaceStage) setter() func(fieldspec.Field) error {
	ns := s.cfg.Metadata.Namespace
	return func(f fieldspec.Field) error {
		switch v := f.Value().(type) {
		case map[string]any, []any:
			return wrongNodeKind("ScalarNode", v)
		}
		if s.cfg.UnsetOnly {
			if v, ok := resource.ScalarString(f.Value()); ok && v != "" {
				return nil
			}
		}
		f.Set(ns)
		return nil
	}
}

// setSubjects sets the namespace of the role binding subjects the mode
// selects.
func (s *namespaceStage) setSubjects(obj map[string]any) error {
	var field, want string
	switch s.cfg.SetRoleBindingSubjects {
	case subjectsNone:
		return nil
	case subjectsAllServiceAccounts:
		field, want = "kind", "ServiceAccount"
	default:
		field, want = "name", "default"
	}
	subjects, _ := obj["subjects"].([]any)
	for _, e := range subjects {
		subj, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if v, _ := resource.ScalarString(subj[field]); v != want {
			continue
		}
		if s.cfg.UnsetOnly {
			if v, _ := resource.ScalarString(subj["namespace"]); v != "" {
				continue
			}
		}
		subj["namespace"] = s.cfg.Metadata.Namespace
	}
	return nil
}

// describeAll lists the resources at the given indexes as kustomize's
// message does (a Go slice of its resources, each printed as its JSON with
// the build annotations kustomize keeps in the object), or by their IDs
// where an object does not go to JSON.
func describeAll(rs *resource.List, idx []int) string {
	out := make([]string, len(idx))
	for i, j := range idx {
		r := rs.At(j)
		b, err := json.Marshal(withStateAnnotations(r))
		if err != nil {
			out[i] = r.ID().String()
			continue
		}
		out[i] = string(b)
	}
	return "[" + strings.Join(out, " ") + "]"
}
