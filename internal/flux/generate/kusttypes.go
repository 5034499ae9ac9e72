package generate

// The types below mirror kustomize v5.8.1's types.Kustomization
// (sigs.k8s.io/kustomize/api v0.21.1, the version Flux links) field for
// field, with the same Go shapes (embedded structs included: sigs.k8s.io/yaml
// coerces a number into a string field only when the field is not
// promoted from an embedded struct), so that decoding a kustomization file
// into them and encoding it back keeps, drops and coerces what Flux's
// generator does. v5.8.2 fields (labels[].includeVolumeClaimTemplates) are
// not there: Flux drops them.

type kustomization struct {
	kTypeMeta `json:",inline"`

	MetaData *kObjectMeta `json:"metadata,omitempty"`

	OpenAPI           map[string]string `json:"openapi,omitempty"`
	NamePrefix        string            `json:"namePrefix,omitempty"`
	NameSuffix        string            `json:"nameSuffix,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	CommonLabels      map[string]string `json:"commonLabels,omitempty"`
	Labels            []kLabel          `json:"labels,omitempty"`
	CommonAnnotations map[string]string `json:"commonAnnotations,omitempty"`

	PatchesStrategicMerge []string            `json:"patchesStrategicMerge,omitempty"`
	PatchesJson6902       []kPatch            `json:"patchesJson6902,omitempty"`
	Patches               []kPatch            `json:"patches,omitempty"`
	Images                []kImage            `json:"images,omitempty"`
	ImageTags             []kImage            `json:"imageTags,omitempty"`
	Replacements          []kReplacementField `json:"replacements,omitempty"`
	Replicas              []kReplica          `json:"replicas,omitempty"`
	Vars                  []kVar              `json:"vars,omitempty"`
	SortOptions           *kSortOptions       `json:"sortOptions,omitempty"`

	Resources  []string `json:"resources,omitempty"`
	Components []string `json:"components,omitempty"`
	Crds       []string `json:"crds,omitempty"`
	Bases      []string `json:"bases,omitempty"`

	ConfigMapGenerator          []kConfigMapArgs   `json:"configMapGenerator,omitempty"`
	SecretGenerator             []kSecretArgs      `json:"secretGenerator,omitempty"`
	HelmGlobals                 *kHelmGlobals      `json:"helmGlobals,omitempty"`
	HelmCharts                  []kHelmChart       `json:"helmCharts,omitempty"`
	HelmChartInflationGenerator []kHelmChartArgs   `json:"helmChartInflationGenerator,omitempty"`
	GeneratorOptions            *kGeneratorOptions `json:"generatorOptions,omitempty"`

	Configurations []string `json:"configurations,omitempty"`
	Generators     []string `json:"generators,omitempty"`
	Transformers   []string `json:"transformers,omitempty"`
	Validators     []string `json:"validators,omitempty"`
	BuildMetadata  []string `json:"buildMetadata,omitempty"`
}

type kTypeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

type kObjectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type kGvk struct {
	Group   string `json:"group,omitempty"`
	Version string `json:"version,omitempty"`
	Kind    string `json:"kind,omitempty"`
}

type kResID struct {
	kGvk      `json:",inline,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

type kFieldSpec struct {
	kGvk               `json:",inline,omitempty"`
	Path               string `json:"path,omitempty"`
	CreateIfNotPresent bool   `json:"create,omitempty"`
}

type kLabel struct {
	Pairs            map[string]string `json:"pairs,omitempty"`
	IncludeSelectors bool              `json:"includeSelectors,omitempty"`
	IncludeTemplates bool              `json:"includeTemplates,omitempty"`
	FieldSpecs       []kFieldSpec      `json:"fields,omitempty"`
}

type kSelector struct {
	kResID             `json:",inline,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
}

type kPatchArgs struct {
	AllowNameChange bool `json:"allowNameChange,omitempty"`
	AllowKindChange bool `json:"allowKindChange,omitempty"`
}

type kPatch struct {
	Path    string      `json:"path,omitempty"`
	Patch   string      `json:"patch,omitempty"`
	Target  *kSelector  `json:"target,omitempty"`
	Options *kPatchArgs `json:"options,omitempty"`
}

type kImage struct {
	Name      string `json:"name,omitempty"`
	NewName   string `json:"newName,omitempty"`
	TagSuffix string `json:"tagSuffix,omitempty"`
	NewTag    string `json:"newTag,omitempty"`
	Digest    string `json:"digest,omitempty"`
}

type kReplacementField struct {
	kReplacement `json:",inline,omitempty"`
	Path         string `json:"path,omitempty"`
}

type kReplacement struct {
	Source      *kSourceSelector   `json:"source,omitempty"`
	Targets     []*kTargetSelector `json:"targets,omitempty"`
	SourceValue *string            `json:"sourceValue,omitempty"`
}

type kSourceSelector struct {
	kResID    `json:",inline,omitempty"`
	FieldPath string         `json:"fieldPath,omitempty"`
	Options   *kFieldOptions `json:"options,omitempty"`
}

type kTargetSelector struct {
	Select     *kSelector     `json:"select"`
	Reject     []*kSelector   `json:"reject,omitempty"`
	FieldPaths []string       `json:"fieldPaths,omitempty"`
	Options    *kFieldOptions `json:"options,omitempty"`
}

type kFieldOptions struct {
	Delimiter string `json:"delimiter,omitempty"`
	Index     int    `json:"index,omitempty"`
	Encoding  string `json:"encoding,omitempty"`
	Create    bool   `json:"create,omitempty"`
}

type kReplica struct {
	Name  string `json:"name,omitempty"`
	Count int64  `json:"count"`
}

type kVar struct {
	Name     string         `json:"name"`
	ObjRef   kTarget        `json:"objref"`
	FieldRef kFieldSelector `json:"fieldref,omitempty"`
}

type kTarget struct {
	APIVersion string `json:"apiVersion,omitempty"`
	kGvk       `json:",inline,omitempty"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

type kFieldSelector struct {
	FieldPath string `json:"fieldPath,omitempty"`
}

type kSortOptions struct {
	Order             string              `json:"order,omitempty"`
	LegacySortOptions *kLegacySortOptions `json:"legacySortOptions,omitempty"`
}

type kLegacySortOptions struct {
	OrderFirst []string `json:"orderFirst"`
	OrderLast  []string `json:"orderLast"`
}

type kConfigMapArgs struct {
	kGeneratorArgs `json:",inline,omitempty"`
}

type kSecretArgs struct {
	kGeneratorArgs `json:",inline,omitempty"`
	Type           string `json:"type,omitempty"`
}

type kGeneratorArgs struct {
	Namespace      string `json:"namespace,omitempty"`
	Name           string `json:"name,omitempty"`
	Behavior       string `json:"behavior,omitempty"`
	kKvPairSources `json:",inline,omitempty"`
	Options        *kGeneratorOptions `json:"options,omitempty"`
}

type kKvPairSources struct {
	LiteralSources []string `json:"literals,omitempty"`
	FileSources    []string `json:"files,omitempty"`
	EnvSources     []string `json:"envs,omitempty"`
	EnvSource      string   `json:"env,omitempty"`
}

type kGeneratorOptions struct {
	Labels                map[string]string `json:"labels,omitempty"`
	Annotations           map[string]string `json:"annotations,omitempty"`
	DisableNameSuffixHash bool              `json:"disableNameSuffixHash,omitempty"`
	Immutable             bool              `json:"immutable,omitempty"`
}

type kHelmGlobals struct {
	ChartHome  string `json:"chartHome,omitempty"`
	ConfigHome string `json:"configHome,omitempty"`
}

type kHelmChart struct {
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

type kHelmChartArgs struct {
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
