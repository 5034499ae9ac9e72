// Package fluxcorpus checks `kpipe flux build kustomization` against what
// the flux CLI printed for the cases of the reference corpus: each case's
// argv is run in-process (package fluxcmd, the command kpipe runs) in the
// case's working directory, and its stdout, stderr and exit status are
// compared with flux's, byte for byte.
//
// testdata/ holds the corpus's synthetic cases (inputs written for kpipe,
// flux's argv, stdout and stderr), run by TestCases. TestRealCorpus runs
// the cases of real repositories and of flux2's own build-kustomization
// test data from a corpus directory named by $KPIPE_FLUX_CORPUS (fetched
// files are never committed here); TestRealCorpusBuildAll renders the
// corpus's whole clusters with build-all's machinery and compares them
// with flux's --recursive runs.
//
// It has no code of its own outside its tests.
package fluxcorpus
