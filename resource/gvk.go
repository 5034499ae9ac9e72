package resource

import (
	"strings"
	"sync"
)

// GVK is a Kubernetes group, version and kind. The empty group is the core
// API group.
type GVK struct {
	Group   string `json:"group,omitempty" yaml:"group,omitempty"`
	Version string `json:"version,omitempty" yaml:"version,omitempty"`
	Kind    string `json:"kind,omitempty" yaml:"kind,omitempty"`
}

// ParseAPIVersion splits an apiVersion such as "apps/v1" into its group and
// version; "v1" has no group.
func ParseAPIVersion(apiVersion string) (group, version string) {
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}

// NewGVK builds a GVK from an apiVersion and a kind.
func NewGVK(apiVersion, kind string) GVK {
	g, v := ParseAPIVersion(apiVersion)
	return GVK{Group: g, Version: v, Kind: kind}
}

// APIVersion returns the apiVersion field value for the GVK.
func (g GVK) APIVersion() string {
	if g.Group != "" {
		return g.Group + "/" + g.Version
	}
	return g.Version
}

// String formats the GVK as kustomize does in messages: "Kind.version.group",
// with [noKind], [noVer] and [noGrp] standing for empty parts.
func (g GVK) String() string {
	k, v, gr := g.Kind, g.Version, g.Group
	if k == "" {
		k = "[noKind]"
	}
	if v == "" {
		v = "[noVer]"
	}
	if gr == "" {
		gr = "[noGrp]"
	}
	return k + "." + v + "." + gr
}

// Selects reports whether g matches sel, where an empty field of sel matches
// anything.
func (g GVK) Selects(sel GVK) bool {
	return (sel.Group == "" || g.Group == sel.Group) &&
		(sel.Version == "" || g.Version == sel.Version) &&
		(sel.Kind == "" || g.Kind == sel.Kind)
}

// IsClusterScoped reports whether objects of this GVK are certainly not
// namespaced, according to the built-in Kubernetes schema. Unknown kinds
// (custom resources) are treated as namespaced, as kustomize does.
func (g GVK) IsClusterScoped() bool {
	return clusterScoped()[[2]string{g.APIVersion(), g.Kind}]
}

// clusterScoped lists the built-in kinds that are cluster scoped, from the
// Kubernetes v1.21 OpenAPI schema that kustomize v5 embeds; made on first
// use (a warm build or kpipe version never asks).
var clusterScoped = sync.OnceValue(func() map[[2]string]bool {
	m := make(map[[2]string]bool, len(clusterScopedKinds))
	for _, k := range clusterScopedKinds {
		m[k] = true
	}
	return m
})

var clusterScopedKinds = [][2]string{
	{"admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"},
	{"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"},        // kustomize v5.8.1+
	{"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"}, // kustomize v5.8.1+
	{"admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"},
	{"admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration"},
	{"admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration"},
	{"apiextensions.k8s.io/v1", "CustomResourceDefinition"},
	{"apiextensions.k8s.io/v1beta1", "CustomResourceDefinition"},
	{"apiregistration.k8s.io/v1", "APIService"},
	{"apiregistration.k8s.io/v1beta1", "APIService"},
	{"certificates.k8s.io/v1", "CertificateSigningRequest"},
	{"certificates.k8s.io/v1beta1", "CertificateSigningRequest"},
	{"flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema"},
	{"flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration"},
	{"networking.k8s.io/v1", "IngressClass"},
	{"networking.k8s.io/v1beta1", "IngressClass"},
	{"node.k8s.io/v1", "RuntimeClass"},
	{"node.k8s.io/v1beta1", "RuntimeClass"},
	{"policy/v1beta1", "PodSecurityPolicy"},
	{"rbac.authorization.k8s.io/v1", "ClusterRole"},
	{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding"},
	{"rbac.authorization.k8s.io/v1beta1", "ClusterRole"},
	{"rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding"},
	{"scheduling.k8s.io/v1", "PriorityClass"},
	{"scheduling.k8s.io/v1beta1", "PriorityClass"},
	{"storage.k8s.io/v1", "CSIDriver"},
	{"storage.k8s.io/v1", "CSINode"},
	{"storage.k8s.io/v1", "StorageClass"},
	{"storage.k8s.io/v1", "VolumeAttachment"},
	{"storage.k8s.io/v1beta1", "CSIDriver"},
	{"storage.k8s.io/v1beta1", "CSINode"},
	{"storage.k8s.io/v1beta1", "StorageClass"},
	{"storage.k8s.io/v1beta1", "VolumeAttachment"},
	{"v1", "ComponentStatus"},
	{"v1", "Namespace"},
	{"v1", "Node"},
	{"v1", "NodeProxyOptions"},
	{"v1", "PersistentVolume"},
}
