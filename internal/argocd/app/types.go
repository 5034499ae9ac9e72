// Package app holds Argo CD's Application and ApplicationSet resources
// (argoproj.io/v1alpha1) as far as manifest generation reads them: the
// types, with the JSON names Argo CD v3.6.1 gives them (so that an
// .argocd-source.yaml merge patch and a template render see the same
// fields), parsing from YAML the way Argo CD's sigs.k8s.io/yaml does (YAML
// 1.1 scalars, non-string keys spelt as strings, unknown fields dropped),
// the controller's NormalizeApplicationSpec, instance names, the
// ARGOCD_APP_* environment, finding Applications in a directory tree and
// deciding which sources are "this repository".
//
// It imports only the standard library and kpipe's loaders (for YAML to
// JSON with kustomize's YAML reader).
package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Kinds and group.
const (
	Group              = "argoproj.io"
	KindApplication    = "Application"
	KindApplicationSet = "ApplicationSet"
	// DefaultProject is the project an Application with none belongs to.
	DefaultProject = "default"
)

// ObjectMeta is the part of metadata Argo CD reads.
type ObjectMeta struct {
	Name         string            `json:"name,omitempty"`
	GenerateName string            `json:"generateName,omitempty"`
	Namespace    string            `json:"namespace,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	Finalizers   []string          `json:"finalizers,omitempty"`
}

// Application is an argoproj.io/v1alpha1 Application.
type Application struct {
	APIVersion string          `json:"apiVersion,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Metadata   ObjectMeta      `json:"metadata"`
	Spec       ApplicationSpec `json:"spec"`
}

// ApplicationSpec is an Application's spec. Fields that manifest
// generation does not read are kept as raw JSON so that a rendered
// Application (ApplicationSets) keeps them.
type ApplicationSpec struct {
	Source               *ApplicationSource     `json:"source,omitempty"`
	Destination          ApplicationDestination `json:"destination"`
	Project              string                 `json:"project"`
	SyncPolicy           *SyncPolicy            `json:"syncPolicy,omitempty"`
	IgnoreDifferences    json.RawMessage        `json:"ignoreDifferences,omitempty"`
	Info                 json.RawMessage        `json:"info,omitempty"`
	RevisionHistoryLimit *int64                 `json:"revisionHistoryLimit,omitempty"`
	Sources              []ApplicationSource    `json:"sources,omitempty"`
	SourceHydrator       json.RawMessage        `json:"sourceHydrator,omitempty"`
}

