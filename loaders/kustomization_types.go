package loaders

// The types below mirror the kustomization file format of kustomize v5.8.0
// field for field (the JSON names are the file's keys), so that strict
// decoding accepts exactly what kustomize accepts. They are kpipe's one
// kustomization schema: the build reads them, the stages take them as
// their configs (package stages), and `kpipe edit` rewrites files over
// them (internal/kustfile).

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

// Image is an entry of the images field: which image to change and how.
type Image struct {
	// Name is the image name to match, without tag or digest. kustomize
	// reads it as a regular expression (so "." matches any character).
	Name string `json:"name,omitempty"`
	// NewName replaces the name.
	NewName string `json:"newName,omitempty"`
	// TagSuffix is appended to the tag (and drops the digest) when neither
	// NewTag nor Digest is set.
	TagSuffix string `json:"tagSuffix,omitempty"`
	// NewTag replaces the tag, and drops the digest unless Digest is set.
	NewTag string `json:"newTag,omitempty"`
	// Digest replaces the digest, and drops the tag unless NewTag is set.
	Digest string `json:"digest,omitempty"`
}

// Replica is an entry of the replicas field: the name of the objects to
// change and their new replica count.
type Replica struct {
	Name  string `json:"name,omitempty"`
	Count int64  `json:"count"`
}

// Selector picks the objects a patch (or replacement) applies to:
// kustomize's target selector. Group, version, kind, name and namespace are
// regular expressions matched against the whole value; an empty one matches
// anything. Name and namespace match either the original or the current
// value. The label and annotation selectors use Kubernetes' selector syntax.
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

// VarTarget is the object a var reads from (by its name as written, before
// any prefix or suffix). APIVersion, when given, sets the group and
// version.
type VarTarget struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Group      string `json:"group,omitempty"`
	Version    string `json:"version,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

// FieldSelector names the field a var reads, as a replacement field path
// (metadata.name by default).
type FieldSelector struct {
	FieldPath string `json:"fieldPath,omitempty"`
}

// Var is an entry of the (deprecated) vars field: the name that $(NAME)
// stands for, the object it is read from and the field read.
type Var struct {
	Name     string        `json:"name"`
	ObjRef   VarTarget     `json:"objref"`
	FieldRef FieldSelector `json:"fieldref,omitempty"`
}

// FieldOptions refine how a replacement reads or writes a field: with a
// delimiter, a source gives only part Index of its text split on it, and a
// target has only part Index replaced (a negative Index adds a part in
// front, one past the end adds one at the end). Create makes missing target
// fields. Encoding is accepted and ignored, as in kustomize.
type FieldOptions struct {
	Delimiter string `json:"delimiter,omitempty"`
	Index     int    `json:"index,omitempty"`
	Encoding  string `json:"encoding,omitempty"`
	Create    bool   `json:"create,omitempty"`
}

// SourceSelector is the source of a replacement: the object it reads (by
// exact group, version, kind, name and namespace, any of them left out
// matching anything; the object's earlier names count too) and the field
// it reads (metadata.name by default).
type SourceSelector struct {
	Group     string        `json:"group,omitempty"`
	Version   string        `json:"version,omitempty"`
	Kind      string        `json:"kind,omitempty"`
	Name      string        `json:"name,omitempty"`
	Namespace string        `json:"namespace,omitempty"`
	FieldPath string        `json:"fieldPath,omitempty"`
	Options   *FieldOptions `json:"options,omitempty"`
}

// TargetSelector is one target of a replacement: it selects objects,
// rejects some of them, and names the fields to write (metadata.name by
// default).
type TargetSelector struct {
	Select     *Selector     `json:"select"`
	Reject     []*Selector   `json:"reject,omitempty"`
	FieldPaths []string      `json:"fieldPaths,omitempty"`
	Options    *FieldOptions `json:"options,omitempty"`
}

// Replacement copies one value (a field of a source object, or a fixed
// sourceValue) into fields of the objects its targets select.
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

// LegacySortOptions customise the legacy order: kinds listed in OrderFirst
// come first in that order, kinds in OrderLast come last.
type LegacySortOptions struct {
	OrderFirst []string `json:"orderFirst"`
	OrderLast  []string `json:"orderLast"`
}

// GeneratorOptions modify generated ConfigMaps and Secrets: the
// kustomization's generatorOptions, or an entry's options.
type GeneratorOptions struct {
	Labels                map[string]string `json:"labels,omitempty"`
	Annotations           map[string]string `json:"annotations,omitempty"`
	DisableNameSuffixHash bool              `json:"disableNameSuffixHash,omitempty"`
	Immutable             bool              `json:"immutable,omitempty"`
}

// GeneratorArgs is an entry of configMapGenerator or secretGenerator (Type
// applies to secrets only).
type GeneratorArgs struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Behavior is create (or empty), merge or replace.
	Behavior string `json:"behavior,omitempty"`
	// Literals are key=value pairs; quotes around the value are removed.
	Literals []string `json:"literals,omitempty"`
	// Files are paths (the key is the file's base name) or key=path.
	Files []string `json:"files,omitempty"`
	// Envs are env files: one key=value per line, # comments. Env, the
	// deprecated single one, is moved into Envs when the file is read.
	Envs    []string          `json:"envs,omitempty"`
	Env     string            `json:"env,omitempty"`
	Options *GeneratorOptions `json:"options,omitempty"`
	// Type is a Secret's type (default Opaque); ConfigMaps have none.
	Type string `json:"type,omitempty"`
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
