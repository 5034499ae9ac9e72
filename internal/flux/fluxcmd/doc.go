// Package fluxcmd is `kpipe flux build kustomization` (alias ks): the
// arguments and flags of `flux build kustomization`, parsed as flux's
// command line (cobra's pflag) parses them: those whose meaning under pflag
// is plain by ParseCommon, without pflag (which imports net: the kpipe
// binary leaves it out), the others by Env.ParseFlags (fluxflags.Parse,
// pflag itself; in the kpipe binary, a stand-in that hands the run over to
// kpipe-full), flux's refusals, its output on
// stdout and its errors ("✗ " and the message on stderr, exit status 1),
// so that a script can run kpipe where it ran flux. The build is package
// render's, on kpipe's engine and cache; without --dry-run it refuses
// (kpipe reads no cluster).
//
// It imports internal/engine, internal/fetch, internal/flux,
// internal/flux/cluster (one Flux Kustomization from its record),
// internal/flux/postbuild, internal/flux/render and loaders; never pflag,
// nor anything that links net.
package fluxcmd
