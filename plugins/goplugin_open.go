//go:build !nogoplugin

package plugins

import goplugin "plugin"

// goPluginSupport says whether this build can load Go plugins.
const goPluginSupport = true

// openGoPlugin loads a Go plugin with the standard plugin package and
// returns its symbol lookup. (Linking the plugin package makes kpipe's
// executable about half again as large, as the linker must keep every
// exported method; build with -tags nogoplugin to leave it out.)
func openGoPlugin(path string) (func(string) (any, error), error) {
	lib, err := goplugin.Open(path)
	if err != nil {
		return nil, err
	}
	return func(name string) (any, error) { return lib.Lookup(name) }, nil
}
