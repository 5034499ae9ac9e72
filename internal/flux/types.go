package flux

import (
	"encoding/json"
	"time"
)

// The types below mirror, field for field and with the same JSON names and
// Go types, the Flux Kustomization API flux decodes a --kustomization-file
// into (kustomize-controller api v1.9.4 kustomizev1.Kustomization, with
// its fluxcd/pkg/apis meta and kustomize types and apimachinery's
// ObjectMeta), so that decoding them with sigs.k8s.io/yaml keeps, drops,
// coerces and refuses what flux does: unknown fields (a v1beta2 object's
// patchesStrategicMerge) are dropped, a number or a boolean where a string
// is expected becomes that string (YAML 1.1: `on` is true), a string where
// a list is expected is an error naming the field and flux's type. The
// status is not mirrored (it is never read; flux would type-check it).

// Kustomization is a Flux Kustomization (kustomize.toolkit.fluxcd.io).
type Kustomization struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`

	Spec   KustomizationSpec   `json:"spec,omitempty"`
	Status KustomizationStatus `json:"status,omitempty"`
}

// TypeMeta is apimachinery's TypeMeta.
type TypeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

// ObjectMeta is apimachinery's ObjectMeta.
type ObjectMeta struct {
	Name                       string               `json:"name,omitempty"`
	GenerateName               string               `json:"generateName,omitempty"`
	Namespace                  string               `json:"namespace,omitempty"`
	SelfLink                   string               `json:"selfLink,omitempty"`
	UID                        UID                  `json:"uid,omitempty"`
	ResourceVersion            string               `json:"resourceVersion,omitempty"`
	Generation                 int64                `json:"generation,omitempty"`
	CreationTimestamp          Time                 `json:"creationTimestamp,omitempty"`
	DeletionTimestamp          *Time                `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64               `json:"deletionGracePeriodSeconds,omitempty"`
	Labels                     map[string]string    `json:"labels,omitempty"`
	Annotations                map[string]string    `json:"annotations,omitempty"`
	OwnerReferences            []OwnerReference     `json:"ownerReferences,omitempty"`
	Finalizers                 []string             `json:"finalizers,omitempty"`
	ManagedFields              []ManagedFieldsEntry `json:"managedFields,omitempty"`
}

// UID is apimachinery's types.UID.
type UID string

// OwnerReference is apimachinery's OwnerReference.
type OwnerReference struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                UID    `json:"uid"`
	Controller         *bool  `json:"controller,omitempty"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty"`
}

// ManagedFieldsEntry is apimachinery's ManagedFieldsEntry.
type ManagedFieldsEntry struct {
	Manager     string                     `json:"manager,omitempty"`
	Operation   ManagedFieldsOperationType `json:"operation,omitempty"`
	APIVersion  string                     `json:"apiVersion,omitempty"`
	Time        *Time                      `json:"time,omitempty"`
	FieldsType  string                     `json:"fieldsType,omitempty"`
	FieldsV1    *FieldsV1                  `json:"fieldsV1,omitempty"`
	Subresource string                     `json:"subresource,omitempty"`
}

// ManagedFieldsOperationType is apimachinery's.
type ManagedFieldsOperationType string

// FieldsV1 is apimachinery's FieldsV1: any JSON, kept as it is.
type FieldsV1 struct {
	Raw []byte `json:"-"`
}

// UnmarshalJSON keeps b (null leaves f empty), as apimachinery does.
func (f *FieldsV1) UnmarshalJSON(b []byte) error {
	if string(b) != "null" {
		f.Raw = append(f.Raw[:0], b...)
	}
	return nil
}

// MarshalJSON writes the kept JSON.
func (f FieldsV1) MarshalJSON() ([]byte, error) {
	if f.Raw == nil {
		return []byte("null"), nil
	}
	return f.Raw, nil
}

// Time is apimachinery's metav1.Time: RFC 3339 text, or null.
type Time struct {
	time.Time `json:"-"`
}

// UnmarshalJSON reads RFC 3339 text, as metav1.Time does.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	pt, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	t.Time = pt.Local()
	return nil
}

// MarshalJSON writes RFC 3339 text in UTC, or null.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339))
}

// Duration is apimachinery's metav1.Duration: Go duration text ("10m").
type Duration struct {
	time.Duration `json:"-"`
}

// UnmarshalJSON reads Go duration text, as metav1.Duration does (null
// reads as "", which is not a duration).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	pd, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = pd
	return nil
}

// MarshalJSON writes Go duration text.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.Duration.String())
}

// KustomizationSpec is the spec of a Flux Kustomization (v1).
type KustomizationSpec struct {
	CommonMetadata          *CommonMetadata                 `json:"commonMetadata,omitempty"`
	DependsOn               []DependencyReference           `json:"dependsOn,omitempty"`
	Decryption              *Decryption                     `json:"decryption,omitempty"`
	Interval                Duration                        `json:"interval"`
	RetryInterval           *Duration                       `json:"retryInterval,omitempty"`
	KubeConfig              *KubeConfigReference            `json:"kubeConfig,omitempty"`
	Path                    string                          `json:"path,omitempty"`
	PostBuild               *PostBuild                      `json:"postBuild,omitempty"`
	Prune                   bool                            `json:"prune"`
	DeletionPolicy          string                          `json:"deletionPolicy,omitempty"`
	HealthChecks            []NamespacedObjectKindReference `json:"healthChecks,omitempty"`
	NamePrefix              string                          `json:"namePrefix,omitempty"`
	NameSuffix              string                          `json:"nameSuffix,omitempty"`
	Patches                 []Patch                         `json:"patches,omitempty"`
	Images                  []Image                         `json:"images,omitempty"`
	ServiceAccountName      string                          `json:"serviceAccountName,omitempty"`
	SourceRef               CrossNamespaceSourceReference   `json:"sourceRef"`
	Suspend                 bool                            `json:"suspend,omitempty"`
	TargetNamespace         string                          `json:"targetNamespace,omitempty"`
	Timeout                 *Duration                       `json:"timeout,omitempty"`
	Force                   bool                            `json:"force,omitempty"`
	Wait                    bool                            `json:"wait,omitempty"`
	BuildMetadata           []BuildMetadataOption           `json:"buildMetadata,omitempty"`
	Components              []string                        `json:"components,omitempty"`
	IgnoreMissingComponents bool                            `json:"ignoreMissingComponents,omitempty"`
	HealthCheckExprs        []CustomHealthCheck             `json:"healthCheckExprs,omitempty"`
	Ignore                  []IgnoreRule                    `json:"ignore,omitempty"`
}

