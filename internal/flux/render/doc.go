// Package render builds Flux Kustomizations (kustomize.toolkit.fluxcd.io)
// on kpipe's engine as `flux build kustomization --dry-run` builds them:
// the kustomization flux would write into the path (package generate) is
// laid over the tree in memory (kpipe never writes into it), the path is
// built by engine.Build with kustomize-controller's settings (load
// restrictor none, builtins only, no helm, no reordering: Flux's
// accumulation order, kustomize v5.8.1's behaviours:
// engine.Options.Kustomize581), then package postbuild substitutes
// variables, labels owners, masks SOPS data and applies commonMetadata.
// Recursive follows the Flux Kustomizations a build renders, as flux build
// --recursive does. Errors are worded as flux words them (without its
// "✗ ").
//
// It imports internal/flux, internal/flux/generate, internal/flux/postbuild,
// internal/engine, internal/fetch, loaders and stages.
package render
