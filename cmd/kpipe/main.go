// A kpipe process lives seconds at most: the runtime need not start a
// goroutine that follows a container's CPU limit as it changes (Go 1.25's
// updatemaxprocs). GOMAXPROCS still starts at the container's limit.

//go:debug updatemaxprocs=0

// Command kpipe renders Kubernetes configuration the way `kustomize build`
// does, as a pipeline of cached stages over a graph of kustomizations
// (internal/cli is its command line).
//
// It links no extension (internal/cli/ext): no network, no Go plugins, no
// Flux flag parser or HelmReleases, no Argo CD ApplicationSets, so that
// the executable `go build` and `go install` make is statically linked and
// starts in the time a short command can afford. A run that needs one of
// them is handed over to kpipe-full, which has them all.
package main

import (
	"os"

	"github.com/kpipe/kpipe/internal/cli"
	"github.com/kpipe/kpipe/internal/cli/ext"
)

func main() { os.Exit(cli.Main(ext.Set{})) }
