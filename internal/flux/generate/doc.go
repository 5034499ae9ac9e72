// Package generate computes the kustomization `flux build kustomization`
// builds for a Flux Kustomization's path (fluxcd/pkg/kustomize's
// generator, as flux build runs it: with .sourceignore files,
// --ignore-paths and Flux's default ignore patterns), as bytes, without
// writing into the tree (flux writes it into the path and puts the
// original back afterwards; kpipe's build reads it in its place), and
// records every file, stat and directory listing it read.
//
// Everything is read through flux.FS (loaders.FS satisfies it). Resource
// files listed for a generated kustomization are parsed with a port of
// kustomize's resource-file checks (CheckResources) unless the caller
// gives its own. The ignore matcher is a port of fluxcd/pkg/sourceignore's
// (go-git's gitignore): the one Flux runs, whose rules (a pattern without
// a slash matches any component of the path, "last match wins", Flux's
// default patterns below the user's) kpipe's other matcher does not share.
//
// An existing kustomization file is re-encoded as Flux re-encodes it
// through kustomize v5.8.1's types: into loaders.Kustomization (kpipe's
// one schema) by way of a type made from it with v5.8.1's shape
// (shape.go), which decides what is dropped and what is coerced.
//
// It imports internal/flux (the Flux object), loaders (the kustomization
// schema), internal/resyaml (kyaml's document splitting), sigs.k8s.io/yaml (the decoding and encoding Flux uses) and
// go.yaml.in/yaml/v3.
package generate
