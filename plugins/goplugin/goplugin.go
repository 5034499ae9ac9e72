// Package goplugin opens Go plugins (`go build -buildmode=plugin` .so
// files, see package pluginapi) with the standard plugin package, for
// package plugins: a program that wants Go plugins passes Open as
// plugins.Options.GoPlugins (engine.Options.GoPlugins).
//
// It is a package of its own so that a program can leave it out: linking
// the plugin package needs cgo (libc, a dynamically linked executable) and
// makes the linker keep every exported method of every type, which makes
// kpipe's executable about half again as large. Without an opener, a Go
// plugin fails to load with plugins.ErrNoGoPlugins; exec plugins, KEP-993
// plugins and KRM functions do not need it.
//
// It imports the standard plugin package and nothing of kpipe.
package goplugin

import "plugin"

// Open loads the Go plugin at path and returns its symbol lookup.
func Open(path string) (func(string) (any, error), error) {
	lib, err := plugin.Open(path)
	if err != nil {
		return nil, err
	}
	return func(name string) (any, error) { return lib.Lookup(name) }, nil
}
