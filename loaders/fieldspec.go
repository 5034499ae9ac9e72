package loaders

import (
	"fmt"
	"strings"

	"github.com/kpipe/kpipe/resource"
)

// FieldSpec names a field of the objects of some GVK: the objects selected
// by Group, Version and Kind (an empty part matches anything) have the field
// at Path. CreateIfNotPresent says whether a transformer may create the
// field (and the maps leading to it) where it is missing.
type FieldSpec struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Path               string `json:"path,omitempty"`
	CreateIfNotPresent bool   `json:"create,omitempty"`
}

// GVK returns the spec's selector.
func (fs FieldSpec) GVK() resource.GVK {
	return resource.GVK{Group: fs.Group, Version: fs.Version, Kind: fs.Kind}
}

// Matches reports whether the spec applies to objects of GVK g: every
// non-empty part of the spec's GVK must equal the same part of g.
func (fs FieldSpec) Matches(g resource.GVK) bool {
	return g.Selects(fs.GVK())
}

// String formats the spec as kustomize does in messages:
// "Kind.version.group:create:path".
func (fs FieldSpec) String() string {
	return fmt.Sprintf("%s:%v:%s", fs.GVK().String(), fs.CreateIfNotPresent, fs.Path)
}

// PathElements splits the spec's path into its elements, as kustomize does:
// on '/', except that a '/' right after a backslash belongs to the element
// (the backslash is dropped), so "metadata/annotations/a.io\/b" gives
// [metadata annotations a.io/b]. One leading '/' is ignored. Elements are
// returned as written: a "[]" suffix (a hint that the field is a sequence)
// and surrounding spaces are kept; Walk interprets them.
func (fs FieldSpec) PathElements() []string {
	return SplitFieldPath(fs.Path)
}

// SplitFieldPath splits a field spec path the way PathElements does.
func SplitFieldPath(path string) []string {
	parts := strings.Split(path, "/")
	if len(parts) > 1 && parts[0] == "" {
		parts = parts[1:]
	}
	if !strings.Contains(path, `\`) {
		return parts // no escaped slash to join back (most paths)
	}
	out := []string{parts[0]}
	for _, p := range parts[1:] {
		last := len(out) - 1
		if strings.HasSuffix(out[last], `\`) {
			out[last] = strings.TrimSuffix(out[last], `\`) + "/" + p
			continue
		}
		out = append(out, p)
	}
	return out
}
