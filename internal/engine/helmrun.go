package engine

import (
	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/stages"
)

// ResolveHelm finds the helm binary o names, as a build does for its
// helmCharts: where it is, the digest of the binary (through files, when
// given: it keys the cache) and the environment it runs in. Callers that
// run helm themselves (Argo CD's Helm sources) run it with
// stages.RunHelm.
func ResolveHelm(o HelmOptions, files *cache.FileIndex) (stages.HelmSettings, error) {
	return resolveHelm(o, files)
}
