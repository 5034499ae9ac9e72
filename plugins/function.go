package plugins

import (
	"context"
	"fmt"
	"os"

	"github.com/kpipe/kpipe/internal/resource"
)

// Function is one KRM function run outside a build, by `kpipe fn run`
// (package fnrun): the same runner as a build's function plugins, but its
// items carry no kustomize ID annotations and no --enable-alpha-plugins is
// needed (--enable-exec still is, for exec functions).
type Function struct {
	p *plugin
}

// IsFunction reports whether r carries a KRM function spec (the
// `config.kubernetes.io/function` annotation or one of its older
// spellings).
func IsFunction(r *resource.Resource) bool {
	_, ok, _ := functionSpec(r)
	return ok
}

// LoadFunction configures the KRM function whose spec c.Object carries;
// c.Role is ignored (a function transforms the items it is given).
func LoadFunction(c Config, o Options) (*Function, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	p := &plugin{role: Transformer, source: c.Source, dir: c.Dir, timeout: o.Timeout, warn: o.Warn,
		name: fmt.Sprintf("%s '%s'", c.Object.Kind(), c.Object.Name()), noIDs: true}
	cfg, err := configYAML(c.Object)
	if err != nil {
		return nil, p.fail("%v", err)
	}
	p.config = cfg
	spec, ok, err := functionSpec(c.Object)
	if err != nil {
		return nil, p.fail("%v", err)
	}
	if !ok {
		return nil, p.fail("the config carries no function spec (annotation config.kubernetes.io/function)")
	}
	if err := p.configureFunction(c, spec, o); err != nil {
		return nil, err
	}
	return &Function{p: p}, nil
}

// Describe names the function, its executable or image and its config.
func (f *Function) Describe() string { return f.p.Describe() }

// Run runs the function over copies of items (in a ResourceList, as its
// `items`, with index annotations) and returns the objects it printed, index
// annotations removed and path annotations kept, objects without one given
// the default `[<namespace>/]<kind>_<name>.yaml`. Error results, a failure or
// output that is not objects are errors naming the function.
func (f *Function) Run(ctx context.Context, items []*resource.Resource) ([]*resource.Resource, error) {
	if items == nil {
		items = []*resource.Resource{}
	}
	return f.p.invokeFunction(ctx, items)
}

// plainCopies are deep copies of the objects of rs.
func plainCopies(rs []*resource.Resource) []map[string]any {
	out := make([]map[string]any, len(rs))
	for i, r := range rs {
		out[i] = resource.CopyMap(r.Object())
	}
	return out
}
