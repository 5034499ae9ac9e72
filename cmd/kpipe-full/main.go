// A kpipe process lives seconds at most: see cmd/kpipe.

//go:debug updatemaxprocs=0

// Command kpipe-full is kpipe with every extension (ext.Set): the
// network (URL resources, charts, the remote cache), Go plugins, Flux's
// `flux build kustomization` and HelmReleases, Argo CD's ApplicationSets.
// kpipe hands a run over to it when the run needs one of them; it takes
// the same command line as kpipe, and can be run in its place.
package main

import (
	"os"

	"github.com/kpipe/kpipe/internal/cli"
	"github.com/kpipe/kpipe/internal/cli/full"
)

func main() { os.Exit(cli.Main(full.Set())) }
