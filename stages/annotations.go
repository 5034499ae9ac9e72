package stages

import (
	"fmt"

	"github.com/kpipe/kpipe/loaders"
)

// AnnotationsConfig configures the AnnotationsTransformer: the annotations
// to set and the fields (annotation maps) to set them in.
type AnnotationsConfig struct {
	Annotations map[string]string   `json:"annotations,omitempty"`
	FieldSpecs  []loaders.FieldSpec `json:"fieldSpecs,omitempty"`
}

// NewAnnotations returns the AnnotationsTransformer stage: every annotation
// is set, as a string, in the map at every field-spec path of every object
// the spec selects; missing maps are created where the spec says create.
// With no annotations the stage does nothing.
func NewAnnotations(cfg AnnotationsConfig) Stage {
	cfg.Annotations = copyStringMap(cfg.Annotations)
	cfg.FieldSpecs = append([]loaders.FieldSpec(nil), cfg.FieldSpecs...)
	return &mapEntryStage{kind: "AnnotationsTransformer", entries: cfg.Annotations, specs: cfg.FieldSpecs, cfg: cfg}
}

// AnnotationsFromConfig configures an AnnotationsTransformer from its
// builtin plugin config (`annotations:` and `fieldSpecs:`).
func AnnotationsFromConfig(data []byte) (Stage, error) {
	var cfg AnnotationsConfig
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, fmt.Errorf("AnnotationsTransformer: reading config: %w", err)
	}
	return NewAnnotations(cfg), nil
}
