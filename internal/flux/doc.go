// Package flux reads Flux Kustomization objects (kustomize.toolkit.fluxcd.io,
// v1 and what flux accepts of v1beta2) as `flux build kustomization` reads
// them, for kpipe's rendering of what Flux applies (issue 52):
//
//   - Find: the object named NAME in a --kustomization-file, flux's way
//     (the first match whose namespace is -n's or empty; every document
//     before it must decode as a Kustomization), with flux's refusals;
//   - Decode and Discover: every Flux Kustomization of a stream, of the
//     YAML files under a directory;
//   - Args.Check: flux build's refusals before it builds, in its order;
//   - FromObject and LocalPath: the children of --recursive.
//
// The objects are decoded with sigs.k8s.io/yaml into types that mirror
// Flux's API types (types.go): YAML 1.1 (`on` is true, `N` is false), a
// number in a string field becomes a string, unknown fields are dropped,
// and a value of the wrong shape is refused with flux's message.
//
// The kustomization built for an object's path is package generate's; the
// steps after kustomize (substitution, owner labels, SOPS masking,
// commonMetadata, flux's output) are package postbuild's, whose options
// Kustomization.PostBuild returns.
//
// It imports internal/flux/postbuild and sigs.k8s.io/yaml.
package flux
