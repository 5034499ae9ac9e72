package stages

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/kpipe/kpipe/resource"
)

// Stage is one configured generator or transformer. See the package
// documentation for the contract every implementation keeps.
type Stage interface {
	// Kind is the builtin kind the stage implements, such as
	// "NamespaceTransformer".
	Kind() string
	// Fingerprint covers everything except the input resources that can
	// change the output of Run.
	Fingerprint() []byte
	// Run applies the stage to rs in place.
	Run(ctx context.Context, rs *resource.List) error
}

// Cheap is implemented by stages whose Run costs less than memoizing it
// would: hashing the input list for the key and storing the output list
// cost more than the field edits they make (namespace, labels, prefixes,
// images, ...). The engine runs them each time their node is built instead
// of looking them up; nodes, generators, patches, replacements and plugins
// are still memoized one by one.
type Cheap interface {
	Stage
	// Cheap marks the stage; it does nothing.
	Cheap()
}

// A Definition is a stage of a program that embeds kpipe (given in
// kpipe.Options.Stages), which a kustomization lists under `transformers:`
// or `generators:` by a config object, as it lists a builtin one: configs
// whose apiVersion is APIVersion and whose kind is Kind are given to New,
// which configures the stage from one (it must not keep the config or
// change it). The stage keeps the stage contract (see the package
// documentation), which is what lets kpipe cache its output.
type Definition struct {
	APIVersion string
	Kind       string
	New        func(config *resource.Resource) (Stage, error)
}

// Fingerprint encodes a stage kind and its config canonically: JSON with
// sorted map keys, hashed with SHA-256. Configs must be plain data (structs,
// maps, slices, strings, numbers).
func Fingerprint(kind string, config any) []byte {
	j, err := json.Marshal(config)
	if err != nil {
		// Configs are plain data; failing to encode one is a programming error.
		panic(fmt.Sprintf("kpipe: internal error: fingerprint of %s config: %v", kind, err))
	}
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write(j)
	return h.Sum(nil)
}
