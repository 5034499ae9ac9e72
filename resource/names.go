package resource

import "strings"

// Build annotations in which kustomize records the name prefixes and
// suffixes added to an object. kpipe keeps them in the object's annotations
// too, as kustomize does, so that every stage sees the same object kustomize
// would; the finishing step of a build removes them.
const (
	PrefixesAnnotation = "internal.config.kubernetes.io/prefixes"
	SuffixesAnnotation = "internal.config.kubernetes.io/suffixes"
)

// AddNamePrefix records that the prefix p was added to the object's name
// (kustomize's AddNamePrefix). An empty prefix records nothing.
func (r *Resource) AddNamePrefix(p string) { r.appendCSVAnnotation(PrefixesAnnotation, p) }

// AddNameSuffix records that the suffix s was added to the object's name
// (kustomize's AddNameSuffix). An empty suffix records nothing.
func (r *Resource) AddNameSuffix(s string) { r.appendCSVAnnotation(SuffixesAnnotation, s) }

// NamePrefixes returns the name prefixes recorded by AddNamePrefix, oldest
// first, or nil when there are none.
func (r *Resource) NamePrefixes() []string { return r.csvAnnotation(PrefixesAnnotation) }

// NameSuffixes returns the name suffixes recorded by AddNameSuffix, oldest
// first, or nil when there are none.
func (r *Resource) NameSuffixes() []string { return r.csvAnnotation(SuffixesAnnotation) }

// appendCSVAnnotation appends value to a comma-separated annotation.
func (r *Resource) appendCSVAnnotation(key, value string) {
	if value == "" {
		return
	}
	r.SetAnnotation(key, strings.Join(append(r.csvAnnotation(key), value), ","))
}

// csvAnnotation splits a comma-separated annotation; nil when it is absent.
func (r *Resource) csvAnnotation(key string) []string {
	v, ok := r.Annotation(key)
	if !ok {
		return nil
	}
	return strings.Split(v, ",")
}

// Build annotations in which kustomize keeps the build state that kpipe
// keeps beside the object tree (previous names, referrers, generator
// options).
const (
	previousNamesAnnotation      = "internal.config.kubernetes.io/previousNames"
	previousNamespacesAnnotation = "internal.config.kubernetes.io/previousNamespaces"
	previousKindsAnnotation      = "internal.config.kubernetes.io/previousKinds"
	refByAnnotation              = "internal.config.kubernetes.io/refBy"
	generatorBehaviorAnnotation  = "internal.config.kubernetes.io/generatorBehavior"
	needsHashSuffixAnnotation    = "internal.config.kubernetes.io/needsHashSuffix"
)

// StateAnnotations returns the build annotations kustomize would carry in
// the object's metadata.annotations for the build state kpipe keeps beside
// the tree, or nil when there is none. A stage that hands the whole object
// to foreign code (a JSON patch) adds them first, so that the object has
// an annotations map exactly when kustomize's would, and removes them
// after with RemoveStateAnnotations.
func (r *Resource) StateAnnotations() map[string]string {
	if !r.HasBuildState() {
		return nil
	}
	out := map[string]string{}
	if len(r.prev) > 0 {
		var names, nss, kinds []string
		for _, p := range r.prev {
			names, nss, kinds = append(names, p.Name), append(nss, p.Namespace), append(kinds, p.Kind)
		}
		out[previousNamesAnnotation] = strings.Join(names, ",")
		out[previousNamespacesAnnotation] = strings.Join(nss, ",")
		out[previousKindsAnnotation] = strings.Join(kinds, ",")
	}
	if len(r.refBy) > 0 {
		ids := make([]string, len(r.refBy))
		for i, id := range r.refBy {
			ids[i] = id.String()
		}
		out[refByAnnotation] = strings.Join(ids, ",")
	}
	if r.Gen != nil {
		b := r.Gen.Behavior
		if b == "" {
			b = "unspecified"
		}
		out[generatorBehaviorAnnotation] = b
		if r.Gen.NeedsHash {
			out[needsHashSuffixAnnotation] = "enabled"
		}
	}
	return out
}

// IsStateAnnotation reports whether key is one of the annotations
// StateAnnotations returns.
func IsStateAnnotation(key string) bool {
	switch key {
	case previousNamesAnnotation, previousNamespacesAnnotation, previousKindsAnnotation,
		refByAnnotation, generatorBehaviorAnnotation, needsHashSuffixAnnotation:
		return true
	}
	return false
}
