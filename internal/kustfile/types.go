package kustfile

// Kustomization mirrors kustomize's Kustomization type (api v0.21.2): the
// same fields, JSON names and omitempty rules, so that decoding (strict,
// keys matched without regard to case) and encoding give what kustomize's
// give.
type Kustomization struct {
	APIVersion                  string             `json:"apiVersion,omitempty"`
	Kind                        string             `json:"kind,omitempty"`
	MetaData                    *ObjectMeta        `json:"metadata,omitempty"`
	OpenAPI                     map[string]string  `json:"openapi,omitempty"`
	NamePrefix                  string             `json:"namePrefix,omitempty"`
	NameSuffix                  string             `json:"nameSuffix,omitempty"`
	Namespace                   string             `json:"namespace,omitempty"`
	CommonLabels                map[string]string  `json:"commonLabels,omitempty"`
	Labels                      []Label            `json:"labels,omitempty"`
	CommonAnnotations           map[string]string  `json:"commonAnnotations,omitempty"`
	PatchesStrategicMerge       []string           `json:"patchesStrategicMerge,omitempty"`
	PatchesJson6902             []Patch            `json:"patchesJson6902,omitempty"`
	Patches                     []Patch            `json:"patches,omitempty"`
	Images                      []Image            `json:"images,omitempty"`
	ImageTags                   []Image            `json:"imageTags,omitempty"`
	Replacements                []ReplacementField `json:"replacements,omitempty"`
	Replicas                    []Replica          `json:"replicas,omitempty"`
	Vars                        []Var              `json:"vars,omitempty"`
	SortOptions                 *SortOptions       `json:"sortOptions,omitempty"`
	Resources                   []string           `json:"resources,omitempty"`
	Components                  []string           `json:"components,omitempty"`
	Crds                        []string           `json:"crds,omitempty"`
	Bases                       []string           `json:"bases,omitempty"`
	ConfigMapGenerator          []ConfigMapArgs    `json:"configMapGenerator,omitempty"`
	SecretGenerator             []SecretArgs       `json:"secretGenerator,omitempty"`
	HelmGlobals                 *HelmGlobals       `json:"helmGlobals,omitempty"`
	HelmCharts                  []HelmChart        `json:"helmCharts,omitempty"`
	HelmChartInflationGenerator []HelmChartArgs    `json:"helmChartInflationGenerator,omitempty"`
	GeneratorOptions            *GeneratorOptions  `json:"generatorOptions,omitempty"`
	Configurations              []string           `json:"configurations,omitempty"`
	Generators                  []string           `json:"generators,omitempty"`
	Transformers                []string           `json:"transformers,omitempty"`
	Validators                  []string           `json:"validators,omitempty"`
	BuildMetadata               []string           `json:"buildMetadata,omitempty"`
}

