package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/plugins"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// runTransformers runs the builtin transformers the node's fields ask for,
// in kustomize's fixed order, then the `transformers:` entries in order.
func (b *Builder) runTransformers(ctx context.Context, n *Node, acc *Accumulation) error {
	list, err := b.fieldTransformers(n, acc.Config)
	if err != nil {
		return err
	}
	if n.Origin != nil {
		// Each builtin's origin is the kustomization file and the builtin
		// kind, which is its stage's kind.
		for i, s := range list {
			list[i] = stages.TransformerWithOrigin(s, n.Origin.BuiltinOrigin(n.KustFileName(), s.Kind()))
		}
	}
	ext, err := b.listedTransformers(ctx, n)
	if err != nil {
		return err
	}
	all, err := withNodeSchema(n, append(list, ext...))
	if err != nil {
		return err
	}
	if err := b.runStages(ctx, all, acc.Resources); err != nil {
		wrapped := fmt.Errorf("%s: %w", n.File.Path, err)
		var se *stageError
		if errors.As(err, &se) {
			// kustomize gives the transformer's own error alone.
			return &Reworded{Err: wrapped, Kustomize: se.kustomizeText()}
		}
		return wrapped
	}
	return nil
}

// fieldTransformers configures the builtin stages of the kustomization's
// fields, with the field specs of tc: kustomize's configureBuiltinTransformers.
func (b *Builder) fieldTransformers(n *Node, tc *fieldspec.Config) ([]stages.Stage, error) {
	k := n.K
	var out []stages.Stage
	add := func(s stages.Stage, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", n.File.Path, err)
		}
		out = append(out, s)
		return nil
	}
	read := readFile(n)
	if len(k.PatchesStrategicMerge) > 0 {
		s, err := patchesStrategicMerge(n, read)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	for _, p := range k.Patches {
		if err := add(b.patches.New(p, read)); err != nil {
			if p.Path != "" && errors.Is(err, fs.ErrNotExist) {
				// Say where and what was probably meant, before
				// kustomize's wording.
				err = &loaders.Hinted{Hint: loaders.MissingEntryHint(n.Loader.FS(), n.File.Path, n.File.Content(n.Loader.FS()), "patches", n.Dir, p.Path), Err: err}
			}
			return nil, err
		}
	}
	if k.Namespace != "" {
		var c stages.NamespaceConfig
		c.Metadata.Namespace = k.Namespace
		c.FieldSpecs = tc.Namespace
		if err := add(stages.NewNamespace(c)); err != nil {
			return nil, err
		}
	}
	if k.NamePrefix != "" {
		if err := add(stages.NewPrefixSuffix("PrefixTransformer", stages.PrefixSuffixConfig{Prefix: k.NamePrefix, FieldSpecs: nonNil(tc.NamePrefix)})); err != nil {
			return nil, err
		}
	}
	if k.NameSuffix != "" {
		if err := add(stages.NewPrefixSuffix("SuffixTransformer", stages.PrefixSuffixConfig{Suffix: k.NameSuffix, FieldSpecs: nonNil(tc.NameSuffix)})); err != nil {
			return nil, err
		}
	}
	if len(k.Labels) > 0 || len(k.CommonLabels) > 0 {
		for _, l := range k.Labels {
			fss, err := labelFieldSpecs(l, tc, b.opts.Kustomize581)
			if err != nil {
				return nil, fmt.Errorf("%s: failed to merge labels: %w", n.File.Path, err)
			}
			out = append(out, stages.NewLabels(stages.LabelsConfig{Labels: l.Pairs, FieldSpecs: fss}))
		}
		out = append(out, stages.NewLabels(stages.LabelsConfig{Labels: k.CommonLabels, FieldSpecs: tc.CommonLabels}))
	}
	if len(k.CommonAnnotations) > 0 {
		out = append(out, stages.NewAnnotations(stages.AnnotationsConfig{Annotations: k.CommonAnnotations, FieldSpecs: tc.CommonAnnotations}))
	}
	for _, p := range k.PatchesJson6902 {
		if err := add(stages.NewJSONPatch(stages.JSONPatchConfig{Target: p.Target, Path: p.Path, JSONOp: p.Patch}, read)); err != nil {
			return nil, err
		}
	}
	for _, r := range k.Replicas {
		out = append(out, stages.NewReplicas(stages.ReplicasConfig{Replica: r, FieldSpecs: tc.Replicas}))
	}
	release := b.kustomizeRelease()
	imageSpecs := tc.Images
	if release == stages.Kustomize581 && len(k.Images) > 0 {
		imageSpecs = withoutCronJobImageVolumes(tc.Images)
	}
	for _, im := range k.Images {
		out = append(out, stages.NewImagesFor(stages.ImagesConfig{
			ImageTag:   im,
			FieldSpecs: imageSpecs,
		}, release))
	}
	if len(k.Replacements) > 0 {
		cfg := stages.ReplacementsConfig{Replacements: k.Replacements}
		s, err := stages.NewReplacementsFor(cfg, read, release)
		if err != nil {
			return nil, fmt.Errorf("%s: trouble configuring builtin ReplacementTransformer with config: `\n%s`: %w",
				n.File.Path, stages.ReplacementsConfigYAML(cfg.Replacements), err)
		}
		out = append(out, s)
	}
	return out, nil
}

