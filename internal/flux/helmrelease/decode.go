package helmrelease

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// Group is the HelmRelease API group.
const Group = "helm.toolkit.fluxcd.io"

// The API versions: helm-controller v1.5 and later serve only v2; v2beta2
// was served (and converted to v2) up to v1.4.
const (
	V2      = Group + "/v2"
	V2Beta2 = Group + "/v2beta2"
)

// Options says which HelmReleases Parse accepts.
type Options struct {
	// AllowV2Beta2 accepts helm.toolkit.fluxcd.io/v2beta2 objects, as
	// helm-controller up to v1.4 (Flux up to v2.7) did. Without it they are
	// refused, as a cluster running helm-controller v1.5 or later refuses
	// them.
	AllowV2Beta2 bool
}

// IsHelmRelease reports whether obj is a HelmRelease of any version.
func IsHelmRelease(obj map[string]any) bool {
	kind, _ := obj["kind"].(string)
	api, _ := obj["apiVersion"].(string)
	return kind == "HelmRelease" && strings.HasPrefix(api, Group+"/")
}

// Parse decodes one YAML or JSON document holding a HelmRelease as Flux's
// API types decode it (sigs.k8s.io/yaml: YAML 1.1, typed by the target),
// checks its version against o and validates it (Validate).
func Parse(doc []byte, o Options) (*HelmRelease, error) {
	hr, err := decode(doc)
	if err != nil {
		return nil, err
	}
	switch hr.APIVersion {
	case V2:
	case V2Beta2:
		if !o.AllowV2Beta2 {
			return nil, fmt.Errorf("HelmRelease %s: %s is not served since helm-controller v1.5 (Flux v2.8); move it to %s", hr.id(), V2Beta2, V2)
		}
	default:
		return nil, fmt.Errorf("HelmRelease %s: apiVersion %s is not served by helm-controller (it serves %s)", hr.id(), hr.APIVersion, V2)
	}
	if err := hr.Validate(); err != nil {
		return nil, err
	}
	return hr, nil
}

// decode decodes a HelmRelease of any version, unchecked.
func decode(doc []byte) (*HelmRelease, error) {
	hr := &HelmRelease{}
	if err := yaml.Unmarshal(doc, hr); err != nil {
		return nil, fmt.Errorf("decoding a HelmRelease: %w", err)
	}
	if hr.Kind != "HelmRelease" || !strings.HasPrefix(hr.APIVersion, Group+"/") {
		return nil, fmt.Errorf("not a HelmRelease: apiVersion %q, kind %q", hr.APIVersion, hr.Kind)
	}
	return hr, nil
}

// FromObject decodes a HelmRelease held as a decoded object (as
// DecodeObjects or kpipe's Flux post-build returns them) as Parse does.
func FromObject(obj map[string]any, o Options) (*HelmRelease, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding a HelmRelease: %w", err)
	}
	return Parse(j, o)
}

func (hr *HelmRelease) id() string {
	if hr.Namespace == "" {
		return hr.Name
	}
	return hr.Namespace + "/" + hr.Name
}

// ID is the HelmRelease's namespace/name.
func (hr *HelmRelease) ID() string { return hr.id() }

// DecodeObjects reads a stream of YAML documents (or one JSON document)
// into objects, as apimachinery's YAML decoder splits and reads them:
// documents split at "---" lines, each decoded as YAML 1.1
// (sigs.k8s.io/yaml), numbers kept as json.Number, empty documents
// skipped. A document that is not a mapping is an error naming it.
func DecodeObjects(data []byte) ([]map[string]any, error) {
	var objs []map[string]any
	for i, doc := range splitDocuments(data) {
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		j = bytes.TrimSpace(j)
		if len(j) == 0 || bytes.Equal(j, []byte("null")) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d is not an object", i+1)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// splitDocuments splits a YAML stream at document separators, as
// apimachinery's YAMLReader does: a line starting with "---" followed
// only by blanks or a comment.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if rest, ok := bytes.CutPrefix(line, []byte("---")); ok {
				if t := bytes.TrimSpace(rest); len(t) == 0 || t[0] == '#' {
					docs = append(docs, bytes.Clone(cur.Bytes()))
					cur.Reset()
					line = nil
				}
			}
			cur.Write(line)
		}
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
	}
	return append(docs, cur.Bytes())
}