// Label is one entry of the labels field.
type Label struct {
	Pairs                       map[string]string `json:"pairs,omitempty"`
	IncludeSelectors            bool              `json:"includeSelectors,omitempty"`
	IncludeTemplates            bool              `json:"includeTemplates,omitempty"`
	IncludeVolumeClaimTemplates bool              `json:"includeVolumeClaimTemplates,omitempty"`
	FieldSpecs                  []FieldSpec       `json:"fields,omitempty"`
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

// HelmGlobals are the settings shared by a kustomization's helm charts.
type HelmGlobals struct {
	ChartHome  string `json:"chartHome,omitempty"`
	ConfigHome string `json:"configHome,omitempty"`
}

// HelmChart is one entry of helmCharts.
type HelmChart struct {
	Name                  string                 `json:"name,omitempty"`
	Version               string                 `json:"version,omitempty"`
	Repo                  string                 `json:"repo,omitempty"`
	ReleaseName           string                 `json:"releaseName,omitempty"`
	Namespace             string                 `json:"namespace,omitempty"`
	AdditionalValuesFiles []string               `json:"additionalValuesFiles,omitempty"`
	ValuesFile            string                 `json:"valuesFile,omitempty"`
	ValuesInline          map[string]interface{} `json:"valuesInline,omitempty"`
	ValuesMerge           string                 `json:"valuesMerge,omitempty"`
	IncludeCRDs           bool                   `json:"includeCRDs,omitempty"`
	SkipHooks             bool                   `json:"skipHooks,omitempty"`
	ApiVersions           []string               `json:"apiVersions,omitempty"`
	KubeVersion           string                 `json:"kubeVersion,omitempty"`
	NameTemplate          string                 `json:"nameTemplate,omitempty"`
	SkipTests             bool                   `json:"skipTests,omitempty"`
	Debug                 bool                   `json:"debug,omitempty"`
	Devel                 bool                   `json:"devel,omitempty"`
}

// HelmChartArgs is one entry of the deprecated helmChartInflationGenerator.
type HelmChartArgs struct {
	ChartName        string                 `json:"chartName,omitempty"`
	ChartVersion     string                 `json:"chartVersion,omitempty"`
	ChartRepoURL     string                 `json:"chartRepoUrl,omitempty"`
	ChartHome        string                 `json:"chartHome,omitempty"`
	ChartRepoName    string                 `json:"chartRepoName,omitempty"`
	HelmBin          string                 `json:"helmBin,omitempty"`
	HelmHome         string                 `json:"helmHome,omitempty"`
	Values           string                 `json:"values,omitempty"`
	ValuesLocal      map[string]interface{} `json:"valuesLocal,omitempty"`
	ValuesMerge      string                 `json:"valuesMerge,omitempty"`
	ReleaseName      string                 `json:"releaseName,omitempty"`
	ReleaseNamespace string                 `json:"releaseNamespace,omitempty"`
	ExtraArgs        []string               `json:"extraArgs,omitempty"`
}

// ObjectMeta is the kustomization's metadata.
type ObjectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SortOptions is the sortOptions field.
type SortOptions struct {
	Order             string             `json:"order,omitempty"`
	LegacySortOptions *LegacySortOptions `json:"legacySortOptions,omitempty"`
}

// LegacySortOptions are the kinds legacy order puts first and last.
type LegacySortOptions struct {
	OrderFirst []string `json:"orderFirst"`
	OrderLast  []string `json:"orderLast"`
}

// FieldSpec names a field of a kind (labels' fields).
type FieldSpec struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Path               string `json:"path,omitempty"`
	CreateIfNotPresent bool   `json:"create,omitempty"`
}

// Var is one entry of the deprecated vars field.
type Var struct {
	Name     string        `json:"name"`
	ObjRef   VarTarget     `json:"objref"`
	FieldRef FieldSelector `json:"fieldref,omitempty"`
}

// VarTarget is the object a var refers to.
type VarTarget struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Group      string `json:"group,omitempty"`
	Version    string `json:"version,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

// FieldSelector is a var's field.
type FieldSelector struct {
	FieldPath string `json:"fieldPath,omitempty"`
}

// ReplacementField is one entry of replacements: inline, or a file.
type ReplacementField struct {
	Source      *SourceSelector   `json:"source,omitempty"`
	Targets     []*TargetSelector `json:"targets,omitempty"`
	SourceValue *string           `json:"sourceValue,omitempty"`
	Path        string            `json:"path,omitempty"`
}

// SourceSelector is a replacement's source.
type SourceSelector struct {
	Group     string        `json:"group,omitempty"`
	Version   string        `json:"version,omitempty"`
	Kind      string        `json:"kind,omitempty"`
	Name      string        `json:"name,omitempty"`
	Namespace string        `json:"namespace,omitempty"`
	FieldPath string        `json:"fieldPath,omitempty"`
	Options   *FieldOptions `json:"options,omitempty"`
}

// TargetSelector is one of a replacement's targets.
type TargetSelector struct {
	Select     *Selector     `json:"select"`
	Reject     []*Selector   `json:"reject,omitempty"`
	FieldPaths []string      `json:"fieldPaths,omitempty"`
	Options    *FieldOptions `json:"options,omitempty"`
}

// FieldOptions are a replacement's field options.
type FieldOptions struct {
	Delimiter string `json:"delimiter,omitempty"`
	Index     int    `json:"index,omitempty"`
	Encoding  string `json:"encoding,omitempty"`
	Create    bool   `json:"create,omitempty"`
}
