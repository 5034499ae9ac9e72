package loaders

// The types below mirror the kustomization file format of kustomize v5.8.0
// field for field (the JSON names are the file's keys), so that strict
// decoding accepts exactly what kustomize accepts.

// Kustomization is a parsed kustomization.yaml (kind Kustomization or
// Component).
type Kustomization struct {
	Kind       string      `json:"kind,omitempty"`
	APIVersion string      `json:"apiVersion,omitempty"`
	MetaData   *ObjectMeta `json:"metadata,omitempty"`

	OpenAPI           map[string]string `json:"openapi,omitempty"`
	NamePrefix        string            `json:"namePrefix,omitempty"`
	NameSuffix        string            `json:"nameSuffix,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	CommonLabels      map[string]string `json:"commonLabels,omitempty"`
	Labels            []Label           `json:"labels,omitempty"`
	CommonAnnotations map[string]string `json:"commonAnnotations,omitempty"`

	PatchesStrategicMerge []string           `json:"patchesStrategicMerge,omitempty"`
	PatchesJson6902       []Patch            `json:"patchesJson6902,omitempty"`
	Patches               []Patch            `json:"patches,omitempty"`
	Images                []Image            `json:"images,omitempty"`
	ImageTags             []Image            `json:"imageTags,omitempty"`
	Replacements          []ReplacementField `json:"replacements,omitempty"`
	Replicas              []Replica          `json:"replicas,omitempty"`
	Vars                  []Var              `json:"vars,omitempty"`
	SortOptions           *SortOptions       `json:"sortOptions,omitempty"`

	Resources  []string `json:"resources,omitempty"`
	Components []string `json:"components,omitempty"`
	Crds       []string `json:"crds,omitempty"`
	Bases      []string `json:"bases,omitempty"`

	ConfigMapGenerator          []GeneratorArgs   `json:"configMapGenerator,omitempty"`
	SecretGenerator             []GeneratorArgs   `json:"secretGenerator,omitempty"`
	HelmGlobals                 *HelmGlobals      `json:"helmGlobals,omitempty"`
	HelmCharts                  []HelmChart       `json:"helmCharts,omitempty"`
	HelmChartInflationGenerator []HelmChartArgs   `json:"helmChartInflationGenerator,omitempty"`
	GeneratorOptions            *GeneratorOptions `json:"generatorOptions,omitempty"`

	Configurations []string `json:"configurations,omitempty"`
	Generators     []string `json:"generators,omitempty"`
	Transformers   []string `json:"transformers,omitempty"`
	Validators     []string `json:"validators,omitempty"`
	BuildMetadata  []string `json:"buildMetadata,omitempty"`
}

// ObjectMeta is the metadata of a kustomization file. Kustomize ignores it
// when building.
type ObjectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// FieldSpec is one place in an object a transformer writes to.
type FieldSpec struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Path               string `json:"path,omitempty"`
	CreateIfNotPresent bool   `json:"create,omitempty"`
}

// Label is an entry of the labels field.
type Label struct {
	Pairs            map[string]string `json:"pairs,omitempty"`
	IncludeSelectors bool              `json:"includeSelectors,omitempty"`
	IncludeTemplates bool              `json:"includeTemplates,omitempty"`
	// IncludeVolumeClaimTemplates adds the labels to the StatefulSet
	// volumeClaimTemplates too (kustomize v5.8.1+).
	IncludeVolumeClaimTemplates bool        `json:"includeVolumeClaimTemplates,omitempty"`
	FieldSpecs                  []FieldSpec `json:"fields,omitempty"`
}

// Image is an entry of the images field.
type Image struct {
	Name      string `json:"name,omitempty"`
	NewName   string `json:"newName,omitempty"`
	TagSuffix string `json:"tagSuffix,omitempty"`
	NewTag    string `json:"newTag,omitempty"`
	Digest    string `json:"digest,omitempty"`
}

// Replica is an entry of the replicas field.
type Replica struct {
	Name  string `json:"name,omitempty"`
	Count int64  `json:"count"`
}

// Selector picks resources by ID fields (regular expressions) and label or
// annotation selectors.
type Selector struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
}

// PatchOptions are the options of a patch.
type PatchOptions struct {
	AllowNameChange bool `json:"allowNameChange,omitempty"`
	AllowKindChange bool `json:"allowKindChange,omitempty"`
}

// Patch is an entry of patches or patchesJson6902.
type Patch struct {
	Path    string        `json:"path,omitempty"`
	Patch   string        `json:"patch,omitempty"`
	Target  *Selector     `json:"target,omitempty"`
	Options *PatchOptions `json:"options,omitempty"`
}

// VarTarget is the object a var reads from.
type VarTarget struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Group      string `json:"group,omitempty"`
	Version    string `json:"version,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

// FieldSelector names the field a var reads.
type FieldSelector struct {
	FieldPath string `json:"fieldPath,omitempty"`
}

// Var is an entry of the (deprecated) vars field.
type Var struct {
	Name     string        `json:"name"`
	ObjRef   VarTarget     `json:"objref"`
	FieldRef FieldSelector `json:"fieldref,omitempty"`
}

// FieldOptions refine how a replacement reads or writes a field.
type FieldOptions struct {
	Delimiter string `json:"delimiter,omitempty"`
	Index     int    `json:"index,omitempty"`
	Encoding  string `json:"encoding,omitempty"`
	Create    bool   `json:"create,omitempty"`
}

// SourceSelector is the source of a replacement.
type SourceSelector struct {
	Group     string        `json:"group,omitempty"`
	Version   string        `json:"version,omitempty"`
	Kind      string        `json:"kind,omitempty"`
	Name      string        `json:"name,omitempty"`
	Namespace string        `json:"namespace,omitempty"`
	FieldPath string        `json:"fieldPath,omitempty"`
	Options   *FieldOptions `json:"options,omitempty"`
}

// TargetSelector is one target of a replacement.
type TargetSelector struct {
	Select     *Selector     `json:"select"`
	Reject     []*Selector   `json:"reject,omitempty"`
	FieldPaths []string      `json:"fieldPaths,omitempty"`
	Options    *FieldOptions `json:"options,omitempty"`
}

// Replacement copies a value from a source field to target fields.
type Replacement struct {
	Source      *SourceSelector   `json:"source,omitempty"`
	Targets     []*TargetSelector `json:"targets,omitempty"`
	SourceValue *string           `json:"sourceValue,omitempty"`
}

// ReplacementField is an entry of the replacements field: inline, or a path
// to a file of replacements.
type ReplacementField struct {
	Replacement
	Path string `json:"path,omitempty"`
}

// SortOptions is the sortOptions field.
type SortOptions struct {
	Order             string             `json:"order,omitempty"`
	LegacySortOptions *LegacySortOptions `json:"legacySortOptions,omitempty"`
}

// LegacySortOptions customise the legacy order.
type LegacySortOptions struct {
	OrderFirst []string `json:"orderFirst"`
	OrderLast  []string `json:"orderLast"`
}

// GeneratorOptions modify generated ConfigMaps and Secrets.
type GeneratorOptions struct {
	Labels                map[string]string `json:"labels,omitempty"`
	Annotations           map[string]string `json:"annotations,omitempty"`
	DisableNameSuffixHash bool              `json:"disableNameSuffixHash,omitempty"`
	Immutable             bool              `json:"immutable,omitempty"`
}

// GeneratorArgs is an entry of configMapGenerator or secretGenerator (Type
// applies to secrets only).
type GeneratorArgs struct {
	Namespace string            `json:"namespace,omitempty"`
	Name      string            `json:"name,omitempty"`
	Behavior  string            `json:"behavior,omitempty"`
	Literals  []string          `json:"literals,omitempty"`
	Files     []string          `json:"files,omitempty"`
	Envs      []string          `json:"envs,omitempty"`
	Env       string            `json:"env,omitempty"`
	Options   *GeneratorOptions `json:"options,omitempty"`
	Type      string            `json:"type,omitempty"`
}

// HelmGlobals are settings shared by all helm charts of a kustomization.
type HelmGlobals struct {
	ChartHome  string `json:"chartHome,omitempty"`
	ConfigHome string `json:"configHome,omitempty"`
}

// HelmChart is an entry of helmCharts.
type HelmChart struct {
	Name                  string         `json:"name,omitempty"`
	Version               string         `json:"version,omitempty"`
	Repo                  string         `json:"repo,omitempty"`
	ReleaseName           string         `json:"releaseName,omitempty"`
	Namespace             string         `json:"namespace,omitempty"`
	AdditionalValuesFiles []string       `json:"additionalValuesFiles,omitempty"`
	ValuesFile            string         `json:"valuesFile,omitempty"`
	ValuesInline          map[string]any `json:"valuesInline,omitempty"`
	ValuesMerge           string         `json:"valuesMerge,omitempty"`
	IncludeCRDs           bool           `json:"includeCRDs,omitempty"`
	SkipHooks             bool           `json:"skipHooks,omitempty"`
	ApiVersions           []string       `json:"apiVersions,omitempty"`
	KubeVersion           string         `json:"kubeVersion,omitempty"`
	NameTemplate          string         `json:"nameTemplate,omitempty"`
	SkipTests             bool           `json:"skipTests,omitempty"`
	Debug                 bool           `json:"debug,omitempty"`
	Devel                 bool           `json:"devel,omitempty"`
}

// HelmChartArgs is an entry of the deprecated helmChartInflationGenerator.
type HelmChartArgs struct {
	ChartName        string         `json:"chartName,omitempty"`
	ChartVersion     string         `json:"chartVersion,omitempty"`
	ChartRepoURL     string         `json:"chartRepoUrl,omitempty"`
	ChartHome        string         `json:"chartHome,omitempty"`
	ChartRepoName    string         `json:"chartRepoName,omitempty"`
	HelmBin          string         `json:"helmBin,omitempty"`
	HelmHome         string         `json:"helmHome,omitempty"`
	Values           string         `json:"values,omitempty"`
	ValuesLocal      map[string]any `json:"valuesLocal,omitempty"`
	ValuesMerge      string         `json:"valuesMerge,omitempty"`
	ReleaseName      string         `json:"releaseName,omitempty"`
	ReleaseNamespace string         `json:"releaseNamespace,omitempty"`
	ExtraArgs        []string       `json:"extraArgs,omitempty"`
}
