// Package fluxcorpus checks kpipe's Flux rendering pieces against what the
// flux CLI printed for the cases of the reference corpus: each case's Flux
// Kustomization is found (package flux), its kustomization generated
// (package generate), built by a kustomize binary over a copy of the tree
// holding the generated file (kpipe itself writes nothing into a tree:
// the copy stands in for phase 2's in-memory overlay), and post-built
// (package postbuild); the bytes are compared with flux's stdout, or the
// error with flux's stderr.
//
// testdata/ holds the corpus's synthetic cases (inputs written for kpipe,
// flux's argv, stdout and stderr), run by TestCases when a kustomize
// binary is found. TestRealCorpus runs the cases of real repositories and
// of flux2's own build-kustomization test data from a corpus directory
// named by $KPIPE_FLUX_CORPUS (fetched files are never committed here).
//
// It has no code of its own outside its tests.
package fluxcorpus
