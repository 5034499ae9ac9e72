// Package fieldspec says where in an object each builtin transformer reads
// and writes: field specs, kustomize's default tables, and the
// `configurations:` overrides.
//
// A field spec is a GVK selector plus a slash-separated path. Config holds
// the lists of field specs for every builtin transformer (kustomize's
// TransformerConfig); Defaults returns kustomize's builtin tables, Parse reads
// a `configurations:` file, Merge combines configurations with kustomize's
// de-duplication and ordering rules, and Walk visits the fields a spec
// reaches in an object tree the way kustomize's fieldspec filter does.
//
// A field spec's type is the kustomization schema's (loaders.FieldSpec).
// It imports only loaders and resource.
package fieldspec

import (
	"strings"
	"sync"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// appendSplitPath appends SplitPath(path) to dst: into a caller's array,
// a path without escaped slashes (most) is split without allocating.
func appendSplitPath(dst []string, path string) []string {
	if strings.Contains(path, `\`) {
		return append(dst, loaders.SplitFieldPath(path)...)
	}
	start := len(dst)
	for {
		i := strings.IndexByte(path, '/')
		if i < 0 {
			dst = append(dst, path)
			break
		}
		dst = append(dst, path[:i])
		path = path[i+1:]
	}
	if len(dst)-start > 1 && dst[start] == "" {
		dst = append(dst[:start], dst[start+1:]...)
	}
	return dst
}

// NameBackReference lists where objects refer to objects of one GVK by name:
// Group, Version and Kind select the objects referred to, and FieldSpecs
// are the fields in which other objects (the referrers) hold their names.
type NameBackReference struct {
	Group      string              `json:"group,omitempty" yaml:"group,omitempty"`
	Version    string              `json:"version,omitempty" yaml:"version,omitempty"`
	Kind       string              `json:"kind,omitempty" yaml:"kind,omitempty"`
	FieldSpecs []loaders.FieldSpec `json:"fieldSpecs,omitempty" yaml:"fieldSpecs,omitempty"`
}

// GVK returns the GVK of the objects referred to.
func (n NameBackReference) GVK() resource.GVK {
	return resource.GVK{Group: n.Group, Version: n.Version, Kind: n.Kind}
}

// ConflictError is the error MergeSpecs (and so Merge) reports when the same
// field spec appears with and without create. Its text is kustomize's.
type ConflictError struct {
	// Held is the spec already in the list; Incoming the one merged in.
	Held, Incoming loaders.FieldSpec
}

// Error returns kustomize's message, "conflicting fieldspecs".
func (e *ConflictError) Error() string { return "conflicting fieldspecs" }

// MergeSpecs appends to a copy of base each incoming spec that base does not
// already hold, as kustomize's FsSlice.MergeAll does. A spec is already held
// when some spec in the list has the same path and a GVK that the incoming
// spec's GVK selects (so an incoming spec without a kind matches a held spec
// of any kind); if the two disagree on create, the merge fails with
// a *ConflictError. The result is not sorted. base and incoming are not changed.
func MergeSpecs(base []loaders.FieldSpec, incoming ...loaders.FieldSpec) ([]loaders.FieldSpec, error) {
	out := make([]loaders.FieldSpec, len(base), len(base)+len(incoming))
	copy(out, base)
	for _, x := range incoming {
		i := indexSpec(out, x)
		if i < 0 {
			out = append(out, x)
			continue
		}
		if out[i].CreateIfNotPresent != x.CreateIfNotPresent {
			return nil, &ConflictError{Held: out[i], Incoming: x}
		}
	}
	return out, nil
}

// indexSpec finds the first spec of s that x duplicates.
func indexSpec(s []loaders.FieldSpec, x loaders.FieldSpec) int {
	for i, e := range s {
		if e.Path == x.Path && e.GVK().Selects(x.GVK()) {
			return i
		}
	}
	return -1
}

// defaultRanks ranks kinds in kustomize's default order; computed once,
// never modified.
var defaultRanks = sync.OnceValue(func() map[string]int {
	return resource.KindRanks(resource.DefaultKindOrder())
})

// lessGVK reports whether a sorts before b in kustomize's GVK order (the
// order Merge sorts field specs and name references by).
func lessGVK(a, b resource.GVK) bool {
	rank := defaultRanks()
	if ra, rb := rank[a.Kind], rank[b.Kind]; ra != rb {
		return ra < rb
	}
	return a.OrderKey() < b.OrderKey()
}
