package engine

import (
	"context"
	"slices"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
)

// Annotations and labels the finishing steps read or remove.
const (
	localConfigAnnotation = "config.kubernetes.io/local-config"
	managedByLabel        = "app.kubernetes.io/managed-by"
	// ManagedByValue is the managed-by label value; kustomize writes its
	// own version there, and kpipe writes the kustomize version it matches.
	ManagedByValue = "kustomize-" + KustomizeVersion
)

// KustomizeVersion is the kustomize release whose `kustomize build` output
// kpipe reproduces byte for byte. kustomize v5.8.2 builds exactly as
// v5.8.3 does (api v0.21.2 and v0.21.3 differ only in refactorings, and
// kyaml's built-in OpenAPI schema is the same), so the only visible
// difference from v5.8.2 is this value in the managed-by label; the
// differential tests run against v5.8.2, the newest release that builds
// here. See the README's "Kustomize versions" section.
const KustomizeVersion = "v5.8.3"

// buildAnnotations are annotations kustomize uses internally and removes
// from its output.
var buildAnnotations = []string{
	"internal.config.kubernetes.io/previousKinds",
	"internal.config.kubernetes.io/previousNames",
	"internal.config.kubernetes.io/prefixes",
	"internal.config.kubernetes.io/suffixes",
	"internal.config.kubernetes.io/previousNamespaces",
	"internal.config.kubernetes.io/allowNameChange",
	"internal.config.kubernetes.io/allowKindChange",
	"internal.config.kubernetes.io/refBy",
	"internal.config.kubernetes.io/generatorBehavior",
	"internal.config.kubernetes.io/needsHashSuffix",
	"internal.config.kubernetes.io/path",
	"internal.config.kubernetes.io/index",
	"internal.config.kubernetes.io/seqindent",
	"internal.config.kubernetes.io/id",
	"internal.config.kubernetes.io/annotations-migration-resource-id",
	"config.kubernetes.io/path",
	"config.kubernetes.io/index",
	"config.k8s.io/id",
	"internal.config.kubernetes.io/helm-generated",
}

// finish runs the steps kustomize runs only on the root of a build: name
// reference fix-up, resolving legacy vars, dropping local configs,
// ordering, the managed-by label, and removing build annotations.
func (b *Builder) finish(ctx context.Context, n *Node, acc *Accumulation) ([]*resource.Resource, error) {
	rs := acc.Resources.Copy()
	// Generated objects get their content-hash suffix at the root only,
	// after every transformer; name references then follow the rename.
	if anyNeedsHash(rs) {
		if err := b.runStage(ctx, stages.NewHashTransformer(), rs); err != nil {
			return nil, err
		}
	}
	if err := stages.NewNameRef(acc.Config.NameReference).Run(ctx, rs); err != nil {
		return nil, err
	}
	rs.Settle()
	// With names final, legacy vars take their values and replace $(NAME).
	if acc.Vars.Len() > 0 {
		resolver := stages.NewVarResolver(stages.VarResolverConfig{Vars: acc.Vars.Sorted(), FieldSpecs: acc.Config.VarReference})
		if err := b.runStage(ctx, resolver, rs); err != nil {
			return nil, err
		}
	}
	dropLocal(rs)
	sorter, err := b.sortStage(n.K)
	if err != nil {
		return nil, err
	}
	if sorter != nil {
		if err := sorter.Run(ctx, rs); err != nil {
			return nil, err
		}
	}
	if b.opts.ManagedByLabel || slices.Contains(n.K.BuildMetadata, "managedByLabel") {
		l := stages.NewLabels(stages.LabelsConfig{
			Labels:     map[string]string{managedByLabel: ManagedByValue},
			FieldSpecs: []loaders.FieldSpec{{Path: "metadata/labels", CreateIfNotPresent: true}},
		})
		if err := l.Run(ctx, rs); err != nil {
			return nil, err
		}
	}
	// Origin and transformer annotations stay only when the root asks for
	// them; kustomize removes them from every object otherwise, whoever
	// wrote them.
	drop := buildAnnotations
	if !slices.Contains(n.K.BuildMetadata, "originAnnotations") {
		drop = append(drop[:len(drop):len(drop)], stages.OriginAnnotation)
	}
	if !slices.Contains(n.K.BuildMetadata, "transformerAnnotations") {
		drop = append(drop[:len(drop):len(drop)], stages.TransformationsAnnotation)
	}
	// kustomize rewrites every object's annotations while it removes the
	// origin or transformer annotations (which drops an empty or null
	// annotations map); with both kept, only objects with build state are
	// rewritten.
	rewriteAll := len(drop) > len(buildAnnotations)
	for i := range rs.All() {
		cleanAnnotations(rs, i, drop, rewriteAll)
	}
	return rs.All(), nil
}

// sortStage returns the ordering stage: the kustomization's sortOptions win
// over the --reorder flag; without either, the legacy order.
func (b *Builder) sortStage(k *loaders.Kustomization) (stages.Stage, error) {
	if k.SortOptions != nil {
		if b.opts.Reorder != "" {
			b.opts.Warn("Warning: Sorting order is set both in 'kustomization.yaml' ('sortOptions') and in a CLI flag ('--reorder'). Using the kustomization file over the CLI flag.")
		}
		return stages.NewSortOrder(*k.SortOptions)
	}
	if b.opts.Reorder == "legacy" || b.opts.Reorder == "" {
		return stages.NewSortOrder(loaders.SortOptions{Order: stages.OrderLegacy})
	}
	return nil, nil
}

// dropLocal removes objects marked config.kubernetes.io/local-config
// (unless the value is "false").
func dropLocal(rs *resource.List) {
	rs.Keep(func(_ int, r *resource.Resource) bool {
		v, ok := r.Annotation(localConfigAnnotation)
		return !ok || v == "false"
	})
}

// cleanAnnotations removes the annotations drop names from the i-th object. Like
// kustomize, which keeps its build state in annotations and rewrites them
// all, an object whose annotations were touched gets every annotation value
// as a string, and loses an annotations map left empty (or null). With
// rewriteAll false, an object without build state and without annotations
// keeps an empty or null annotations map, as kustomize's
// RemoveBuildAnnotations leaves it.
func cleanAnnotations(rs *resource.List, i int, drop []string, rewriteAll bool) {
	r := rs.At(i)
	md := resource.LookupMap(r.Object(), "metadata")
	ann, isMap := md["annotations"].(map[string]any)
	if !rewriteAll && !r.HasBuildState() && (!isMap || len(ann) == 0) {
		return
	}
	if _, has := md["annotations"]; !has && !r.HasBuildState() {
		return
	}
	if isMap && len(ann) > 0 && stringsKeptAll(ann, drop) {
		// Rewriting would give the same annotations (the same strings,
		// none dropped, the map kept): leave the object as it is, so a
		// large frozen object is not copied for nothing.
		return
	}
	r = rs.Edit(i)
	strs := r.Annotations()
	for k := range strs {
		if slices.Contains(drop, k) {
			delete(strs, k)
		}
	}
	r.SetAnnotations(strs)
}

// stringsKeptAll reports whether ann, an object's annotations, holds only
// string values and none of the keys drop names: rewriting it as
// cleanAnnotations does changes nothing.
func stringsKeptAll(ann map[string]any, drop []string) bool {
	for k, v := range ann {
		if _, ok := v.(string); !ok || slices.Contains(drop, k) {
			return false
		}
	}
	return true
}
