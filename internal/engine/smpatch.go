package engine

import (
	"fmt"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/stages"
)

// patchesStrategicMerge configures the PatchStrategicMergeTransformer of
// the node's patchesStrategicMerge field. Errors quote the config as
// kustomize does, after the kustomization file's path.
func patchesStrategicMerge(n *Node, read stages.ReadFile) (stages.Stage, error) {
	cfg := stages.PatchStrategicMergeConfig{Paths: n.K.PatchesStrategicMerge}
	s, err := stages.NewPatchStrategicMerge(cfg, read)
	if err != nil {
		paths := make([]any, len(cfg.Paths))
		for i, p := range cfg.Paths {
			paths[i] = p
		}
		y, yerr := output.MarshalValue(map[string]any{"paths": paths})
		if yerr != nil {
			return nil, fmt.Errorf("%s: %w", n.File.Path, err)
		}
		return nil, fmt.Errorf("%s: trouble configuring builtin PatchStrategicMergeTransformer with config: `\n%s`: %w", n.File.Path, y, err)
	}
	return s, nil
}