// KustomizationStatus stands for the status, which is never read.
type KustomizationStatus struct{}

// CommonMetadata are labels and annotations set on every object.
type CommonMetadata struct {
	Annotations map[string]string `json:"annotations,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// DependencyReference is meta.DependencyReference.
type DependencyReference struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Decryption is the SOPS decryption setting.
type Decryption struct {
	Provider           string                `json:"provider"`
	ServiceAccountName string                `json:"serviceAccountName,omitempty"`
	SecretRef          *LocalObjectReference `json:"secretRef,omitempty"`
}

// LocalObjectReference is meta.LocalObjectReference.
type LocalObjectReference struct {
	Name string `json:"name"`
}

// SecretKeyReference is meta.SecretKeyReference.
type SecretKeyReference struct {
	Name string `json:"name"`
	Key  string `json:"key,omitempty"`
}

// KubeConfigReference is meta.KubeConfigReference.
type KubeConfigReference struct {
	ConfigMapRef *LocalObjectReference `json:"configMapRef,omitempty"`
	SecretRef    *SecretKeyReference   `json:"secretRef,omitempty"`
}

// PostBuild is spec.postBuild.
type PostBuild struct {
	SubstituteStrategy SubstituteStrategy    `json:"substituteStrategy,omitempty"`
	Substitute         map[string]string     `json:"substitute,omitempty"`
	SubstituteFrom     []SubstituteReference `json:"substituteFrom,omitempty"`
}

// SubstituteStrategy is "WithVariables" (the default) or "Always".
type SubstituteStrategy string

// SubstituteStrategyAlways substitutes even without variables (defaults
// apply, undefined variables are empty).
const SubstituteStrategyAlways SubstituteStrategy = "Always"

// SubstituteReference names a ConfigMap or a Secret whose data are
// variables.
type SubstituteReference struct {
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Optional bool   `json:"optional,omitempty"`
}

// NamespacedObjectKindReference is meta.NamespacedObjectKindReference.
type NamespacedObjectKindReference struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

// Patch is fluxcd/pkg/apis/kustomize's Patch.
type Patch struct {
	Patch  string    `json:"patch"`
	Target *Selector `json:"target,omitempty"`
}

// Selector is fluxcd/pkg/apis/kustomize's Selector.
type Selector struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	Name               string `json:"name,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
}

// Image is fluxcd/pkg/apis/kustomize's Image.
type Image struct {
	Name    string `json:"name"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// CrossNamespaceSourceReference is the source an object builds from.
type CrossNamespaceSourceReference struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

// String is the key flux looks the source up with in --local-sources:
// Kind/Namespace/Name, or Kind/Name without a namespace.
func (s CrossNamespaceSourceReference) String() string {
	if s.Namespace != "" {
		return s.Kind + "/" + s.Namespace + "/" + s.Name
	}
	return s.Kind + "/" + s.Name
}

// BuildMetadataOption is "originAnnotations" or "transformerAnnotations".
type BuildMetadataOption string

// CustomHealthCheck is fluxcd/pkg/apis/kustomize's CustomHealthCheck.
type CustomHealthCheck struct {
	APIVersion             string `json:"apiVersion"`
	Kind                   string `json:"kind,omitempty"`
	HealthCheckExpressions `json:",inline"`
}

// HealthCheckExpressions are CEL expressions.
type HealthCheckExpressions struct {
	Current    string `json:"current"`
	InProgress string `json:"inProgress,omitempty"`
	Failed     string `json:"failed,omitempty"`
}

// IgnoreRule is a rule of spec.ignore.
type IgnoreRule struct {
	Paths  []string  `json:"paths"`
	Target *Selector `json:"target,omitempty"`
}

// fluxPackage is the Go package name flux's own types have, by type name,
// for the messages that name a type.
var fluxPackage = map[string]string{
	"Kustomization": "v1", "KustomizationSpec": "v1", "KustomizationStatus": "v1", "CommonMetadata": "v1",
	"Decryption": "v1", "PostBuild": "v1", "SubstituteStrategy": "v1", "SubstituteReference": "v1",
	"CrossNamespaceSourceReference": "v1", "BuildMetadataOption": "v1", "IgnoreRule": "v1",
	"ObjectMeta": "v1", "TypeMeta": "v1", "Time": "v1", "Duration": "v1", "OwnerReference": "v1",
	"ManagedFieldsEntry": "v1", "ManagedFieldsOperationType": "v1", "FieldsV1": "v1", "UID": "types",
	"DependencyReference": "meta", "LocalObjectReference": "meta", "SecretKeyReference": "meta",
	"KubeConfigReference": "meta", "NamespacedObjectKindReference": "meta",
	"Patch": "kustomize", "Selector": "kustomize", "Image": "kustomize", "CustomHealthCheck": "kustomize",
	"HealthCheckExpressions": "kustomize",
}
