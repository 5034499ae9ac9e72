package stages

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/internal/giturl"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/smp"
)

// Annotations kustomize writes for a kustomization's buildMetadata.
const (
	// OriginAnnotation records where an object came from (buildMetadata
	// originAnnotations).
	OriginAnnotation = "config.kubernetes.io/origin"
	// TransformationsAnnotation lists the transformers that ran over an
	// object (buildMetadata transformerAnnotations).
	TransformationsAnnotation = "alpha.config.kubernetes.io/transformations"
)

// Origin is kustomize's record of where an object came from: the file it
// was read from (Path, relative to the build root), or the generator or
// transformer config that made it (ConfiguredIn, ConfiguredBy). Repo and Ref
// name a remote base. Its YAML form, field order included, is the value of
// the origin annotation and of each entry of the transformations
// annotation.
type Origin struct {
	Path         string    `yaml:"path,omitempty" json:"path,omitempty"`
	Repo         string    `yaml:"repo,omitempty" json:"repo,omitempty"`
	Ref          string    `yaml:"ref,omitempty" json:"ref,omitempty"`
	ConfiguredIn string    `yaml:"configuredIn,omitempty" json:"configuredIn,omitempty"`
	ConfiguredBy OriginRef `yaml:"configuredBy,omitempty" json:"configuredBy,omitempty"`
}

