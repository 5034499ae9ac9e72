// Package resource is kpipe's model of Kubernetes objects: a parsed object
// tree, its identity (group, version, kind, name, namespace), the build
// state that kustomize tracks for each object while it is being built
// (previous names, referrers, generator options, name prefixes and
// suffixes), and List, the ordered set of objects a stage works on. It is
// public so that code outside kpipe can write a stage (package stages):
// a stage's Run takes a *List.
//
// A Resource is parsed once and then shared: the output of a kustomization
// node is frozen, and a stage that wants to change a frozen resource works on
// a Clone (List.Edit makes one when needed). That rule is what lets one
// base feed many overlays without being parsed or copied again, and what
// makes a stage's output a pure function of its input.
//
// Object trees use the value types go.yaml.in/yaml/v3 produces when it
// decodes into interface{}: map[string]any, []any, string, bool, int,
// uint64, float64, time.Time and nil, plus EmptyNull for a null written
// without text (`x:`), which kustomize tells apart from `x: null`. An
// absent key, `x:`, `x: null` and `x: {}` are four different trees; use
// IsNull where both nulls mean the same. A map key below an object's top
// level that YAML does not read as a string is recorded (FieldKey), as
// kustomize fails on it.
//
// Reading YAML into resources (internal/resyaml) and the cache's binary
// encoding of lists (internal/rescodec) build on this package; it imports
// nothing of kpipe.
package resource
