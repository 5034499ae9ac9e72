// Package full is the complete set of kpipe's command-line extensions
// (ext.Set), for cmd/kpipe-full and the command line's tests.
//
// It imports internal/cli/ext and the packages the kpipe binary leaves out:
// cache/remote/backend, internal/fetch/netfetch, plugins/goplugin, internal/argocd/fleet/appsets, internal/flux/fluxcmd/fluxflags,
// internal/flux/helmrender.
package full

import (
	"context"

	"github.com/kpipe/kpipe/cache/remote/backend"
	"github.com/kpipe/kpipe/internal/argocd/fleet/appsets"
	"github.com/kpipe/kpipe/internal/cli/ext"
	"github.com/kpipe/kpipe/internal/fetch/netfetch"
	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/internal/flux/fluxcmd/fluxflags"
	"github.com/kpipe/kpipe/internal/flux/helmrender"
	"github.com/kpipe/kpipe/plugins/goplugin"
)

// Set returns every extension.
func Set() ext.Set {
	return ext.Set{
		Net:         netfetch.New(nil),
		RemoteCache: backend.Open,
		GoPlugins:   goplugin.Open,
		FluxFlags:   fluxflags.Parse,
		HelmReleases: func(o ext.HelmReleaseOptions) func(context.Context, cluster.HelmRelease) *cluster.Result {
			return helmrender.New(helmrender.Options{Engine: o.Engine, Remote: o.Remote, AllowV2Beta2: o.AllowV2Beta2}).Render
		},
		ApplicationSets: appsets.Expand,
	}
}
