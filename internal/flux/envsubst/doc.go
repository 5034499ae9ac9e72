// Package envsubst expands ${var} expressions in a text the way Flux's
// post-build variable substitution does: a port of
// github.com/fluxcd/pkg/envsubst v1.7.0 (a fork of drone/envsubst), the
// library kustomize-controller and `flux build` run, kept structure for
// structure (scanner, parser, functions, glob matcher) so that every input
// gives the library's output or its error.
//
// The dialect is not bash's: only the braced form ${VAR} is an expression
// ($VAR is literal text); "$$" is an escaped "$"; ${VAR=x}, ${VAR:=x},
// ${VAR:-x}, ${VAR:?x} and ${VAR:+x} all mean "x when VAR is empty or
// unset" (none assigns, none fails); ${VAR-x} and ${VAR+x} are parse
// errors ("missing closing brace"); lengths and offsets count bytes. The
// mapping decides what an unset variable is: Flux's non-strict mapping says
// every variable exists (undefined ones are empty), its strict mapping
// makes a bare ${VAR} (and every operator but the default ones) of an
// undefined VAR an error.
//
// Where the library panics (a substring with a negative length running
// before its offset), Eval returns the panic as an error instead.
//
// It imports only the standard library. See NOTICE.md for the licences of
// the code it was ported from.
package envsubst
