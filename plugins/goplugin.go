package plugins

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/pluginapi"
	"github.com/kpipe/kpipe/resource"
)

// modeGo is a Go plugin (`<Kind>.so`, package pluginapi).
const modeGo = "go-plugin"

// configureGo prepares a Go plugin found at so: it is opened now, so that
// a plugin that cannot load fails the build before anything runs. The
// plugin runs inside kpipe and sees its environment, which the fingerprint
// therefore covers as it does for exec plugins.
func (p *plugin) configureGo(c Config, o Options, so string) error {
	p.mode, p.path, p.openGo = modeGo, so, o.GoPlugins
	p.env = environ(o.Environ, c.Dir)
	d, err := fileDigest(so)
	if err != nil {
		return p.fail("%v", err)
	}
	p.digest = d
	if _, err := p.goConstructor(); err != nil {
		return err
	}
	return nil
}

// ErrNoGoPlugins is the error (wrapped) of a Go plugin that a program
// without an opener (Options.GoPlugins nil) was asked to load.
var ErrNoGoPlugins = errors.New("this kpipe binary cannot load Go plugins")

// GoPluginBuild is how to build the kpipe that loads Go plugins
// (kpipe-full, which kpipe hands such a run over to) with cgo: the
// release archives and images are built without it, and cannot.
const GoPluginBuild = "CGO_ENABLED=1 go install ./cmd/kpipe-full"

// openHint is what to add to the error of a Go plugin that would not load
// (msg): what to do about it, where kpipe can tell.
func openHint(msg string) string {
	switch {
	case strings.Contains(msg, "not implemented"): // package plugin without cgo
		return " (this kpipe was built without cgo, which loading Go plugins needs; release archives and images are: build one that can with `" + GoPluginBuild + "`, and the plugin with the same Go and flags)"
	case strings.Contains(msg, "different version"):
		return " (a Go plugin must be built with the same Go version, build flags and package versions as kpipe: rebuild it; see package pluginapi)"
	}
	return ""
}

// goConstructor opens the plugin and returns its constructor.
func (p *plugin) goConstructor() (func() any, error) {
	if p.openGo == nil {
		return nil, fmt.Errorf("%s: cannot load the Go plugin: %w", p.Describe(), ErrNoGoPlugins)
	}
	lookup, err := p.openGo(p.path)
	if err != nil {
		return nil, p.fail("cannot load the Go plugin: %v%s", err, openHint(err.Error()))
	}
	sym, err := lookup(pluginapi.Symbol)
	if err != nil {
		return nil, p.fail("the Go plugin exports no %s constructor (see package pluginapi; kustomize's own Go plugins are not kpipe plugins)", pluginapi.Symbol)
	}
	switch f := sym.(type) {
	case func() any:
		return f, nil
	case func() pluginapi.Plugin:
		return func() any { return f() }, nil
	}
	return nil, p.fail("the Go plugin's %s is a %T, want func() any (see package pluginapi)", pluginapi.Symbol, sym)
}

// invokeGo runs a Go plugin: a fresh instance, configured, then Generate
// (in is nil) or Transform over copies of in. It runs in its own goroutine
// so that the timeout holds; a panic is an error.
func (p *plugin) invokeGo(ctx context.Context, in []*resource.Resource) ([]*resource.Resource, error) {
	newPlugin, err := p.goConstructor()
	if err != nil {
		return nil, err
	}
	var objs []pluginapi.Object
	if in != nil {
		if objs, err = withIDs(in); err != nil {
			return nil, p.fail("%v", err)
		}
	}
	tctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	type result struct {
		objs []pluginapi.Object
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if v := recover(); v != nil {
				r = result{err: fmt.Errorf("crashed: panic: %v%s", v, firstLines("stack", debug.Stack()))}
			}
			done <- r
		}()
		r.objs, r.err = callGo(tctx, newPlugin(), p.config, p.dir, in != nil, objs)
	}()
	var r result
	select {
	case r = <-done:
	case <-tctx.Done():
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, p.fail("timed out after %s (raise --plugin-timeout if it needs longer); a Go plugin cannot be stopped and keeps running", p.timeout)
	}
	if r.err != nil {
		return nil, p.fail("%v", r.err)
	}
	// Encoding and decoding copies the objects out of the plugin's hands
	// and checks them as any plugin output is checked.
	var data []byte
	for i, o := range r.objs {
		b, err := output.MarshalValue(o)
		if err != nil {
			return nil, p.fail("output object %d cannot be encoded: %v", i, err)
		}
		if i > 0 {
			data = append(data, "---\n"...)
		}
		data = append(data, b...)
	}
	rs, err := resyaml.Decode(data)
	if err != nil {
		return nil, p.fail("its output is not valid objects: %v", err)
	}
	return rs, nil
}

// callGo configures a plugin instance and runs it in its role.
func callGo(ctx context.Context, inst any, config []byte, dir string, transform bool, objs []pluginapi.Object) ([]pluginapi.Object, error) {
	pl, ok := inst.(pluginapi.Plugin)
	if !ok {
		return nil, fmt.Errorf("the plugin (%T) has no Config method (see package pluginapi)", inst)
	}
	if err := pl.Config(config, dir); err != nil {
		return nil, fmt.Errorf("Config: %w", err)
	}
	if transform {
		t, ok := inst.(pluginapi.Transformer)
		if !ok {
			return nil, errors.New("the plugin is listed as a transformer but has no Transform method")
		}
		out, err := t.Transform(ctx, objs)
		if err != nil {
			return nil, fmt.Errorf("Transform: %w", err)
		}
		return out, nil
	}
	g, ok := inst.(pluginapi.Generator)
	if !ok {
		return nil, errors.New("the plugin is listed as a generator but has no Generate method")
	}
	out, err := g.Generate(ctx)
	if err != nil {
		return nil, fmt.Errorf("Generate: %w", err)
	}
	return out, nil
}
