package engine

import (
	"testing"

	"github.com/kpipe/kpipe/internal/depstest"
)

// The packages on kpipe build's path link none of what links libc
// through cgo (a dynamically linked kpipe, about half a millisecond of
// every run's start): net and os/user (archive/tar imports it), and the
// standard plugin package, which also makes the linker keep every
// exported method. Downloads go through fetch.Net (package netfetch), the
// remote cache's backends are in cache/remote/backend, Go plugins are
// opened by the opener a program passes (Options.GoPlugins, package
// plugins/goplugin): only the programs that need them import them. This
// fails, naming the chain of imports, when a change links one again.
func TestBuildPathLinksNoCgo(t *testing.T) {
	banned := map[string]string{
		"net":         "links libc through cgo",
		"os/user":     "links libc through cgo",
		"archive/tar": "imports os/user",
		"plugin":      "links libc through cgo and keeps every exported method (pass Options.GoPlugins)",
	}
	for _, root := range []string{".", "../batch", "../argocd/render", "../flux/cluster", "../../cache"} {
		depstest.Check(t, root, "", banned)
	}
}
