// Package output writes build results exactly as kustomize v5 writes them.
//
// kustomize prints each object by encoding it to JSON and converting that
// JSON to YAML with go.yaml.in/yaml/v2: keys come out sorted, sequences sit
// at their parent key's indentation, long strings fold at 80 columns and
// ambiguous strings are quoted. This package gives the same encoder the same
// values (it reproduces the JSON step's effect on numbers, times and invalid
// UTF-8 without encoding to JSON), so the bytes match kustomize's. Almost
// every object is written by the package's own emitter (direct.go, and
// scalar.go for yaml.v2's choice of scalar style and line breaking);
// objects holding what it does not cover go through yaml.v2 itself.
//
// Files are written atomically: to a temporary file in the same directory,
// then renamed, so an interrupted run leaves no half-written output.
//
// It imports only resource.
package output
