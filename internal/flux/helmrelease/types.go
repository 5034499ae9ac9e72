package helmrelease

import (
	"bytes"

	"github.com/kpipe/kpipe/internal/flux"
)

// The types below mirror, with the same JSON names and Go types, the parts
// of helm-controller's HelmRelease API (github.com/fluxcd/helm-controller/
// api/v2, helm-controller v1.6) that decide what a release renders, so that
// decoding with sigs.k8s.io/yaml coerces and refuses what decoding into
// Flux's own types does (a number in a string field becomes a string, a
// string where a list is expected is an error). Fields that change nothing
// rendered (intervals aside: they are required and type-checked) are not
// mirrored and are dropped. v2beta2's extra post-renderer fields and its
// deprecated chart.spec.valuesFile are mirrored for Options.AllowV2Beta2.

// HelmRelease is a helm.toolkit.fluxcd.io HelmRelease.
type HelmRelease struct {
	flux.TypeMeta   `json:",inline"`
	flux.ObjectMeta `json:"metadata,omitempty"`

	Spec Spec `json:"spec,omitempty"`
}

// Spec is a HelmRelease's spec (helmv2.HelmReleaseSpec).
type Spec struct {
	Chart              *ChartTemplate                      `json:"chart,omitempty"`
	ChartRef           *flux.CrossNamespaceSourceReference `json:"chartRef,omitempty"`
	Interval           flux.Duration                       `json:"interval"`
	KubeConfig         *flux.KubeConfigReference           `json:"kubeConfig,omitempty"`
	Suspend            bool                                `json:"suspend,omitempty"`
	ReleaseName        string                              `json:"releaseName,omitempty"`
	TargetNamespace    string                              `json:"targetNamespace,omitempty"`
	StorageNamespace   string                              `json:"storageNamespace,omitempty"`
	DependsOn          []flux.DependencyReference          `json:"dependsOn,omitempty"`
	Timeout            *flux.Duration                      `json:"timeout,omitempty"`
	ServiceAccountName string                              `json:"serviceAccountName,omitempty"`
	Install            *Install                            `json:"install,omitempty"`
	Upgrade            *Upgrade                            `json:"upgrade,omitempty"`
	Test               *Test                               `json:"test,omitempty"`
	ValuesFrom         []ValuesReference                   `json:"valuesFrom,omitempty"`
	Values             *JSON                               `json:"values,omitempty"`
	CommonMetadata     *flux.CommonMetadata                `json:"commonMetadata,omitempty"`
	PostRenderers      []PostRenderer                      `json:"postRenderers,omitempty"`
	PostRenderStrategy string                              `json:"postRenderStrategy,omitempty"`
}

// ChartTemplate is spec.chart: the HelmChart helm-controller creates
// (helmv2.HelmChartTemplate).
type ChartTemplate struct {
	ObjectMeta *ChartTemplateObjectMeta `json:"metadata,omitempty"`
	Spec       ChartTemplateSpec        `json:"spec"`
}

// ChartTemplateObjectMeta is the labels and annotations of that HelmChart.
type ChartTemplateObjectMeta struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ChartTemplateSpec is spec.chart.spec (helmv2.HelmChartTemplateSpec).
type ChartTemplateSpec struct {
	Chart                    string                  `json:"chart"`
	Version                  string                  `json:"version,omitempty"`
	SourceRef                CrossNamespaceObjectRef `json:"sourceRef"`
	Interval                 *flux.Duration          `json:"interval,omitempty"`
	ReconcileStrategy        string                  `json:"reconcileStrategy,omitempty"`
	ValuesFiles              []string                `json:"valuesFiles,omitempty"`
	IgnoreMissingValuesFiles bool                    `json:"ignoreMissingValuesFiles,omitempty"`
	// ValuesFile is v2beta2's deprecated single values file (merged
	// before ValuesFiles by helm-controller v0.37-v1.4).
	ValuesFile string `json:"valuesFile,omitempty"`
}

// CrossNamespaceObjectRef is spec.chart.spec.sourceRef
// (helmv2.CrossNamespaceObjectReference: kind HelmRepository,
// GitRepository or Bucket).
type CrossNamespaceObjectRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

// ValuesReference is a spec.valuesFrom entry (fluxcd/pkg/apis/meta
// ValuesReference).
type ValuesReference struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	ValuesKey  string `json:"valuesKey,omitempty"`
	TargetPath string `json:"targetPath,omitempty"`
	Optional   bool   `json:"optional,omitempty"`
	Literal    bool   `json:"literal,omitempty"`
}

// GetValuesKey is the key the values are read from: valuesKey, or
// "values.yaml".
func (r ValuesReference) GetValuesKey() string {
	if r.ValuesKey == "" {
		return "values.yaml"
	}
	return r.ValuesKey
}

// Install is spec.install, as far as it changes what is applied.
type Install struct {
	DisableHooks            bool   `json:"disableHooks,omitempty"`
	DisableSchemaValidation bool   `json:"disableSchemaValidation,omitempty"`
	Replace                 bool   `json:"replace,omitempty"`
	SkipCRDs                bool   `json:"skipCRDs,omitempty"`
	CRDs                    string `json:"crds,omitempty"`
	CreateNamespace         bool   `json:"createNamespace,omitempty"`
}

// Upgrade is spec.upgrade, as far as it changes what is applied.
type Upgrade struct {
	DisableHooks            bool   `json:"disableHooks,omitempty"`
	DisableSchemaValidation bool   `json:"disableSchemaValidation,omitempty"`
	PreserveValues          bool   `json:"preserveValues,omitempty"`
	CRDs                    string `json:"crds,omitempty"`
}

// Test is spec.test: whether helm tests run after an install or upgrade.
type Test struct {
	Enable bool `json:"enable,omitempty"`
}

// PostRenderer is a spec.postRenderers entry.
type PostRenderer struct {
	Kustomize *Kustomize `json:"kustomize,omitempty"`
}

// Kustomize is a kustomize post-renderer: patches and images applied to
// helm's output (v2beta2 also had patchesStrategicMerge and
// patchesJson6902).
type Kustomize struct {
	Patches               []flux.Patch    `json:"patches,omitempty"`
	PatchesStrategicMerge []JSON          `json:"patchesStrategicMerge,omitempty"`
	PatchesJSON6902       []JSON6902Patch `json:"patchesJson6902,omitempty"`
	Images                []flux.Image    `json:"images,omitempty"`
}

// JSON6902Patch is v2beta2's patchesJson6902 entry (fluxcd/pkg/apis/
// kustomize JSON6902Patch).
type JSON6902Patch struct {
	Patch  []JSON        `json:"patch"`
	Target flux.Selector `json:"target"`
}

// JSON is apiextensionsv1.JSON: any JSON value, kept as its text (a null
// leaves it empty).
type JSON struct {
	Raw []byte `json:"-"`
}

// UnmarshalJSON keeps the text, as apiextensionsv1.JSON does.
func (j *JSON) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && !bytes.Equal(b, []byte("null")) {
		j.Raw = append(j.Raw[:0], b...)
	}
	return nil
}

// MarshalJSON writes the text back (null when empty).
func (j JSON) MarshalJSON() ([]byte, error) {
	if len(j.Raw) == 0 {
		return []byte("null"), nil
	}
	return j.Raw, nil
}
