package kustfile

import "encoding/json"

// Kustomization mirrors the fields of kustomize's Kustomization type
// (api v0.21.2) with the same JSON names. Fields that kpipe's edit commands
// change are typed; the others are kept as raw JSON, which round-trips them
// unchanged (the YAML writer sorts keys, as kustomize's does).
type Kustomization struct {
	APIVersion                  string            `json:"apiVersion,omitempty"`
	Kind                        string            `json:"kind,omitempty"`
	MetaData                    json.RawMessage   `json:"metadata,omitempty"`
	OpenAPI                     json.RawMessage   `json:"openapi,omitempty"`
	NamePrefix                  string            `json:"namePrefix,omitempty"`
	NameSuffix                  string            `json:"nameSuffix,omitempty"`
	Namespace                   string            `json:"namespace,omitempty"`
	CommonLabels                map[string]string `json:"commonLabels,omitempty"`
	Labels                      []Label           `json:"labels,omitempty"`
	CommonAnnotations           map[string]string `json:"commonAnnotations,omitempty"`
	PatchesStrategicMerge       []string          `json:"patchesStrategicMerge,omitempty"`
	PatchesJson6902             []Patch           `json:"patchesJson6902,omitempty"`
	Patches                     []Patch           `json:"patches,omitempty"`
	Images                      []Image           `json:"images,omitempty"`
	ImageTags                   []Image           `json:"imageTags,omitempty"`
	Replacements                []json.RawMessage `json:"replacements,omitempty"`
	Replicas                    []Replica         `json:"replicas,omitempty"`
	Vars                        []json.RawMessage `json:"vars,omitempty"`
	SortOptions                 json.RawMessage   `json:"sortOptions,omitempty"`
	Resources                   []string          `json:"resources,omitempty"`
	Components                  []string          `json:"components,omitempty"`
	Crds                        []string          `json:"crds,omitempty"`
	Bases                       []string          `json:"bases,omitempty"`
	ConfigMapGenerator          []ConfigMapArgs   `json:"configMapGenerator,omitempty"`
	SecretGenerator             []SecretArgs      `json:"secretGenerator,omitempty"`
	HelmGlobals                 json.RawMessage   `json:"helmGlobals,omitempty"`
	HelmCharts                  []json.RawMessage `json:"helmCharts,omitempty"`
	HelmChartInflationGenerator []json.RawMessage `json:"helmChartInflationGenerator,omitempty"`
	GeneratorOptions            *GeneratorOptions `json:"generatorOptions,omitempty"`
	Configurations              []string          `json:"configurations,omitempty"`
	Generators                  []string          `json:"generators,omitempty"`
	Transformers                []string          `json:"transformers,omitempty"`
	Validators                  []string          `json:"validators,omitempty"`
	BuildMetadata               []string          `json:"buildMetadata,omitempty"`
}

// Label is one entry of the labels field.
type Label struct {
	Pairs                       map[string]string `json:"pairs,omitempty"`
	IncludeSelectors            bool              `json:"includeSelectors,omitempty"`
	IncludeTemplates            bool              `json:"includeTemplates,omitempty"`
	IncludeVolumeClaimTemplates bool              `json:"includeVolumeClaimTemplates,omitempty"`
	FieldSpecs                  []json.RawMessage `json:"fields,omitempty"`
}

// Patch is one entry of the patches (or patchesJson6902) field.
type Patch struct {
	Path    string     `json:"path,omitempty"`
	Patch   string     `json:"patch,omitempty"`
	Target  *Selector  `json:"target,omitempty"`
	Options *PatchArgs `json:"options,omitempty"`
}

// Equals reports whether two patches are the same, as kustomize compares
// them for `add patch` and `remove patch`.
func (p Patch) Equals(o Patch) bool {
	targetEqual := p.Target == o.Target || (p.Target != nil && o.Target != nil && *p.Target == *o.Target)
	optionsEqual := p.Options == o.Options || (p.Options != nil && o.Options != nil && *p.Options == *o.Options)
	return p.Path == o.Path && p.Patch == o.Patch && targetEqual && optionsEqual
}

// Selector selects the resources a patch applies to.
type Selector struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
}

// PatchArgs are a patch's options.
type PatchArgs struct {
	AllowNameChange bool `json:"allowNameChange,omitempty"`
	AllowKindChange bool `json:"allowKindChange,omitempty"`
}

// GeneratorOptions are the options of generated ConfigMaps and Secrets.
type GeneratorOptions struct {
	Labels                map[string]string `json:"labels,omitempty"`
	Annotations           map[string]string `json:"annotations,omitempty"`
	DisableNameSuffixHash bool              `json:"disableNameSuffixHash,omitempty"`
	Immutable             bool              `json:"immutable,omitempty"`
}

// GeneratorArgs are the fields ConfigMap and Secret generators share.
type GeneratorArgs struct {
	Namespace      string            `json:"namespace,omitempty"`
	Name           string            `json:"name,omitempty"`
	Behavior       string            `json:"behavior,omitempty"`
	LiteralSources []string          `json:"literals,omitempty"`
	FileSources    []string          `json:"files,omitempty"`
	EnvSources     []string          `json:"envs,omitempty"`
	EnvSource      string            `json:"env,omitempty"`
	Options        *GeneratorOptions `json:"options,omitempty"`
}

// ConfigMapArgs is one entry of configMapGenerator.
type ConfigMapArgs struct {
	GeneratorArgs
}

// SecretArgs is one entry of secretGenerator.
type SecretArgs struct {
	GeneratorArgs
	Type string `json:"type,omitempty"`
}

// Image is one entry of the images field.
type Image struct {
	Name      string `json:"name,omitempty"`
	NewName   string `json:"newName,omitempty"`
	TagSuffix string `json:"tagSuffix,omitempty"`
	NewTag    string `json:"newTag,omitempty"`
	Digest    string `json:"digest,omitempty"`
}

// Replica is one entry of the replicas field.
type Replica struct {
	Name  string `json:"name,omitempty"`
	Count int64  `json:"count"`
}
