package helmrender

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/internal/flux/helmrelease"
	"github.com/kpipe/kpipe/internal/flux/render"
	"github.com/kpipe/kpipe/loaders"
)

// postRenderDir is where the in-memory kustomization of a post-renderer
// is mounted (nothing is written there).
var postRenderDir = filepath.Join(os.TempDir(), "kpipe-helmrelease-postrender")

// kustomize applies a kustomize post-renderer to helm's output as
// helm-controller does (internal/postrender/kustomize.go): a
// kustomization {resources: [helm-output.yaml], images, patches} in
// memory, built by the engine as Flux builds (kustomize v5.8.1, no
// reordering, no plugins, no load restriction).
func kustomize(ctx context.Context, k *helmrelease.Kustomize, in []byte) ([]byte, []string, error) {
	type kustomization struct {
		APIVersion string       `json:"apiVersion"`
		Kind       string       `json:"kind"`
		Resources  []string     `json:"resources"`
		Images     []flux.Image `json:"images,omitempty"`
		Patches    []flux.Patch `json:"patches,omitempty"`
	}
	kf, err := json.Marshal(kustomization{APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization",
		Resources: []string{"helm-output.yaml"}, Images: k.Images, Patches: k.Patches})
	if err != nil {
		return nil, nil, err
	}
	mem := fstest.MapFS{
		"kustomization.yaml": {Data: kf, Mode: 0o644},
		"helm-output.yaml":   {Data: in, Mode: 0o644},
	}
	var warnings []string
	eo := render.Engine(engine.Options{Jobs: 1})
	eo.Warn = func(msg string) { warnings = append(warnings, msg) }
	_, results := engine.Build(ctx, engine.Request{Dirs: []string{postRenderDir}, Options: eo,
		Load:   engine.LoadOptions{FS: loaders.NewFS(fs.FS(mem), postRenderDir), Restriction: loaders.None},
		Loaded: func(g *engine.Graph) { warnings = append(warnings, g.Warnings...) }})
	if err := results[0].Err; err != nil {
		return nil, warnings, err
	}
	return results[0].YAML, warnings, nil
}