// OriginRef identifies the generator or transformer config of an Origin.
type OriginRef struct {
	APIVersion string `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
	Kind       string `yaml:"kind,omitempty" json:"kind,omitempty"`
	Name       string `yaml:"name,omitempty" json:"name,omitempty"`
	Namespace  string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
}

// Append returns a copy of o with p, a path relative to o's directory,
// joined to its path (cleaned, with forward slashes). A nil o reads as the
// build root.
//
// A git URL (a remote base, or an http(s) file URL that reads as one) is
// kustomize's exception: the copy names the repository and ref, and its
// path is the URL's directory in the repository (see
// giturl.GitSpec.OriginPath).
func (o *Origin) Append(p string) *Origin {
	var c Origin
	if o != nil {
		c = *o
	}
	if spec, err := giturl.ParseGitURL(p); err == nil {
		c.Repo, c.Ref, c.Path = spec.CloneURL(), spec.Ref, spec.OriginPath()
		return &c
	}
	c.Path = path.Join(c.Path, strings.ReplaceAll(p, "\\", "/"))
	return &c
}

// BuiltinOrigin is the origin kustomize gives a builtin generator or
// transformer configured by a field of the kustomization file named
// kustFile, in a kustomization whose origin is o.
func (o *Origin) BuiltinOrigin(kustFile, kind string) *Origin {
	var c Origin
	if o != nil {
		c.Repo, c.Ref = o.Repo, o.Ref
		c.ConfiguredIn = path.Join(o.Path, kustFile)
	} else {
		c.ConfiguredIn = kustFile
	}
	c.ConfiguredBy = OriginRef{APIVersion: "builtin", Kind: kind}
	return &c
}

// String returns o as the origin annotation writes it.
func (o *Origin) String() (string, error) {
	return marshalOriginYAML(o)
}

func marshalOriginYAML(v any) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// originOf returns the origin annotation of r, or nil when it has none.
func originOf(r *resource.Resource) (*Origin, error) {
	s, ok := r.Annotation(OriginAnnotation)
	if !ok {
		return nil, nil
	}
	var o Origin
	if err := yaml.Unmarshal([]byte(s), &o); err != nil {
		return nil, fmt.Errorf("%s: reading annotation %s: %w", r.ID(), OriginAnnotation, err)
	}
	return &o, nil
}

// OriginFromPluginConfig is the origin of what a generator or transformer
// plugin makes or changes: the file (ConfiguredIn) and identity
// (ConfiguredBy) of its config object, taken from the config's own origin
// annotation; nil when the config has none (origins are not being tracked).
func OriginFromPluginConfig(config *resource.Resource) (*Origin, error) {
	o, err := originOf(config)
	if err != nil || o == nil {
		return nil, err
	}
	return &Origin{
		Repo:         o.Repo,
		Ref:          o.Ref,
		ConfiguredIn: o.Path,
		ConfiguredBy: OriginRef{APIVersion: config.APIVersion(), Kind: config.Kind(), Name: config.Name(), Namespace: config.Namespace()},
	}, nil
}

// addOriginAnnotation gives every object of rs that has no origin
// annotation the origin o, as kustomize annotates a generator's output.
// Objects whose origin annotation cannot be read are left alone.
func addOriginAnnotation(rs *resource.List, o *Origin) error {
	if o == nil {
		return nil
	}
	val, err := o.String()
	if err != nil {
		return err
	}
	for i, r := range rs.All() {
		if _, ok := r.Annotation(OriginAnnotation); ok {
			continue
		}
		rs.Edit(i).SetAnnotation(OriginAnnotation, val)
	}
	return nil
}

// addTransformerAnnotation records that the transformer whose origin is o
// ran over every object of rs, as kustomize does after each transformer: an
// object without an origin is taken to be made by it and gets o as its
// origin; any other gets o appended to its transformations annotation.
func addTransformerAnnotation(rs *resource.List, o *Origin) error {
	if o == nil {
		return nil
	}
	val, err := o.String()
	if err != nil {
		return err
	}
	for i, r := range rs.All() {
		cur, err := originOf(r)
		if err != nil {
			return err
		}
		if cur == nil {
			rs.Edit(i).SetAnnotation(OriginAnnotation, val)
			continue
		}
		var list []*Origin
		if s, ok := r.Annotation(TransformationsAnnotation); ok {
			if err := yaml.Unmarshal([]byte(s), &list); err != nil {
				return fmt.Errorf("%s: reading annotation %s: %w", r.ID(), TransformationsAnnotation, err)
			}
		}
		list = append(list, o)
		s, err := marshalOriginYAML(list)
		if err != nil {
			return err
		}
		rs.Edit(i).SetAnnotation(TransformationsAnnotation, s)
	}
	return nil
}

// NewSetOrigin returns the stage that sets the origin annotation of every
// object to o, replacing any: kustomize's annotation of the objects read
// from one `resources` file.
func NewSetOrigin(o Origin) Stage { return &setOriginStage{origin: o} }

type setOriginStage struct{ origin Origin }

func (s *setOriginStage) Kind() string { return "OriginAnnotation" }

func (s *setOriginStage) Fingerprint() []byte { return Fingerprint(s.Kind(), s.origin) }

func (s *setOriginStage) Run(_ context.Context, rs *resource.List) error {
	val, err := s.origin.String()
	if err != nil {
		return err
	}
	for i := range rs.All() {
		rs.Edit(i).SetAnnotation(OriginAnnotation, val)
	}
	return nil
}

// TransformerWithOrigin returns t followed by the transformer annotation of
// o (see AddTransformerAnnotation); t itself when o is nil. Plugin
// transformers get their origin from OriginFromPluginConfig.
func TransformerWithOrigin(t Stage, o *Origin) Stage {
	if o == nil {
		return t
	}
	return &transformerOriginStage{inner: t, origin: *o}
}

type transformerOriginStage struct {
	inner  Stage
	origin Origin
}

func (s *transformerOriginStage) Kind() string { return s.inner.Kind() }

// withMergeSchema gives the wrapped stage a merge schema (WithMergeSchema).
func (s *transformerOriginStage) withMergeSchema(schema *smp.Schema) Stage {
	c := *s
	c.inner = WithMergeSchema(s.inner, schema)
	return &c
}

// Unwrap returns the wrapped transformer.
func (s *transformerOriginStage) Unwrap() Stage { return s.inner }

func (s *transformerOriginStage) Fingerprint() []byte {
	return Fingerprint("TransformerWithOrigin", struct {
		Kind   string
		Inner  []byte
		Origin Origin
	}{s.inner.Kind(), s.inner.Fingerprint(), s.origin})
}

func (s *transformerOriginStage) Run(ctx context.Context, rs *resource.List) error {
	if err := s.inner.Run(ctx, rs); err != nil {
		return err
	}
	if err := addTransformerAnnotation(rs, &s.origin); err != nil {
		return fmt.Errorf("adding transformer annotations for %s: %w", s.inner.Kind(), err)
	}
	return nil
}

// originGenerator is a generator that can annotate what it makes before it
// merges it into the list (as kustomize does: the origin is set on the
// generator's output, before merge or replace behaviors apply).
type originGenerator interface {
	withOrigin(o *Origin) (Stage, error)
}

// GeneratorWithOrigin returns the generator g whose objects get the origin
// o when they have none; g itself when o is nil. A generator of this
// package annotates its object before merging it; any other generator (a
// plugin) is run on an empty list and its output is annotated, then added
// to the list as kustomize absorbs generated objects. Plugin generators get
// their origin from OriginFromPluginConfig.
func GeneratorWithOrigin(g Stage, o *Origin) (Stage, error) {
	if o == nil {
		return g, nil
	}
	if og, ok := g.(originGenerator); ok {
		return og.withOrigin(o)
	}
	if og, ok := g.(OriginGenerator); ok {
		return og.WithOrigin(o)
	}
	return &generatorOriginStage{inner: g, origin: *o}, nil
}

func (s *generatorStage) withOrigin(o *Origin) (Stage, error) {
	if _, ok := s.obj.Annotation(OriginAnnotation); ok {
		return s, nil
	}
	val, err := o.String()
	if err != nil {
		return nil, err
	}
	obj := s.obj.Clone()
	obj.SetAnnotation(OriginAnnotation, val)
	obj.Freeze()
	return &generatorStage{kind: s.kind, obj: obj, release: s.release}, nil
}

// OriginGenerator is a generator of another package (an external plugin)
// that annotates what it makes itself, before merge behaviors apply, so
// that GeneratorWithOrigin need not run it on an empty list.
type OriginGenerator interface {
	// WithOrigin returns the generator giving its objects the origin o
	// when they have none.
	WithOrigin(o *Origin) (Stage, error)
}

type generatorOriginStage struct {
	inner  Stage
	origin Origin
}

func (s *generatorOriginStage) Kind() string { return s.inner.Kind() }

// Unwrap returns the wrapped generator.
func (s *generatorOriginStage) Unwrap() Stage { return s.inner }

func (s *generatorOriginStage) Fingerprint() []byte {
	return Fingerprint("GeneratorWithOrigin", struct {
		Kind   string
		Inner  []byte
		Origin Origin
	}{s.inner.Kind(), s.inner.Fingerprint(), s.origin})
}

func (s *generatorOriginStage) Run(ctx context.Context, rs *resource.List) error {
	made := resource.NewList()
	if err := s.inner.Run(ctx, made); err != nil {
		return err
	}
	if err := addOriginAnnotation(made, &s.origin); err != nil {
		return fmt.Errorf("adding origin annotations for generator %s: %w", s.inner.Kind(), err)
	}
	for _, r := range made.All() {
		if err := absorb(rs, r.Mutable(), Kustomize582); err != nil {
			return fmt.Errorf("merging from generator %s: %w", s.inner.Kind(), err)
		}
	}
	return nil
}
