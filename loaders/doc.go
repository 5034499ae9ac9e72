// Package loaders reads what a build needs: it finds and strictly parses
// kustomization files, reads resource files, and enforces the load
// restrictor, so that no file outside a kustomization root is read unless the
// user asked for it.
//
// Every read goes through a Loader, which returns the file's bytes together
// with its absolute path; the build records both so that a stage's
// fingerprint covers every file the stage's output depends on. A Loader
// reads through an FS, the read seam: Disk, or any fs.FS mounted at a path
// by NewFS (an in-memory tree, a git revision read from git's objects).
// The restrictor, the symlink rules and the errors are the same for all:
// paths are the tree's, resolved here one component at a time.
//
// It imports only resource (the object model) and the internal packages
// resyaml (its fast reader of block-style YAML) and fsread (bounded reads
// that refuse devices and FIFOs): data flows from here to the engine.
//
// Stability: kpipe's stable API is the packages kpipe and pluginapi. This
// package is an importable building block with no compatibility promise
// before v1: its names may change in any release.
package loaders
