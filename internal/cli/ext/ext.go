// Package ext names the extensions of kpipe's command line (Set): what
// cmd/kpipe-full links and cmd/kpipe leaves out. Package internal/cli runs
// with a Set; internal/cli/full makes the complete one.
//
// It imports cache/remote, internal/argocd/fleet, internal/engine, internal/fetch,
// internal/flux/cluster and internal/flux/fluxcmd, for their types: none
// of them links what a Set holds.
package ext

import (
	"context"

	"github.com/kpipe/kpipe/cache/remote"
	"github.com/kpipe/kpipe/internal/argocd/fleet"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/internal/flux/fluxcmd"
)

// Set holds the parts of kpipe that the kpipe binary leaves out, for
// what linking them costs every process before it reads a file: the
// network (net and archive/tar link libc through cgo: a dynamically
// linked executable), Go plugins (the plugin package: cgo, and a linker
// that keeps every exported method), Flux's flag parser (pflag links
// net; fluxcmd parses the common command lines without it), Flux's HelmReleases (semver, net/http) and Argo CD's
// ApplicationSets (sprig). Measured: a warm `kpipe build` of a small root
// 4.8 -> 3.4 ms, `kpipe version` 4.5 -> 3.2 ms (benchmarks/RESULTS.md).
//
// cmd/kpipe-full sets every field (full.Set); cmd/kpipe sets none. A run of a binary
// without one that needs it stops, prints nothing of its own, and hands
// its command line over to kpipe-full (beside kpipe, or on PATH), which
// runs it from the start: the same output, one process start later.
// Downloads are the exception: each runs in a kpipe-full process of its
// own, and the run goes on (Net).
type Set struct {
	// Net makes the downloads: URL resources, chart indexes and archives
	// (netfetch.New). Without it, each download is a `kpipe-full net`
	// process, and the run stays where it is.
	Net fetch.Net
	// RemoteCache opens a remote cache (backend.Open: HTTP, S3).
	RemoteCache func(rawURL string, o remote.Options) (remote.Backend, error)
	// GoPlugins opens a Go plugin (goplugin.Open: the plugin package).
	GoPlugins func(path string) (func(string) (any, error), error)
	// FluxFlags parses the flags of `flux build kustomization` that
	// fluxcmd.ParseCommon declines, with flux's parser (fluxflags.Parse:
	// pflag).
	FluxFlags fluxcmd.Parser
	// HelmReleases renders Flux HelmReleases with helm, on the engine
	// options and fetcher given (helmrender.New(...).Render).
	HelmReleases func(o HelmReleaseOptions) func(context.Context, cluster.HelmRelease) *cluster.Result
	// ApplicationSets expands Argo CD ApplicationSets (appsets.Expand).
	ApplicationSets fleet.Expander
}

// HelmReleaseOptions are what Set.HelmReleases renders with.
type HelmReleaseOptions struct {
	Engine       engine.Options
	Remote       *fetch.Fetcher
	AllowV2Beta2 bool
}

// Complete says every extension is set: a binary with s hands nothing
// over.
func (s *Set) Complete() bool {
	return s.Net != nil && s.RemoteCache != nil && s.GoPlugins != nil && s.FluxFlags != nil &&
		s.HelmReleases != nil && s.ApplicationSets != nil
}
