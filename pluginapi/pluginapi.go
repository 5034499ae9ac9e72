// Package pluginapi is the interface of kpipe's Go plugins: a generator or
// transformer compiled with `go build -buildmode=plugin` into `<Kind>.so`
// and loaded by kpipe (package plugins) with the standard library's plugin
// package. It depends on nothing of kpipe, so that a plugin does not either:
// objects are plain decoded YAML (Object), configs are YAML bytes.
//
// # Writing a plugin
//
// A plugin is a `main` package that exports a constructor named by Symbol:
//
//	package main
//
//	import (
//		"context"
//
//		"github.com/kpipe/kpipe/pluginapi"
//	)
//
//	type labeler struct{ value string }
//
//	// NewPlugin is looked up by kpipe; it returns a fresh plugin per run.
//	func NewPlugin() any { return &labeler{} }
//
//	func (l *labeler) Config(config []byte, dir string) error { ... }
//	func (l *labeler) Transform(ctx context.Context, objs []pluginapi.Object) ([]pluginapi.Object, error) { ... }
//
//	var _ pluginapi.Transformer = (*labeler)(nil) // checked when compiling
//
// Build it into the plugin home, where kustomize looks for exec plugins,
// with the Kind of its config as the file name:
//
//	go build -buildmode=plugin -o ~/.config/kustomize/plugin/example.com/v1/labeler/Labeler.so .
//
// kpipe calls the constructor once per run, then Config with the config
// object as YAML and the kustomization's directory, then Generate (a config
// listed under `generators:`) or Transform (under `transformers:` or
// `validators:`). Transform receives copies of the objects, each annotated
// with its ID (`kustomize.config.k8s.io/id`), and returns the new set: an
// object with the ID of an input object replaces it, others are added,
// input objects left out are removed. Generated objects may carry the
// annotations `kustomize.config.k8s.io/needs-hash` and
// `kustomize.config.k8s.io/behavior`, as with exec plugins.
//
// Returned objects may hold any values YAML can encode (strings, bools,
// numbers, slices and maps of them); kpipe encodes and decodes them, so
// they never share memory with kpipe. A plugin should be a pure function of
// its config and input: kpipe caches its output under a key that covers the
// config, the input, the digest of the .so file and kpipe's environment
// (which the plugin can read); --no-cache-plugins is for the others.
//
// # Version skew
//
// Go plugins share the process with kpipe, and the Go runtime refuses to
// load one unless it was built with the same Go toolchain version, the same
// build flags (-race, -trimpath, tags, GOFLAGS, cgo on) and the same
// version of every package both import (this package, and any module the
// plugin shares with kpipe, at the versions in kpipe's go.sum). A kpipe
// built without cgo, or a program that leaves the plugin package out
// (passes no opener of package plugins/goplugin, which makes the
// executable about a third smaller), cannot load plugins at all. So a Go plugin must be
// rebuilt for every kpipe release; the error kpipe reports then quotes the
// runtime's reason. Exec plugins and KRM functions have none of these
// constraints and are the better choice for plugins shared between teams.
//
// Go plugins also have no isolation: a crash (a panic is reported as an
// error, but not a fault in cgo code or os.Exit) takes kpipe down, the
// plugin sees kpipe's memory and the whole file system, and a plugin that
// does not return within --plugin-timeout is abandoned, still running.
// Once loaded, a plugin stays loaded for the life of the process; two .so
// files built from the same package path cannot both be loaded.
package pluginapi

import "context"

// Symbol is the name of the constructor a plugin exports: a function with
// no arguments returning a new plugin, as `func() any` or
// `func() pluginapi.Plugin`.
const Symbol = "NewPlugin"

// Object is one Kubernetes object as decoded from YAML: maps with string
// keys, slices, strings, bools, int/int64/float64 and nil.
type Object = map[string]any

// Plugin is what every plugin implements.
type Plugin interface {
	// Config receives the plugin's config object as YAML and the absolute
	// directory of the kustomization that lists it: relative paths in the
	// config are meant from there (kpipe's working directory is not
	// changed for a plugin). An error fails the build.
	Config(config []byte, dir string) error
}

// Generator is a plugin listed under `generators:`.
type Generator interface {
	Plugin
	// Generate returns the objects the config asks for.
	Generate(ctx context.Context) ([]Object, error)
}

// Transformer is a plugin listed under `transformers:` or `validators:`.
type Transformer interface {
	Plugin
	// Transform returns objs as the config makes them.
	Transform(ctx context.Context, objs []Object) ([]Object, error)
}