// ApplicationDestination is where an Application deploys.
type ApplicationDestination struct {
	Server    string `json:"server,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// SyncPolicy is kept for NormalizeApplicationSpec's zero test and for
// ApplicationSets' preserveResourcesOnDeletion.
type SyncPolicy struct {
	Automated                json.RawMessage `json:"automated,omitempty"`
	SyncOptions              []string        `json:"syncOptions,omitempty"`
	Retry                    json.RawMessage `json:"retry,omitempty"`
	ManagedNamespaceMetadata json.RawMessage `json:"managedNamespaceMetadata,omitempty"`
}

// IsZero is SyncPolicy.IsZero.
func (p *SyncPolicy) IsZero() bool {
	return p == nil || (isNullRaw(p.Automated) && len(p.SyncOptions) == 0 && isNullRaw(p.Retry) && isNullRaw(p.ManagedNamespaceMetadata))
}

// ApplicationSource is one source of an Application.
type ApplicationSource struct {
	RepoURL        string                      `json:"repoURL"`
	Path           string                      `json:"path,omitempty"`
	TargetRevision string                      `json:"targetRevision,omitempty"`
	Helm           *ApplicationSourceHelm      `json:"helm,omitempty"`
	Kustomize      *ApplicationSourceKustomize `json:"kustomize,omitempty"`
	Directory      *ApplicationSourceDirectory `json:"directory,omitempty"`
	Plugin         *ApplicationSourcePlugin    `json:"plugin,omitempty"`
	Chart          string                      `json:"chart,omitempty"`
	Ref            string                      `json:"ref,omitempty"`
	Name           string                      `json:"name,omitempty"`
	TagPrefix      string                      `json:"tagPrefix,omitempty"`
}

// IsOCI reports an oci:// repository.
func (s *ApplicationSource) IsOCI() bool { return len(s.RepoURL) >= 6 && s.RepoURL[:6] == "oci://" }

// IsHelm reports a chart from a Helm repository (chart set).
func (s *ApplicationSource) IsHelm() bool { return s.Chart != "" }

// IsRef reports a source with a ref name.
func (s *ApplicationSource) IsRef() bool { return s.Ref != "" }

// KubeVersionOrDefault is GetKubeVersionOrDefault: helm's, else kustomize's,
// else def.
func (s *ApplicationSource) KubeVersionOrDefault(def string) string {
	if s.Helm != nil && s.Helm.KubeVersion != "" {
		return s.Helm.KubeVersion
	}
	if s.Kustomize != nil && s.Kustomize.KubeVersion != "" {
		return s.Kustomize.KubeVersion
	}
	return def
}

// APIVersionsOrDefault is GetAPIVersionsOrDefault.
func (s *ApplicationSource) APIVersionsOrDefault(def []string) []string {
	if s.Helm != nil && len(s.Helm.APIVersions) > 0 {
		return s.Helm.APIVersions
	}
	if s.Kustomize != nil && len(s.Kustomize.APIVersions) > 0 {
		return s.Kustomize.APIVersions
	}
	return def
}

// ApplicationSourceHelm holds helm options.
type ApplicationSourceHelm struct {
	ValueFiles              []string            `json:"valueFiles,omitempty"`
	Parameters              []HelmParameter     `json:"parameters,omitempty"`
	ReleaseName             string              `json:"releaseName,omitempty"`
	Values                  string              `json:"values,omitempty"`
	FileParameters          []HelmFileParameter `json:"fileParameters,omitempty"`
	Version                 string              `json:"version,omitempty"`
	PassCredentials         bool                `json:"passCredentials,omitempty"`
	IgnoreMissingValueFiles bool                `json:"ignoreMissingValueFiles,omitempty"`
	SkipCrds                bool                `json:"skipCrds,omitempty"`
	ValuesObject            json.RawMessage     `json:"valuesObject,omitempty"`
	Namespace               string              `json:"namespace,omitempty"`
	KubeVersion             string              `json:"kubeVersion,omitempty"`
	APIVersions             []string            `json:"apiVersions,omitempty"`
	SkipTests               bool                `json:"skipTests,omitempty"`
	SkipSchemaValidation    bool                `json:"skipSchemaValidation,omitempty"`
}

// ValuesIsEmpty reports neither values nor valuesObject set.
func (h *ApplicationSourceHelm) ValuesIsEmpty() bool {
	return isNullRaw(h.ValuesObject) && h.Values == ""
}

// IsZero is ApplicationSourceHelm.IsZero.
func (h *ApplicationSourceHelm) IsZero() bool {
	return h == nil || h.Version == "" && h.ReleaseName == "" && len(h.ValueFiles) == 0 &&
		len(h.Parameters) == 0 && len(h.FileParameters) == 0 && h.ValuesIsEmpty() &&
		!h.PassCredentials && !h.IgnoreMissingValueFiles && !h.SkipCrds && !h.SkipTests &&
		!h.SkipSchemaValidation && h.KubeVersion == "" && len(h.APIVersions) == 0 && h.Namespace == ""
}

// HelmParameter is a --set/--set-string value.
type HelmParameter struct {
	Name        string `json:"name,omitempty"`
	Value       string `json:"value,omitempty"`
	ForceString bool   `json:"forceString,omitempty"`
}

// HelmFileParameter is a --set-file value.
type HelmFileParameter struct {
	Name string `json:"name,omitempty"`
	Path string `json:"path,omitempty"`
}

// ApplicationSourceKustomize holds kustomize options.
type ApplicationSourceKustomize struct {
	NamePrefix                string             `json:"namePrefix,omitempty"`
	NameSuffix                string             `json:"nameSuffix,omitempty"`
	Images                    []string           `json:"images,omitempty"`
	CommonLabels              map[string]string  `json:"commonLabels,omitempty"`
	Version                   string             `json:"version,omitempty"`
	CommonAnnotations         map[string]string  `json:"commonAnnotations,omitempty"`
	ForceCommonLabels         bool               `json:"forceCommonLabels,omitempty"`
	ForceCommonAnnotations    bool               `json:"forceCommonAnnotations,omitempty"`
	Namespace                 string             `json:"namespace,omitempty"`
	CommonAnnotationsEnvsubst bool               `json:"commonAnnotationsEnvsubst,omitempty"`
	Replicas                  []KustomizeReplica `json:"replicas,omitempty"`
	Patches                   []KustomizePatch   `json:"patches,omitempty"`
	Components                []string           `json:"components,omitempty"`
	IgnoreMissingComponents   bool               `json:"ignoreMissingComponents,omitempty"`
	LabelWithoutSelector      bool               `json:"labelWithoutSelector,omitempty"`
	KubeVersion               string             `json:"kubeVersion,omitempty"`
	APIVersions               []string           `json:"apiVersions,omitempty"`
	LabelIncludeTemplates     bool               `json:"labelIncludeTemplates,omitempty"`
}

// IsZero is ApplicationSourceKustomize.IsZero (the force and label flags
// alone do not count).
func (k *ApplicationSourceKustomize) IsZero() bool {
	return k == nil || k.NamePrefix == "" && k.NameSuffix == "" && k.Version == "" && k.Namespace == "" &&
		len(k.Images) == 0 && len(k.Replicas) == 0 && len(k.CommonLabels) == 0 &&
		len(k.CommonAnnotations) == 0 && len(k.Patches) == 0 && len(k.Components) == 0 &&
		k.KubeVersion == "" && len(k.APIVersions) == 0 && !k.IgnoreMissingComponents
}

// KustomizeReplica is a replicas entry.
type KustomizeReplica struct {
	Name  string      `json:"name"`
	Count IntOrString `json:"count"`
}

// IntCount is GetIntCount: a string count must parse as an integer.
func (r KustomizeReplica) IntCount() (int, error) {
	if r.Count.IsString {
		n, err := strconv.Atoi(r.Count.Str)
		if err != nil {
			return 0, fmt.Errorf("expected integer value for count. Received: %s", r.Count.Str)
		}
		return n, nil
	}
	return int(r.Count.Int), nil
}

// IntOrString is Kubernetes' intstr.IntOrString as JSON reads and writes it.
type IntOrString struct {
	IsString bool
	Int      int32
	Str      string
}

// UnmarshalJSON reads a quoted string or an int32.
func (v *IntOrString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		v.IsString = true
		return json.Unmarshal(b, &v.Str)
	}
	v.IsString = false
	return json.Unmarshal(b, &v.Int)
}

// MarshalJSON writes the string or the number.
func (v IntOrString) MarshalJSON() ([]byte, error) {
	if v.IsString {
		return json.Marshal(v.Str)
	}
	return json.Marshal(v.Int)
}

// KustomizePatch is a patches entry of the source.
type KustomizePatch struct {
	Path    string             `json:"path,omitempty"`
	Patch   string             `json:"patch,omitempty"`
	Target  *KustomizeSelector `json:"target,omitempty"`
	Options map[string]bool    `json:"options,omitempty"`
}

// KustomizeSelector is a patch target.
type KustomizeSelector struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
}

// ApplicationSourceDirectory holds directory options.
type ApplicationSourceDirectory struct {
	Recurse                bool                     `json:"recurse,omitempty"`
	Jsonnet                ApplicationSourceJsonnet `json:"jsonnet,omitempty,omitzero"`
	Exclude                string                   `json:"exclude,omitempty"`
	Include                string                   `json:"include,omitempty"`
	DisableExtensionFilter bool                     `json:"disableExtensionFilter,omitempty"`
}

// IsZero is ApplicationSourceDirectory.IsZero (include and exclude do not
// count).
func (d *ApplicationSourceDirectory) IsZero() bool {
	return d == nil || !d.Recurse && d.Jsonnet.IsZero() && !d.DisableExtensionFilter
}

// ApplicationSourceJsonnet holds jsonnet options (kpipe does not render
// jsonnet; they are kept for the merge and the zero test).
type ApplicationSourceJsonnet struct {
	ExtVars []JsonnetVar `json:"extVars,omitempty"`
	TLAs    []JsonnetVar `json:"tlas,omitempty"`
	Libs    []string     `json:"libs,omitempty"`
}

// IsZero reports no jsonnet option.
func (j ApplicationSourceJsonnet) IsZero() bool {
	return len(j.ExtVars) == 0 && len(j.TLAs) == 0 && len(j.Libs) == 0
}

// JsonnetVar is a jsonnet variable.
type JsonnetVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Code  bool   `json:"code,omitempty"`
}

// ApplicationSourcePlugin holds config management plugin options (never
// rendered by kpipe).
type ApplicationSourcePlugin struct {
	Name       string          `json:"name,omitempty"`
	Env        []EnvEntry      `json:"env,omitempty"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// EnvEntry is a name and a value.
type EnvEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func isNullRaw(r json.RawMessage) bool {
	t := bytes.TrimSpace(r)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}
