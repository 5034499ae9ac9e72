package resyaml

import (
	"bytes"
	"io"

	yaml "go.yaml.in/yaml/v3"
)

// The yaml.v3 node helpers that the stages working on nodes (replacements)
// and kpipe fn run share: kustomize's kyaml edits and prints objects as
// go.yaml.in/yaml/v3 node trees, and these do what its helpers do.

// CopyNode is a deep copy of n.
func CopyNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, e := range n.Content {
			c.Content[i] = CopyNode(e)
		}
	}
	return &c
}

// NewNodeEncoder is kyaml's encoder: two-space indents, a list at its
// key's indentation.
func NewNodeEncoder(w io.Writer) *yaml.Encoder {
	e := yaml.NewEncoder(w)
	e.SetIndent(2)
	e.CompactSeqIndent()
	return e
}

// EncodeNode prints n as kyaml's RNode.String does.
func EncodeNode(n *yaml.Node) (string, error) {
	var b bytes.Buffer
	e := NewNodeEncoder(&b)
	err := e.Encode(n)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	return b.String(), err
}

// NodeKindName names a node kind as kyaml's errors do ("" for none).
func NodeKindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "SequenceNode"
	case yaml.MappingNode:
		return "MappingNode"
	case yaml.ScalarNode:
		return "ScalarNode"
	case yaml.DocumentNode:
		return "DocumentNode"
	case yaml.AliasNode:
		return "AliasNode"
	}
	return ""
}
