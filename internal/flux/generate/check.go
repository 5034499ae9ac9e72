package generate

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kpipe/kpipe/internal/resyaml"
	"go.yaml.in/yaml/v3"
)

// errMissingMetadata is kyaml's ErrMissingMetadata.
var errMissingMetadata = errors.New("missing Resource metadata")

// resourceMeta has the shape of kyaml's ResourceMeta, whose %v its errors
// print.
type resourceMeta struct {
	typeMeta
	objectMeta
}

type typeMeta struct {
	APIVersion string
	Kind       string
}

type objectMeta struct {
	nameMeta
	Labels      map[string]string
	Annotations map[string]string
}

type nameMeta struct {
	Name      string
	Namespace string
}

// CheckResources parses a YAML file as kustomize's ResourceFactory
// (SliceFromBytes, kustomize v5.8.1) parses a resource file when Flux's
// generator lists a directory, and returns its error, worded as
// kustomize's: "MalformedYAMLError: yaml: line 3: ...", "missing Resource
// metadata" (a values file, a .sops.yaml), "missing kind in object ...",
// "missing metadata.name in object ...".
func CheckResources(data []byte) error {
	docs, err := resyaml.SplitDocuments(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if err != nil {
		return err
	}
	var nodes []*yaml.Node
	for i, doc := range docs {
		if i != len(docs)-1 {
			doc += "\n"
		}
		var n yaml.Node
		err := yaml.NewDecoder(strings.NewReader(doc)).Decode(&n)
		if err == io.EOF {
			continue
		}
		if err != nil {
			return fmt.Errorf("MalformedYAMLError: %w", err)
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) > 0 && n.Content[0].Tag == "!!null" {
			continue
		}
		c := &n
		if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
			c = n.Content[0]
		}
		if c.Tag == "!!null" {
			continue
		}
		meta, _ := getMeta(c)
		if (meta.Kind == "ResourceList" || meta.Kind == "List") && (fieldValue(c, "items") != nil || fieldValue(c, "functionConfig") != nil) {
			if items := fieldValue(c, "items"); items != nil {
				nodes = append(nodes, items.Content...)
			}
			continue
		}
		nodes = append(nodes, c)
	}
	for _, n := range nodes {
		if nilOrEmpty(n) {
			continue
		}
		m, err := getMeta(n)
		if err != nil {
			return err
		}
		if m.Kind == "" {
			return fmt.Errorf("missing kind in object %v", m)
		}
		if !strings.HasSuffix(m.Kind, "List") && m.Name == "" {
			return fmt.Errorf("missing metadata.name in object %v", m)
		}
	}
	for _, n := range nodes {
		if nilOrEmpty(n) {
			continue
		}
		m, _ := getMeta(n)
		if !strings.HasSuffix(m.Kind, "List") {
			continue
		}
		items := fieldValue(n, "items")
		if items == nil || items.Tag == "!!null" {
			continue
		}
		if items.Kind != yaml.SequenceNode {
			var v any
			if err := items.Decode(&v); err != nil {
				return fmt.Errorf("trouble expanding list of %s; %w", m.Kind, err)
			}
			return fmt.Errorf("expected array in %s/items, but found %T", m.Kind, v)
		}
	}
	return nil
}

// getMeta reads a node's type and metadata as kyaml's GetMeta does.
func getMeta(n *yaml.Node) (resourceMeta, error) {
	var m resourceMeta
	if n == nil || n.Tag == "!!null" {
		return m, nil
	}
	missing := true
	if f := fieldValue(n, "apiVersion"); !nilOrEmpty(f) {
		m.APIVersion, missing = f.Value, false
	}
	if f := fieldValue(n, "kind"); !nilOrEmpty(f) {
		m.Kind, missing = f.Value, false
	}
	meta := fieldValue(n, "metadata")
	if nilOrEmpty(meta) {
		if missing {
			return m, errMissingMetadata
		}
		return m, nil
	}
	if f := fieldValue(meta, "name"); !nilOrEmpty(f) {
		m.Name, missing = f.Value, false
	}
	if f := fieldValue(meta, "namespace"); !nilOrEmpty(f) {
		m.Namespace, missing = f.Value, false
	}
	for _, fm := range []struct {
		name string
		dst  *map[string]string
	}{{"labels", &m.Labels}, {"annotations", &m.Annotations}} {
		if f := fieldValue(meta, fm.name); !nilOrEmpty(f) {
			*fm.dst = map[string]string{}
			if f.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(f.Content); i += 2 {
					(*fm.dst)[f.Content[i].Value] = f.Content[i+1].Value
				}
			}
			missing = false
		}
	}
	if missing {
		return m, errMissingMetadata
	}
	return m, nil
}

// fieldValue is the value of the first key name of mapping n (kyaml's
// Field), nil when there is none.
func fieldValue(n *yaml.Node, name string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			return n.Content[i+1]
		}
	}
	return nil
}

// nilOrEmpty is kyaml's IsYNodeNilOrEmpty.
func nilOrEmpty(n *yaml.Node) bool {
	return n == nil || n.Tag == "!!null" ||
		(n.Kind == yaml.MappingNode && len(n.Content) == 0) ||
		(n.Kind == yaml.SequenceNode && len(n.Content) == 0) ||
		(n.Kind == 0 && n.Style == 0 && n.Tag == "" && n.Value == "" && n.Anchor == "" && n.Alias == nil &&
			n.Content == nil && n.HeadComment == "" && n.LineComment == "" && n.FootComment == "" && n.Line == 0 && n.Column == 0)
}
