package stages

import (
	"fmt"

	"github.com/kpipe/kpipe/loaders"
)

// Release is the kustomize release whose behaviour a stage keeps where
// releases differ. The zero value is kustomize v5.8.2, kpipe's reference;
// Kustomize581 is v5.8.1, the release Flux links (`kpipe flux` builds as
// it). The differences the stages know:
//
//   - images: v5.8.1 matches only sha256 digests, and an images name that
//     is not a valid regular expression makes it panic (a nil pattern) the
//     first time it looks at an image value: the stage returns a
//     *PanicError; v5.8.2 matches any OCI digest algorithm and treats such
//     a name as matching nothing;
//   - replacements into structured data (a field path that goes on inside
//     a scalar holding YAML or JSON): v5.8.1 copies the value, ignoring the
//     target's delimiter and index there;
//   - a secretGenerator with behavior merge: v5.8.2 folds the Secret's
//     stringData into its data first (as the API server would), v5.8.1
//     ignores stringData.
//
// The other differences are the engine's (where labels with
// includeTemplates write, the images field specs, ambiguous paths).
type Release uint8

const (
	// Kustomize582 is kustomize v5.8.2 (the zero value).
	Kustomize582 Release = iota
	// Kustomize581 is kustomize v5.8.1.
	Kustomize581
)

// PanicError is a panic kustomize would have had (kustomize v5.8.1's image
// matcher with a pattern that does not compile): Value is what it panicked
// with, a runtime error. Callers that recover kustomize's panics as Flux
// does word it "recovered from kustomize build panic: <Value>".
type PanicError struct{ Value any }

func (e *PanicError) Error() string { return fmt.Sprintf("kustomize panicked: %v", e.Value) }

// NewImagesFor is NewImages as release r behaves.
func NewImagesFor(cfg ImagesConfig, r Release) Stage {
	if r != Kustomize581 {
		return NewImages(cfg)
	}
	cfg.FieldSpecs = append([]loaders.FieldSpec(nil), cfg.FieldSpecs...)
	return &imagesStage{cfg: cfg, match: newImageMatcher581(cfg.ImageTag.Name), release: r}
}

// NewReplacementsFor is NewReplacements as release r behaves.
func NewReplacementsFor(cfg ReplacementsConfig, read ReadFile, r Release) (Stage, error) {
	s, err := NewReplacements(cfg, read)
	if err != nil {
		return nil, err
	}
	s.(*replacementsStage).release = r
	return s, nil
}

// NewSecretGeneratorFor is NewSecretGenerator as release r behaves.
func NewSecretGeneratorFor(cfg loaders.GeneratorArgs, read ReadFile, r Release) (Stage, error) {
	s, err := NewSecretGenerator(cfg, read)
	if err != nil {
		return nil, err
	}
	s.(*generatorStage).release = r
	return s, nil
}
