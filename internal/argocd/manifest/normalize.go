package manifest

import (
	"fmt"
)

// CheckKinds is the controller's unmarshalManifests over a source's
// generated objects: an object without a kind fails (Kubernetes'
// wording, with the object as the repo-server returned it).
func CheckKinds(objs []Object) error {
	for _, o := range objs {
		if k, _ := o["kind"].(string); k == "" {
			b, _ := Marshal(o)
			return fmt.Errorf("Object 'Kind' is missing in '%s'", b)
		}
	}
	return nil
}

// ClusterScoped are the built-in cluster-scoped kinds (group/Kind) of a
// Kubernetes 1.3x cluster, as the reference harness knows them without a
// cluster.
var ClusterScoped = []string{
	"/Namespace", "/Node", "/PersistentVolume", "/ComponentStatus",
	"admissionregistration.k8s.io/MutatingWebhookConfiguration", "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy", "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
	"admissionregistration.k8s.io/MutatingAdmissionPolicy", "admissionregistration.k8s.io/MutatingAdmissionPolicyBinding",
	"apiextensions.k8s.io/CustomResourceDefinition", "apiregistration.k8s.io/APIService",
	"certificates.k8s.io/CertificateSigningRequest", "certificates.k8s.io/ClusterTrustBundle",
	"flowcontrol.apiserver.k8s.io/FlowSchema", "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration",
	"networking.k8s.io/IngressClass", "networking.k8s.io/IPAddress", "networking.k8s.io/ServiceCIDR",
	"node.k8s.io/RuntimeClass", "policy/PodSecurityPolicy",
	"rbac.authorization.k8s.io/ClusterRole", "rbac.authorization.k8s.io/ClusterRoleBinding",
	"scheduling.k8s.io/PriorityClass",
	"storage.k8s.io/CSIDriver", "storage.k8s.io/CSINode", "storage.k8s.io/StorageClass", "storage.k8s.io/VolumeAttachment", "storage.k8s.io/VolumeAttributesClass",
	"resource.k8s.io/DeviceClass", "resource.k8s.io/ResourceSlice", "internal.apiserver.k8s.io/StorageVersion",
	"authentication.k8s.io/TokenReview", "authentication.k8s.io/SelfSubjectReview",
	"authorization.k8s.io/SelfSubjectAccessReview", "authorization.k8s.io/SelfSubjectRulesReview", "authorization.k8s.io/SubjectAccessReview",
}

// Scope answers whether a group/Kind is namespaced, without a cluster:
// the built-in cluster-scoped kinds, extra ones, and the CRDs among the
// objects (by spec.scope); anything else is namespaced, as Argo CD treats
// an unknown kind.
type Scope map[string]bool

// NewScope builds the scope table from ClusterScoped, extra
// ("group/Kind") and the CRDs in objs.
func NewScope(objs []Object, extra ...string) Scope {
	s := Scope{}
	for _, k := range ClusterScoped {
		s[k] = false
	}
	for _, k := range extra {
		if k != "" {
			s[k] = false
		}
	}
	for _, o := range objs {
		if o == nil || !IsCRD(o) {
			continue
		}
		spec, _ := o["spec"].(map[string]any)
		g, _ := spec["group"].(string)
		names, _ := spec["names"].(map[string]any)
		k, _ := names["kind"].(string)
		scope, _ := spec["scope"].(string)
		s[g+"/"+k] = scope != "Cluster"
	}
	return s
}

// Namespaced reports group/kind namespaced (unknown: yes).
func (s Scope) Namespaced(group, kind string) bool {
	if ns, ok := s[group+"/"+kind]; ok {
		return ns
	}
	return true
}

// Normalize is the controller's NormalizeTargetObjects: a namespaced
// object without a namespace gets the destination's, a cluster-scoped
// one loses its namespace, and either is tracked again; duplicates by
// group/kind/namespace/name keep the last, with a RepeatedResourceWarning
// condition. The result is in order of first appearance (Argo CD's is Go
// map order: random). objs are changed.
func Normalize(objs []Object, destNamespace string, scope Scope, t Tracking) ([]Object, []string, error) {
	type key struct{ g, k, ns, name string }
	byKey := map[key][]Object{}
	var order []key
	for i, o := range objs {
		if o == nil {
			continue
		}
		g, _, k := GroupVersionKind(o)
		ns := Namespace(o)
		namespaced := scope.Namespaced(g, k)
		modified := false
		if !namespaced && ns != "" {
			setNamespace(o, "")
			modified = true
		} else if namespaced && ns == "" {
			setNamespace(o, destNamespace)
			modified = true
		}
		if modified {
			if err := t.Apply(o); err != nil {
				return nil, nil, fmt.Errorf("failed to set app instance label on resource %s/%s: %w", k, Name(o), err)
			}
		}
		kk := key{g, k, Namespace(o), Name(o)}
		if kk.name == "" {
			if gn := metaString(o, "generateName"); gn != "" {
				kk.name = fmt.Sprintf("%s%d", gn, i)
			}
		}
		if _, ok := byKey[kk]; !ok {
			order = append(order, kk)
		}
		byKey[kk] = append(byKey[kk], o)
	}
	var out []Object
	var conds []string
	for _, kk := range order {
		list := byKey[kk]
		if len(list) > 1 {
			conds = append(conds, fmt.Sprintf("RepeatedResourceWarning: Resource %s/%s/%s/%s appeared %d times among application resources.", kk.g, kk.k, kk.ns, kk.name, len(list)))
		}
		out = append(out, list[len(list)-1])
	}
	return out, conds, nil
}
