package postbuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"sigs.k8s.io/yaml"
)

// Options are the fields of one Flux Kustomization the post-build steps
// read.
type Options struct {
	// Name and Namespace are the Flux Kustomization's metadata, the owner
	// labels' values. Namespace is the object's own (as its file has it:
	// "" when the file sets none), not the namespace flux was asked for.
	Name, Namespace string

	// PostBuild is whether the object has spec.postBuild. Without it
	// nothing is substituted, whatever Vars holds.
	PostBuild bool
	// Vars are the variables: with --dry-run, spec.postBuild.substitute
	// alone (Flux skips substituteFrom); otherwise the ConfigMaps' and
	// Secrets' data of substituteFrom in order, then substitute over them.
	// Newlines are removed from the values (Variables does both).
	Vars map[string]string
	// Strict is --strict-substitute: an undefined variable without a
	// default is an error.
	Strict bool
	// Always is spec.postBuild.substituteStrategy: Always. Otherwise
	// substitution runs only when there is at least one variable.
	Always bool

	// CommonLabels and CommonAnnotations are spec.commonMetadata.
	CommonLabels, CommonAnnotations map[string]string
}

// Variables returns the variables of a post-build step as Flux loads
// them: each map of from (the data of substituteFrom's ConfigMaps and
// Secrets, in order) over the previous ones, then substitute over all,
// with every newline removed from the values.
func Variables(from []map[string]string, substitute map[string]string) map[string]string {
	vars := map[string]string{}
	for _, m := range append(from, substitute) {
		for k, v := range m {
			vars[k] = string(bytes.ReplaceAll([]byte(v), []byte("\n"), nil))
		}
	}
	return vars
}

// Apply runs the post-build steps over kustomize's output and returns the
// bytes `flux build kustomization` prints. Errors are worded as flux words
// them (without flux's "✗ " prefix).
func Apply(kustomized []byte, o Options) ([]byte, error) {
	objs, err := Objects(kustomized, o)
	if err != nil {
		return nil, err
	}
	return Encode(objs)
}

// Decode reads a stream of YAML documents (helm's output) into the
// objects fluxcd/pkg/ssa's ReadObjects reads from it, without any
// post-build step: numbers int64 or float64, a document with an "items"
// list expanded, objects without a name, a kind or an apiVersion dropped.
func Decode(data []byte) ([]map[string]any, error) {
	list, err := parseResources(data)
	if err != nil {
		return nil, err
	}
	return readObjects(list)
}

// Objects runs the post-build steps over kustomize's output and returns
// the objects flux prints, before encoding (for --recursive, which reads
// the Flux Kustomizations among them). Numbers are int64 or float64, as
// apimachinery decodes them.
func Objects(kustomized []byte, o Options) ([]map[string]any, error) {
	list, err := parseResources(kustomized)
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	if o.PostBuild {
		if err := substituteAll(list, o); err != nil {
			return nil, err
		}
	}
	for _, r := range list {
		if err := setOwnerLabels(r.obj, o.Name, o.Namespace); err != nil {
			return nil, err
		}
		if err := MaskSOPS(r.obj); err != nil {
			return nil, err
		}
	}
	objs, err := readObjects(list)
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	if o.CommonLabels != nil || o.CommonAnnotations != nil {
		SetCommonMetadata(objs, o.CommonLabels, o.CommonAnnotations)
	}
	return objs, nil
}

// resource is one resource of kustomize's output, as kustomize holds it
// between the steps: its tree with numbers as JSON numbers (json.Number,
// the text kustomize prints them with), and its text while it is the one
// kustomize printed.
type resource struct {
	text []byte
	obj  map[string]any
}

// parseResources splits kustomize's output into its documents and reads
// each as Flux reads YAML (YAML 1.1, sigs.k8s.io/yaml).
func parseResources(out []byte) ([]*resource, error) {
	var list []*resource
	for _, doc := range splitDocuments(out) {
		obj, err := yamlObject(doc)
		if err != nil {
			return nil, err
		}
		if obj == nil {
			continue // an empty document
		}
		list = append(list, &resource{text: doc, obj: obj})
	}
	return list, nil
}

// splitDocuments splits a YAML stream at its "---" lines.
func splitDocuments(b []byte) [][]byte {
	var docs [][]byte
	start := 0
	for i := 0; i <= len(b); {
		end := bytes.IndexByte(b[i:], '\n')
		var line []byte
		next := len(b) + 1
		if end < 0 {
			line = b[i:]
		} else {
			line = b[i : i+end]
			next = i + end + 1
		}
		if string(bytes.TrimRight(line, "\r")) == "---" || bytes.HasPrefix(line, []byte("--- ")) {
			if doc := b[start:i]; len(bytes.TrimSpace(doc)) > 0 {
				docs = append(docs, doc)
			}
			start = min(next, len(b))
		}
		i = next
	}
	if doc := b[start:]; len(bytes.TrimSpace(doc)) > 0 {
		docs = append(docs, doc)
	}
	return docs
}

// yamlObject reads one YAML document as sigs.k8s.io/yaml.YAMLToJSON reads
// it, numbers kept as their JSON text. A document that is not a map is an
// error; an empty one is nil.
func yamlObject(doc []byte) (map[string]any, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	return jsonObject(j)
}

// jsonObject decodes a JSON object, numbers as json.Number; "null" is nil.
func jsonObject(j []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// scalarText is a value as kyaml's GetValue reads it from kustomize's
// node: a scalar's text, "" for a map or a list.
func scalarText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case json.Number:
		return string(t)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	}
	return ""
}

// nestedMap returns m[path[0]][path[1]]... when every step is a map.
func nestedMap(m map[string]any, path ...string) (map[string]any, bool) {
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}

// stringField is a top-level field as a string, "" when it is not one.
func stringField(m map[string]any, path ...string) string {
	parent, ok := nestedMap(m, path[:len(path)-1]...)
	if !ok {
		return ""
	}
	s, _ := parent[path[len(path)-1]].(string)
	return s
}