// kustomizeRelease is the kustomize release the stages keep (Options.Kustomize581).
func (b *Builder) kustomizeRelease() stages.Release {
	if b.opts.Kustomize581 {
		return stages.Kustomize581
	}
	return stages.Kustomize582
}

// withoutCronJobImageVolumes is the images field specs without the CronJob
// image volumes, which kustomize v5.8.2 added to its defaults.
func withoutCronJobImageVolumes(specs []loaders.FieldSpec) []loaders.FieldSpec {
	out := make([]loaders.FieldSpec, 0, len(specs))
	for _, fs := range specs {
		if fs.Path == "spec/jobTemplate/spec/template/spec/volumes[]/image/reference" && fs.Kind == "" && fs.Group == "" {
			continue
		}
		out = append(out, fs)
	}
	return out
}

// readFile reads files for the node's stages through its loader.
func readFile(n *Node) stages.ReadFile {
	return func(p string) ([]byte, error) {
		data, _, err := n.Loader.ReadFile(p)
		return data, err
	}
}

func nonNil(fs []loaders.FieldSpec) []loaders.FieldSpec {
	if fs == nil {
		return []loaders.FieldSpec{}
	}
	return fs
}

// labelFieldSpecs computes where one `labels` entry writes: its own fields,
// plus selectors and templates (includeSelectors), or pod templates
// (includeTemplates) and StatefulSet volumeClaimTemplates
// (includeVolumeClaimTemplates), and always metadata/labels.
//
// Under kustomize v5.8.1 (v581) includeTemplates also reaches the
// volumeClaimTemplates: they were among its template field specs.
func labelFieldSpecs(l loaders.Label, tc *fieldspec.Config, v581 bool) ([]loaders.FieldSpec, error) {
	fss, err := fieldspec.MergeSpecs(l.FieldSpecs, tc.Labels...)
	if err != nil {
		return nil, err
	}
	if l.IncludeSelectors {
		return fieldspec.MergeSpecs(fss, tc.CommonLabels...)
	}
	if l.IncludeTemplates {
		if fss, err = fieldspec.MergeSpecs(fss, tc.TemplateLabels...); err != nil {
			return nil, fmt.Errorf("failed to merge template fieldSpec: %w", err)
		}
		if v581 {
			if fss, err = fieldspec.MergeSpecs(fss, tc.VolumeClaimTemplateLabels...); err != nil {
				return nil, fmt.Errorf("failed to merge template fieldSpec: %w", err)
			}
		}
	}
	if l.IncludeVolumeClaimTemplates {
		if fss, err = fieldspec.MergeSpecs(fss, tc.VolumeClaimTemplateLabels...); err != nil {
			return nil, fmt.Errorf("failed to merge volumeClaimTemplate fieldSpec: %w", err)
		}
	}
	return fieldspec.MergeSpecs(fss, loaders.FieldSpec{Path: "metadata/labels", CreateIfNotPresent: true})
}

// listedTransformers configures the node's `transformers:` entries: inline
// configs, or files of configs.
func (b *Builder) listedTransformers(ctx context.Context, n *Node) ([]stages.Stage, error) {
	var out []stages.Stage
	for _, p := range inlineFirst(n.K.Transformers) {
		configs, err := b.pluginConfigs(ctx, n, p)
		if err != nil {
			return nil, err
		}
		for _, c := range configs {
			s, err := b.pluginStage(ctx, n, p, c, plugins.Transformer)
			if err != nil {
				return nil, rewordDisabled(err, err, "")
			}
			o, err := stages.OriginFromPluginConfig(c)
			if err != nil {
				return nil, fmt.Errorf("%s: transformers: %w", n.File.Path, err)
			}
			out = append(out, stages.TransformerWithOrigin(s, o))
		}
	}
	return out, nil
}

// inlineFirst orders the entries of a generators, transformers or
// validators field as kustomize loads them: the inline configs first, in
// order, then the files and directories, in order.
func inlineFirst(entries []string) []string {
	out := make([]string, 0, len(entries))
	var paths []string
	for _, p := range entries {
		if isInlineConfig(p) {
			out = append(out, p)
		} else {
			paths = append(paths, p)
		}
	}
	return append(out, paths...)
}

// isInlineConfig reports whether an entry is YAML holding objects rather
// than a path.
func isInlineConfig(p string) bool {
	rs, err := resyaml.Decode([]byte(p))
	return err == nil && len(rs) > 0
}

