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
// It imports internal/flux (the Flux object), sigs.k8s.io/yaml (kustomize
// v5.8.1's types are decoded and encoded with it, as Flux does) and
// go.yaml.in/yaml/v3.
package generate
