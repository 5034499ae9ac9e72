package fnrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/internal/resyaml"
	"go.yaml.in/yaml/v3"
)

// The annotations kustomize's function runner keeps an object's file,
// position and identity in, in their current and legacy spellings.
const (
	PathAnnotation        = "internal.config.kubernetes.io/path"
	LegacyPathAnnotation  = "config.kubernetes.io/path"
	IndexAnnotation       = "internal.config.kubernetes.io/index"
	LegacyIndexAnnotation = "config.kubernetes.io/index"
	idAnnotation          = "internal.config.kubernetes.io/id"
	legacyIDAnnotation    = "config.k8s.io/id"
	seqIndentAnnotation   = "internal.config.kubernetes.io/seqindent"
	migrationAnnotation   = "internal.config.kubernetes.io/annotations-migration-resource-id"
	bareSeqWrappingKey    = "bareSeqNodeWrappingKey"
	resourceListKind      = "ResourceList"
	resourceListVersion   = "config.kubernetes.io/v1"
)

// separator is a line starting a new YAML document, as kyaml splits them.
// (Compiled on first use: only kpipe fn runs read function output.)
// reader reads objects from a YAML stream as kyaml's ByteReader does.
type reader struct {
	// set are annotations to set on every object read (with the index
	// annotations, unless omitIndex), in key order.
	set map[string]string
	// unwrap takes the items out of a stream that is one ResourceList or
	// List, keeping its results.
	unwrap bool

	results *yaml.Node // a ResourceList's results
}

// read decodes data into objects: the document nodes themselves, or a
// ResourceList's items.
func (r *reader) read(data []byte) ([]*yaml.Node, error) {
	values, err := resyaml.SplitDocuments(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if err != nil {
		return nil, err
	}
	var out []*yaml.Node
	index := 0
	for i := range values {
		if i != len(values)-1 {
			values[i] += "\n"
		}
		node, err := r.decode(values[i], index)
		if err == io.EOF {
			continue
		}
		if err != nil {
			return nil, err
		}
		if isMissingOrNull(node) {
			continue
		}
		m, err := getMeta(node)
		if err != nil && err != errMissingMetadata {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		if r.unwrap && len(values) == 1 && (m.Kind == resourceListKind || m.Kind == "List") {
			_, items := field(node, "items")
			_, fc := field(node, "functionConfig")
			if items != nil || fc != nil {
				if _, res := field(node, "results"); res != nil {
					r.results = res
				}
				if items != nil {
					out = append(out, items.Content...)
				}
				continue
			}
		}
		out = append(out, node)
		index++
	}
	return out, nil
}

// decode decodes one document and sets the reader's annotations on it; nil
// for an empty document.
func (r *reader) decode(doc string, index int) (*yaml.Node, error) {
	node := &yaml.Node{}
	if err := yaml.NewDecoder(strings.NewReader(doc)).Decode(node); err == io.EOF {
		return nil, io.EOF
	} else if err != nil {
		return nil, fmt.Errorf("MalformedYAMLError: %w", err)
	}
	if node.Kind == yaml.DocumentNode && node.Content[0].Tag == nullTag {
		return nil, nil
	}
	if r.set == nil {
		r.set = map[string]string{}
	}
	if err := copyLegacyAnnotations(node); err != nil {
		return nil, err
	}
	r.set[IndexAnnotation] = strconv.Itoa(index)
	r.set[LegacyIndexAnnotation] = strconv.Itoa(index)
	keys := make([]string, 0, len(r.set))
	for k := range r.set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := setAnnotation(node, k, r.set[k]); err != nil {
			return nil, err
		}
	}
	return node, nil
}

// writer writes objects as a YAML stream as kyaml's ByteWriter does.
type writer struct {
	// keepReader keeps the index annotations (and seqindent).
	keepReader bool
	// clear are annotations removed before writing.
	clear []string
	// wrap, when set, writes one ResourceList with the objects as items and
	// functionConfig as its functionConfig.
	wrap           bool
	functionConfig *yaml.Node
}

// write renders copies of nodes: each a document, or all in a
// ResourceList; a single object bound for a .json file is written as JSON.
func (w writer) write(out io.Writer, in []*yaml.Node) error {
	nodes := make([]*yaml.Node, len(in))
	for i, n := range in {
		nodes[i] = resyaml.CopyNode(n)
	}
	asJSON := false
	if !w.wrap && len(nodes) == 1 {
		if p := pathOf(nodes[0]); p != "" {
			if ok, _ := filepath.Match("*.json", filepath.Base(p)); ok {
				asJSON = true
			}
		}
	}
	seqIndents := make([]string, len(nodes))
	for i, n := range nodes {
		seqIndents[i] = annotations(n)[seqIndentAnnotation]
	}
	for _, n := range nodes {
		if !w.keepReader {
			for _, a := range []string{IndexAnnotation, LegacyIndexAnnotation, seqIndentAnnotation} {
				if err := clearAnnotation(n, a); err != nil {
					return err
				}
			}
		}
		for _, a := range w.clear {
			if err := clearAnnotation(n, a); err != nil {
				return err
			}
		}
		if err := clearEmptyAnnotations(n); err != nil {
			return err
		}
	}
	if asJSON {
		b, err := nodeJSON(nodes[0])
		if err != nil {
			return err
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(json.RawMessage(b))
	}
	var buf bytes.Buffer
	e := resyaml.NewNodeEncoder(&buf)
	if !w.wrap {
		for i, n := range nodes {
			if seqIndents[i] == "wide" {
				e.DefaultSeqIndent()
			} else {
				e.CompactSeqIndent()
			}
			if err := e.Encode(unwrapBareSequence(n)); err != nil {
				return err
			}
		}
	} else {
		items := &yaml.Node{Kind: yaml.SequenceNode}
		list := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "apiVersion"}, {Kind: yaml.ScalarNode, Value: resourceListVersion},
			{Kind: yaml.ScalarNode, Value: "kind"}, {Kind: yaml.ScalarNode, Value: resourceListKind},
			{Kind: yaml.ScalarNode, Value: "items"}, items,
		}}
		if w.functionConfig != nil {
			list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "functionConfig"}, content(w.functionConfig))
		}
		for _, n := range nodes {
			items.Content = append(items.Content, content(n))
		}
		if err := e.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{list}}); err != nil {
			return err
		}
	}
	if err := e.Close(); err != nil {
		return err
	}
	_, err := out.Write(buf.Bytes())
	return err
}

// unwrapBareSequence undoes kyaml's wrapping of a bare list document.
func unwrapBareSequence(n *yaml.Node) *yaml.Node {
	if v, err := lookup(n, bareSeqWrappingKey); err == nil && v != nil && !isNilOrEmpty(v) {
		return v
	}
	return n
}

// nodeJSON is kyaml's RNode.MarshalJSON: the node rendered as YAML, decoded
// into plain values and encoded as JSON (keys sorted).
func nodeJSON(n *yaml.Node) ([]byte, error) {
	if content(n) == nil {
		return []byte("null"), nil
	}
	s, err := resyaml.EncodeNode(n)
	if err != nil {
		return nil, err
	}
	if content(n).Kind == yaml.SequenceNode {
		var a []any
		if err := yaml.Unmarshal([]byte(s), &a); err != nil {
			return nil, err
		}
		return json.Marshal(a)
	}
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}