// pluginConfigs reads the plugin configs of one generators/transformers
// entry: inline YAML, or a file of configs.
// When origins are tracked, each config gets its origin annotation (the
// kustomization file for inline ones), from which the plugin's own origin
// is taken (stages.OriginFromPluginConfig).
func (b *Builder) pluginConfigs(ctx context.Context, n *Node, p string) ([]*resource.Resource, error) {
	if rs, err := resyaml.Decode([]byte(p)); err == nil && len(rs) > 0 {
		return withOrigin(rs, n.Origin.Append(n.KustFileName()), n.Origin != nil)
	}
	if e := n.PluginDir(p); e != nil {
		// A kustomization directory: its accumulated objects (built like
		// a base, under the same buildMetadata) are the configs.
		if e.Err != nil {
			return nil, e.Err
		}
		sub, err := b.child(ctx, e.Child)
		if err != nil {
			return nil, fmt.Errorf("accumulation err='accumulating resources from '%s': %s': recursed accumulation of path '%s': %w",
				e.Path, dirFileErr(n, e), e.Child.Dir, err)
		}
		configs := make([]*resource.Resource, sub.Resources.Len())
		for i, r := range sub.Resources.All() {
			configs[i] = r.Clone()
		}
		return configs, nil
	}
	real, kind, err := n.Loader.Resolve(p)
	if err == nil && kind == loaders.Dir {
		return nil, fmt.Errorf("%s: internal error: plugin config directory '%s' was not loaded", n.File.Path, real)
	}
	data, real, err := n.Loader.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("%s: loading plugin config '%s': %w", n.File.Path, p, err)
	}
	rs, err := resyaml.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: loading plugin config: %w", real, err)
	}
	return withOrigin(rs, n.Origin.Append(p), n.Origin != nil)
}

// withOrigin sets the origin annotation of every object of rs to o when
// track is set.
func withOrigin(rs []*resource.Resource, o *stages.Origin, track bool) ([]*resource.Resource, error) {
	if !track {
		return rs, nil
	}
	val, err := o.String()
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		r.SetAnnotation(stages.OriginAnnotation, val)
	}
	return rs, nil
}

// builtinStage configures the builtin transformer a plugin config names.
// Its callers give the stage its origin (stages.TransformerWithOrigin or
// stages.GeneratorWithOrigin with stages.OriginFromPluginConfig(c)), so a
// plugin stage returned from here is annotated like kustomize's plugins
// are: a generator's objects must be appended to the list it is run on.
func (b *Builder) builtinStage(n *Node, c *resource.Resource) (stages.Stage, error) {
	id := c.ID()
	if c.APIVersion() != "builtin" {
		if !b.opts.EnableAlphaPlugins {
			return nil, &plugins.DisabledError{Kind: c.Kind()}
		}
		return nil, fmt.Errorf("plugin %s: external plugins are not supported yet by kpipe", id)
	}
	data, err := json.Marshal(c.Object())
	if err != nil {
		return nil, err
	}
	var from func([]byte) (stages.Stage, error)
	withFiles := func(f func([]byte, stages.ReadFile) (stages.Stage, error)) func([]byte) (stages.Stage, error) {
		return func(data []byte) (stages.Stage, error) { return f(data, readFile(n)) }
	}
	switch c.Kind() {
	case "PatchJson6902Transformer":
		from = withFiles(stages.JSONPatchFromConfig)
	case "PatchTransformer":
		from = withFiles(stages.PatchFromConfig)
	case "PatchStrategicMergeTransformer":
		from = withFiles(stages.PatchStrategicMergeFromConfig)
	case "NamespaceTransformer":
		from = stages.NamespaceFromConfig
	case "PrefixSuffixTransformer":
		from = stages.PrefixSuffixFromConfig
	case "PrefixTransformer":
		from = stages.PrefixFromConfig
	case "SuffixTransformer":
		from = stages.SuffixFromConfig
	case "LabelTransformer":
		from = stages.LabelsFromConfig
	case "AnnotationsTransformer":
		from = stages.AnnotationsFromConfig
	case "ImageTagTransformer":
		from = stages.ImagesFromConfig
	case "ReplicaCountTransformer":
		from = stages.ReplicasFromConfig
	case "ReplacementTransformer":
		from = withFiles(stages.ReplacementsFromConfig)
	case "ValueAddTransformer":
		from = func(data []byte) (stages.Stage, error) { return stages.ValueAddFromConfig(data, n.Dir, readFile(n)) }
	case "HashTransformer":
		from = func([]byte) (stages.Stage, error) { return stages.NewHashTransformer(), nil }
	case "ConfigMapGenerator", "SecretGenerator", "IAMPolicyGenerator", "HelmChartInflationGenerator":
		return nil, fmt.Errorf("plugin %s not a transformer", id)
	default:
		return nil, fmt.Errorf("unable to load builtin %s", id.GVK)
	}
	s, err := from(data)
	if err != nil {
		return nil, fmt.Errorf("plugin %s fails configuration: %w", id, err)
	}
	return s, nil
}
