package postbuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kpipe/kpipe/internal/output"
)

// readObjects turns the resources into the objects fluxcd/pkg/ssa's
// ReadObjects reads from kustomize's output of them: numbers as int64 when
// they fit, float64 otherwise; a document with an "items" list expanded
// into its items (whatever its kind, items unfiltered); other objects kept
// when they have a name, a kind and an apiVersion and are not a kustomize
// Kustomization.
func readObjects(list []*resource) ([]map[string]any, error) {
	objs := make([]map[string]any, 0, len(list))
	for _, r := range list {
		obj := normalize(r.obj).(map[string]any)
		if kind, _ := obj["kind"].(string); kind == "" {
			// apimachinery's unstructured decoder refuses an object
			// without a kind.
			j, err := json.Marshal(r.obj)
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("error unmarshaling JSON: while decoding JSON: Object 'Kind' is missing in '%s'", j)
		}
		if items, ok := obj["items"].([]any); ok {
			for _, item := range items {
				child, ok := item.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("items member is not an object: %T", child)
				}
				objs = append(objs, child)
			}
			continue
		}
		if isKubernetesObject(obj) && !isKustomization(obj) {
			objs = append(objs, obj)
		}
	}
	return objs, nil
}

func isKubernetesObject(obj map[string]any) bool {
	return stringField(obj, "metadata", "name") != "" && stringField(obj, "kind") != "" && stringField(obj, "apiVersion") != ""
}

// isKustomization reports whether obj is a kustomize (not Flux)
// Kustomization.
func isKustomization(obj map[string]any) bool {
	return strings.ToLower(stringField(obj, "kind")) == "kustomization" &&
		strings.HasPrefix(stringField(obj, "apiVersion"), "kustomize.config.k8s.io/")
}

// normalize returns v with its JSON numbers as apimachinery's JSON decoder
// leaves them: int64 when the number is an integer that fits, float64
// otherwise.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalize(e)
		}
		return out
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, err := t.Float64()
		if err != nil {
			// Out of float64's range: JSON from YAML cannot hold it.
			return string(t)
		}
		return f
	}
	return v
}

// SetCommonMetadata sets spec.commonMetadata's labels and annotations on
// each object's metadata as fluxcd/pkg/ssa does, with apimachinery's
// GetLabels: an object with a label (or annotation) that is not a string
// reads as having none, so commonMetadata's replace all of them.
func SetCommonMetadata(objs []map[string]any, labels, annotations map[string]string) {
	for _, obj := range objs {
		for _, f := range []struct {
			field string
			set   map[string]string
		}{{"labels", labels}, {"annotations", annotations}} {
			m := stringMapAt(obj, "metadata", f.field)
			if m == nil {
				m = map[string]any{}
			}
			for k, v := range f.set {
				m[k] = v
			}
			if len(m) > 0 {
				meta, ok := obj["metadata"].(map[string]any)
				if !ok {
					if obj["metadata"] != nil {
						continue // SetNestedField fails; flux ignores it
					}
					meta = map[string]any{}
					obj["metadata"] = meta
				}
				meta[f.field] = m
			}
		}
	}
}

// stringMapAt is unstructured's NestedStringMap as GetLabels uses it: a
// copy of the map at path when every value is a string, else nil.
func stringMapAt(obj map[string]any, path ...string) map[string]any {
	m, ok := nestedMap(obj, path...)
	if !ok {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if _, ok := v.(string); !ok {
			return nil
		}
		out[k] = v
	}
	return out
}

// Encode writes objects as fluxcd/pkg/ssa's ObjectsToYAML does: each as
// sigs.k8s.io/yaml.Marshal writes it (encoding/json, then
// go.yaml.in/yaml/v2: keys sorted, long strings folded, YAML 1.1 quoting),
// followed by "---\n". No objects, no bytes.
func Encode(objs []map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	for _, obj := range objs {
		b, err := encodeOne(obj)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
		buf.WriteString("---\n")
	}
	return buf.Bytes(), nil
}

// encodeOne writes one object (numbers int64 or float64) as
// sigs.k8s.io/yaml.Marshal does: kustomize writes its output the same
// way, so it is internal/output's emitter.
func encodeOne(obj map[string]any) ([]byte, error) {
	return output.MarshalValue(obj)
}
