// Package cluster renders a whole Flux cluster, as `kpipe flux build-all`
// does: starting from the Flux Kustomizations given (the one that applies
// a cluster directory, as flux bootstrap's or flux-operator's does), every
// Flux Kustomization their renderings hold is rendered in turn, as flux
// build --recursive and flux-local follow them, each once, each a node of
// the run whose output is written on its own (OUT/<namespace>/<name>.yaml).
//
// A node is rendered by package render (the generated kustomization, the
// engine with Flux's settings, the post-build steps) and cached by
// content: its key covers the Flux object as rendered, its path relative
// to the source, the substitution variables and the settings; its record
// (package rootindex) lists every input it read (the generation's files,
// stats and directory listings, the engine's inputs of every
// kustomization it reached), so that a run where a node's inputs are
// unchanged takes its output from the cache without building it.
//
// spec.postBuild.substituteFrom is resolved from the ConfigMaps and
// Secrets the cluster's own renderings hold (the cluster-settings
// pattern): a node waits until the nodes that may provide them are
// rendered (in waves; a node whose references are still missing when
// nothing else can be rendered is rendered without them: kustomize-
// controller would fail on one that is not optional, but one the tree
// does not render is most often made in the cluster by another tool, so
// kpipe warns and goes on).
// DryRun reads none, as flux build --dry-run. SOPS-encrypted Secrets
// cannot be read offline: their variables are left out, with a warning.
// dependsOn orders nothing; it is reported. A Flux Kustomization that
// renders one of its ancestors (a cycle) is an error naming the objects.
//
// Options.HelmReleases, when set, renders the HelmReleases the cluster
// renders, each a node of its own, once every Flux Kustomization is
// rendered: it is given the Flux sources and the ConfigMaps and Secrets
// the cluster renders, and where sources lie (package
// internal/flux/helmrender implements it).
//
// One renders a single Flux Kustomization the same way, from its record
// when nothing it read changed (`kpipe flux build kustomization`).
//
// It imports cache, internal/batch (the report, the output directory,
// shards), internal/engine, internal/fetch, internal/flux,
// internal/flux/postbuild, internal/flux/render, internal/rootindex,
// loaders and stages (a run's builds share their decoded patches).
package cluster
