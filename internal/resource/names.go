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
	v, ok := r.Annotations()[key]
	if !ok {
		return nil
	}
	return strings.Split(v, ",")
}
