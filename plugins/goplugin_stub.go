//go:build nogoplugin

package plugins

import "errors"

// goPluginSupport says whether this build can load Go plugins.
const goPluginSupport = false

// openGoPlugin fails: this kpipe was built without Go plugin support.
func openGoPlugin(path string) (func(string) (any, error), error) {
	return nil, errors.New("this kpipe was built with -tags nogoplugin and cannot load Go plugins: build one that can with `" + GoPluginBuild + "` (from a clone of kpipe)")
}
