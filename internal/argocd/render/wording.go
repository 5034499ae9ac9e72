package render

import (
	"regexp"
	"sync"
)

// kpipeContext matches what kpipe's engine adds to a stage's error for
// a person (the kustomization file, then the stage: "/app/kustomization.yaml:
// PatchTransformer: "), which kustomize's own message lacks.
var kpipeContext = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[\s'"(=])(?:[A-Za-z]:)?[/\\][^\s'":]*[/\\](?:kustomization\.ya?ml|Kustomization): ((?:[A-Z][A-Za-z0-9]*(?:Transformer|Generator)|openapi|helmCharts "[^"]*"|helmCharts entry \d+): )*`)
})

// loadersType is a Go type of kpipe's kustomization schema named in a
// decoding error, where kustomize names its own package, types.
var loadersType = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(Go (?:struct field \S+|value) of type (?:\[\])?(?:\*)?)loaders\.`)
})

// kustomizeWording is an engine error's message as `kustomize build`
// words it: kpipe's context dropped. Argo CD shows kustomize's standard
// error to its users as it is.
func kustomizeWording(msg string) string {
	msg = kpipeContext().ReplaceAllString(msg, "$1")
	return loadersType().ReplaceAllString(msg, "${1}types.")
}
