// Package engine is kpipe's engine: it turns kustomization directories into
// resources.
//
// Build (entry.go) is the one way to build: every command and the public
// kpipe package call it. A build has two phases. Load (graph.go) reads every kustomization file
// reachable from the roots through the loaders package and makes one Node
// per kustomization or component, with an edge for every `resources`,
// `components`, `generators`, `transformers` or `validators` entry that
// names a directory; a directory reached from several parents is one node
// per build context (the namespace it inherits, the root's buildMetadata
// with its origin path, which kustomize hands down, and the `openapi`
// schema a referrer declares: openapi.go). Run (run.go) walks that graph with package
// dag, dependencies first and independent nodes concurrently, and builds
// each node exactly once: it accumulates the node's resources, applies its
// components, and runs its transformer stages (package stages). A root's
// output is then finished (name references, legacy vars, local configs,
// ordering) and written by package output.
//
// A graph is read through one loaders.FS (LoadOptions.FS): the disk, a
// git revision or an in-memory tree; remote bases are checkouts on disk.
// The cache's file index is that tree's (cache.FileIndex.On). A plugin or
// KRM function of a tree not on disk runs in a copy of its kustomization's
// directory, written for the build (realdir.go).
//
// It imports loaders, dag, stages, plugins, cache, resource and the
// internal packages resyaml, rescodec, output, fetch, giturl, rootindex
// and fsread; only the CLI, the internal packages batch, diff, affected
// and profile, and the public kpipe package (a thin shell over Build)
// import it.
package engine
