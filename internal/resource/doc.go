// Package resource is kpipe's model of Kubernetes objects: a parsed object
// tree, its identity (group, version, kind, name, namespace) and the build
// state that kustomize tracks for each object while it is being built
// (previous names, generator options, name prefixes and suffixes).
//
// A Resource is parsed once and then shared: the output of a kustomization
// node is frozen, and a stage that wants to change a frozen resource works on
// a Clone. That rule is what lets one base feed many overlays without being
// parsed or copied again, and what makes a stage's output a pure function of
// its input.
//
// Object trees use the value types go.yaml.in/yaml/v3 produces when it
// decodes into interface{}: map[string]any, []any, string, bool, int,
// uint64, float64, time.Time and nil, plus EmptyNull for a null written
// without text (`x:`), which kustomize tells apart from `x: null`. An
// absent key, `x:`, `x: null` and `x: {}` are four different trees. The
// decoder also corrects what kustomize reads differently from yaml.v3
// (folded block scalars, keys that are not strings; see nodefix.go), so the
// output package can reproduce kustomize's bytes. Documents in the plain
// block style of generated CRDs are read by fastDecode (fastyaml.go)
// straight into the same trees; anything else goes through yaml.v3.
//
// It imports nothing of kpipe; every other package builds on it.
package resource
