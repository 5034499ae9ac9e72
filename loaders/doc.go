// Package loaders reads what a build needs from disk: it finds and strictly
// parses kustomization files, reads resource files, and enforces the load
// restrictor, so that no file outside a kustomization root is read unless the
// user asked for it.
//
// Every read goes through a Loader, which returns the file's bytes together
// with its absolute path; the build records both so that a stage's
// fingerprint covers every file the stage's output depends on.
//
// It imports nothing of kpipe: data flows from here to the engine.
package loaders
