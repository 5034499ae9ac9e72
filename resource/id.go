package resource

// ID identifies a resource within a build: its GVK, name and namespace.
type ID struct {
	GVK
	Name      string `json:"name,omitempty" yaml:"name,omitempty"`
	Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
}

// DefaultNamespace is the namespace an object without one is created in.
const DefaultNamespace = "default"

// clusterNamespace is the effective namespace of cluster-scoped objects; it
// cannot collide with a real namespace name.
const clusterNamespace = "_non_namespaceable_"

// String formats the ID as kustomize does in messages:
// "Kind.version.group/name.namespace".
func (id ID) String() string {
	ns, n := id.Namespace, id.Name
	if ns == "" {
		ns = "[noNs]"
	}
	if n == "" {
		n = "[noName]"
	}
	return id.GVK.String() + "/" + n + "." + ns
}

// EffectiveNamespace is the namespace the object lands in: "default" for a
// namespaced object without one, and a sentinel for cluster-scoped objects.
func (id ID) EffectiveNamespace() string {
	if id.IsClusterScoped() {
		return clusterNamespace
	}
	if id.Namespace == "" {
		return DefaultNamespace
	}
	return id.Namespace
}

// Key is the ID normalised so that two IDs naming the same object compare
// equal: an empty namespace and "default" are the same namespace.
func (id ID) Key() ID {
	id.Namespace = id.EffectiveNamespace()
	return id
}

// Equals reports whether id and o name the same object.
func (id ID) Equals(o ID) bool {
	return id.Name == o.Name && id.GVK == o.GVK && id.EffectiveNamespace() == o.EffectiveNamespace()
}

// SameGVKN reports whether id and o agree on GVK and name, ignoring the
// namespace.
func (id ID) SameGVKN(o ID) bool {
	return id.Name == o.Name && id.GVK == o.GVK
}
