// Package fetch fetches what a kustomization names by URL: git
// repositories (`resources` and `components` entries such as
// github.com/org/repo//dir?ref=v1, read with kustomize's rules by package
// giturl) with the git command, files over HTTP(S), and helm charts from
// chart repositories. Unlike kustomize, which clones on every build, a
// Fetcher keeps each checkout in kpipe's cache directory under the commit
// its ref resolved to, resolves a URL and ref once per run, never asks
// again for a ref that is a full commit id, and can build offline from
// what it kept.
//
// It imports giturl and yaml only, and neither net nor archive/tar (which
// link libc through cgo, a cost every run of the kpipe binary would pay
// when it starts): HTTP GETs and unpacking charts go through Options.Net,
// which package netfetch implements and the lean kpipe binary leaves out.
// Package engine uses it while loading the graph and pulling charts. (The
// remote cache, where build results go, is package cache/remote.)
package fetch
