package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/plugins"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
)

// runGenerators runs the node's generators into acc, in kustomize's order:
// configMapGenerator entries, secretGenerator entries, helmCharts, then the
// plugin configs listed under `generators:`. The listed configs are loaded before
// any generator runs; each generator is configured (its files read) just
// before it runs.
func (b *Builder) runGenerators(ctx context.Context, n *Node, acc *Accumulation) error {
	k := n.K
	var listed []*resource.Resource
	var entries []string // the generators entry of each listed config
	for _, p := range inlineFirst(k.Generators) {
		configs, err := b.pluginConfigs(ctx, n, p)
		if err != nil {
			return fmt.Errorf("loading generator plugins: %w", err)
		}
		listed = append(listed, configs...)
		for range configs {
			entries = append(entries, p)
		}
	}
	read := readFile(n)
	run := func(field string, i int, g loaders.GeneratorArgs, make func(loaders.GeneratorArgs, stages.ReadFile) (stages.Stage, error)) error {
		entry := fmt.Sprintf("%s %q", field, g.Name)
		if g.Name == "" {
			entry = fmt.Sprintf("%s entry %d", field, i+1)
		}
		// The kustomization's generatorOptions merged into the entry's
		// options (g is a copy of the entry).
		g.Options = stages.MergeGeneratorOptions(g.Options, k.GeneratorOptions)
		s, err := make(g, read)
		if err == nil && n.Origin != nil {
			s, err = stages.GeneratorWithOrigin(s, n.Origin.BuiltinOrigin(n.KustFileName(), s.Kind()))
		}
		if err != nil {
			return fmt.Errorf("%s: %s: %w", n.File.Path, entry, err)
		}
		if err := b.runStage(ctx, s, acc.Resources); err != nil {
			return fmt.Errorf("%s: %w", n.File.Path, err)
		}
		return nil
	}
	for i, g := range k.ConfigMapGenerator {
		if err := run("configMapGenerator", i, g, stages.NewConfigMapGenerator); err != nil {
			return err
		}
	}
	for i, g := range k.SecretGenerator {
		secret := func(cfg loaders.GeneratorArgs, read stages.ReadFile) (stages.Stage, error) {
			return stages.NewSecretGeneratorFor(cfg, read, b.kustomizeRelease())
		}
		if err := run("secretGenerator", i, g, secret); err != nil {
			return err
		}
	}
	if err := b.runHelmCharts(ctx, n, acc); err != nil {
		return err
	}
	for i, c := range listed {
		s, err := b.pluginStage(ctx, n, entries[i], c, plugins.Generator)
		if err != nil {
			return rewordDisabled(fmt.Errorf("%s: generators: %w", n.File.Path, err), err, "loading generator plugins: failed to load generator: ")
		}
		o, err := stages.OriginFromPluginConfig(c)
		if err == nil {
			s, err = stages.GeneratorWithOrigin(s, o)
		}
		if err != nil {
			return fmt.Errorf("%s: generators: plugin %s: %w", n.File.Path, c.ID(), err)
		}
		if err := b.runStage(ctx, s, acc.Resources); err != nil {
			if _, ok := asPlugin(s); ok { // external plugins name themselves
				return fmt.Errorf("%s: generators: %w", n.File.Path, err)
			}
			return fmt.Errorf("%s: generators: plugin %s: %w", n.File.Path, c.ID(), err)
		}
	}
	return nil
}

// builtinGenerator configures the builtin generator a plugin config names.
// Other builtin kinds are not generators; configs of external plugins get
// the errors builtinStage gives them.
func (b *Builder) builtinGenerator(ctx context.Context, n *Node, c *resource.Resource) (stages.Stage, error) {
	id := c.ID()
	if c.APIVersion() != "builtin" {
		return b.builtinStage(n, c)
	}
	var from func([]byte, stages.ReadFile) (stages.Stage, error)
	switch c.Kind() {
	case "ConfigMapGenerator":
		from = stages.ConfigMapGeneratorFromConfig
	case "SecretGenerator":
		from = stages.SecretGeneratorFromConfig
	case "IAMPolicyGenerator":
		from = func(data []byte, _ stages.ReadFile) (stages.Stage, error) {
			return stages.IAMPolicyGeneratorFromConfig(data)
		}
	case "HelmChartInflationGenerator":
		if !b.helmEnabled() {
			return nil, fmt.Errorf("plugin %s fails configuration: must specify --enable-helm", id)
		}
		h, err := b.helmSettings()
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", id, err)
		}
		from = func(data []byte, read stages.ReadFile) (stages.Stage, error) {
			args, err := stages.DecodeHelmChartArgs(data)
			if err != nil {
				return nil, err
			}
			// A chart of a repository is pulled as for helmCharts.
			home, err := b.pulledChartHome(ctx, n, args, h)
			if err != nil {
				return nil, err
			}
			if home != "" {
				args.ChartHome = home
				read = readPulledChart(home, read)
				if !fetch.IsExactChartVersion(args.Version) && b.memo != nil {
					b.memo.setVolatile(n) // pulled again every run
				}
			}
			return stages.NewHelmChartInflationGenerator(args, h, read, readTree(n))
		}
	default:
		if _, err := b.builtinStage(n, c); err != nil {
			return nil, fmt.Errorf("failed to load generator: %w", err)
		}
		return nil, fmt.Errorf("failed to load generator: plugin %s not a generator", id)
	}
	data, err := json.Marshal(c.Object())
	if err != nil {
		return nil, err
	}
	s, err := from(data, readFile(n))
	if err != nil {
		return nil, fmt.Errorf("plugin %s fails configuration: %w", id, err)
	}
	return s, nil
}

// anyNeedsHash reports whether an object of rs waits for its content-hash
// name suffix.
func anyNeedsHash(rs *resource.List) bool {
	for _, r := range rs.All() {
		if r.Gen != nil && r.Gen.NeedsHash {
			return true
		}
	}
	return false
}
