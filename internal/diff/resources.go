// Package diff compares rendered Kubernetes configuration resource by
// resource, as `kpipe diff` shows it to a reviewer: resources are matched by
// group, kind, namespace and name (not by line position), a generated
// ConfigMap or Secret whose hash suffix changed is one changed resource, a
// change of order alone is no change, and a Secret's values are never
// printed unless asked (a short digest of each value stands in for it).
//
// Compare works on two outputs of one root; Review (review.go) renders the
// roots of two git revisions or two trees and compares them; the Format
// functions (format.go) print the result for a terminal, a pull-request
// comment (markdown) or a program (JSON).
package diff

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// ID identifies a resource the way Kubernetes does: the API group (not
// its version: an apiVersion bump is a change of the same resource), kind,
// namespace and name.
type ID struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String is "group/Kind namespace/name" (core resources without group).
func (id ID) String() string {
	s := id.Kind
	if id.Group != "" {
		s = id.Group + "/" + id.Kind
	}
	if id.Namespace != "" {
		return s + " " + id.Namespace + "/" + id.Name
	}
	return s + " " + id.Name
}

// resource is one document of a rendered output.
type resource struct {
	id     ID
	text   string // the document as rendered (Secret values masked unless shown)
	secret bool
}

// parseOutput splits a rendered output (YAML documents separated by "---"
// lines, as kustomize writes them) into resources. showSecrets keeps
// Secret values; otherwise each is replaced by a short digest.
func parseOutput(data []byte, showSecrets bool) ([]resource, error) {
	docs := splitDocs(data)
	out := make([]resource, 0, len(docs))
	for i, doc := range docs {
		r, err := parseDoc(i, doc, showSecrets)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// parseDoc reads document i (from 0) of an output as a resource.
func parseDoc(i int, doc []byte, showSecrets bool) (resource, error) {
	var head struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name      string `yaml:"name"`
			Namespace string `yaml:"namespace"`
		} `yaml:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return resource{}, fmt.Errorf("document %d: %w", i+1, err)
	}
	id := ID{Kind: head.Kind, Namespace: head.Metadata.Namespace, Name: head.Metadata.Name}
	if g, _, ok := strings.Cut(head.APIVersion, "/"); ok {
		id.Group = g
	}
	r := resource{id: id, text: string(doc)}
	if id.Group == "" && id.Kind == "Secret" {
		r.secret = true
		if !showSecrets {
			masked, err := maskSecret(r.text)
			if err != nil {
				return resource{}, fmt.Errorf("document %d (%s): %w", i+1, id, err)
			}
			r.text = masked
		}
	}
	return r, nil
}

// splitDocs splits a YAML stream at its "---" lines, leaving out
// documents of nothing but white space. The documents are slices of data.
func splitDocs(data []byte) [][]byte {
	var out [][]byte
	add := func(doc []byte) {
		if len(bytes.TrimSpace(doc)) > 0 {
			out = append(out, doc)
		}
	}
	start := 0 // of the current document
	for at := 0; at < len(data); {
		// The next line that starts with "---" (at the start of data, or
		// after a newline).
		i := at
		if !(at == 0 && bytes.HasPrefix(data, []byte("---"))) {
			from := max(at-1, 0) // (the newline that ends the line before at)
			j := bytes.Index(data[from:], []byte("\n---"))
			if j < 0 {
				break
			}
			i = from + j + 1
		}
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if end >= 0 {
			end += i
			next = end + 1
		} else {
			end = len(data)
		}
		if string(bytes.TrimRight(data[i:end], "\r")) == "---" {
			add(data[start:i])
			start = next
		}
		at = next
	}
	add(data[start:])
	return out
}

// maskSecret replaces every value under a Secret's data and stringData with
// "<secret sha256:XXXXXXXX>", a digest of the value: a reviewer sees which
// keys were added, removed or changed, and never a value.
func maskSecret(doc string) (string, error) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		return "", err
	}
	if len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
		return doc, nil
	}
	top := n.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if (k.Value != "data" && k.Value != "stringData") || v.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			val := v.Content[j+1]
			var raw bytes.Buffer
			if val.Kind == yaml.ScalarNode {
				raw.WriteString(val.Value)
			} else {
				b, _ := yaml.Marshal(val)
				raw.Write(b)
			}
			sum := sha256.Sum256(raw.Bytes())
			*val = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "<secret sha256:" + hex.EncodeToString(sum[:4]) + ">"}
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(top); err != nil {
		return "", err
	}
	_ = enc.Close()
	return buf.String(), nil
}

// hashSuffix matches the suffix kustomize appends to a generated name: a
// dash and ten characters of its hash alphabet.
var hashSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-[2456789bcdfghkmt]{10}$`) })

// baseName is a name without its generator hash suffix ("" when it has
// none).
func baseName(name string) string {
	if loc := hashSuffix().FindStringIndex(name); loc != nil && loc[0] > 0 {
		return name[:loc[0]]
	}
	return ""
}
