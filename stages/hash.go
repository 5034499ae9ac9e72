package stages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/kpipe/kpipe/resource"
)

// NewHashTransformer returns the HashTransformer stage: every object whose
// generator asked for a content hash (Gen.NeedsHash) gets "-<hash>"
// appended to its name, its old name recorded so that name references
// follow. kustomize runs it once, on the root of a build, after every
// other transformer and before name references are fixed; listed as a
// builtin transformer it runs where it is listed as well.
func NewHashTransformer() Stage { return hashStage{} }

type hashStage struct{}

func (hashStage) Kind() string        { return "HashTransformer" }
func (hashStage) Cheap()              {}
func (hashStage) Fingerprint() []byte { return Fingerprint("HashTransformer", nil) }

// Run appends the content hash to the name of every object that needs one.
func (hashStage) Run(_ context.Context, rs *resource.List) error {
	for i := 0; i < rs.Len(); i++ {
		r := rs.At(i)
		if r.Gen == nil || !r.Gen.NeedsHash {
			continue
		}
		h, err := contentHash(r.Object())
		if err != nil {
			return fmt.Errorf("HashTransformer: %s: %w", r.ID(), err)
		}
		r = rs.Edit(i)
		r.RememberID()
		r.SetName(r.Name() + "-" + h)
	}
	return nil
}

// contentHash is the name suffix kustomize computes from a ConfigMap or a
// Secret: a canonical JSON encoding of its kind, data, binaryData (if a
// map) or type and stringData (if a map), with the name always empty (the
// field kustomize looks up is never found), hashed with SHA-256 and
// encoded as 10 characters. Other kinds are not supported: kustomize
// hashes their YAML node structure, which kpipe does not keep.
func contentHash(obj map[string]any) (string, error) {
	var m map[string]any
	switch kind := resource.LookupString(obj, "kind"); kind {
	case "ConfigMap":
		m = map[string]any{"kind": kind, "name": "", "data": hashValue(obj, "data")}
		if v, ok := hashMap(obj, "binaryData"); ok {
			m["binaryData"] = v
		}
	case "Secret":
		m = map[string]any{"kind": kind, "name": "", "type": hashValue(obj, "type"), "data": hashValue(obj, "data")}
		if v, ok := hashMap(obj, "stringData"); ok {
			m["stringData"] = v
		}
	default:
		return "", fmt.Errorf("kpipe cannot compute the content hash of a %s (only ConfigMaps and Secrets are supported)", kind)
	}
	j, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return encodeHash(j), nil
}

// hashValue is a field's value as the hash encodes it: a map or list as
// JSON read back into a map (nil when it is not one), a scalar as its text,
// and "" when the field is missing or null.
func hashValue(obj map[string]any, field string) any {
	if v, ok := hashMap(obj, field); ok {
		return v
	}
	s, _ := resource.ScalarString(obj[field])
	return s
}

// hashMap returns a map or list field re-read from JSON into a map, and
// whether the field is a map or list.
func hashMap(obj map[string]any, field string) (map[string]any, bool) {
	v := obj[field]
	switch v.(type) {
	case map[string]any, []any:
	default:
		return nil, false
	}
	var m map[string]any
	if j, err := json.Marshal(v); err == nil {
		// A list does not decode into a map; m stays nil then, as in
		// kustomize.
		_ = json.Unmarshal(j, &m)
	}
	return m, true
}

// encodeHash takes the first 10 hex digits of the SHA-256 of data and
// swaps the characters that could spell words for others (kubectl's
// hash encoding).
func encodeHash(data []byte) string {
	sum := sha256.Sum256(data)
	enc := []byte(hex.EncodeToString(sum[:])[:10])
	for i, c := range enc {
		switch c {
		case '0':
			enc[i] = 'g'
		case '1':
			enc[i] = 'h'
		case '3':
			enc[i] = 'k'
		case 'a':
			enc[i] = 'm'
		case 'e':
			enc[i] = 't'
		}
	}
	return string(enc)
}
