package kustfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"
	yaml "go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
)

// A FileEdit is a file ConvertVars rewrote: its path and new content.
type FileEdit struct {
	Path string
	Data []byte
}

// ConvertVars converts k's vars to replacements as `kustomize edit fix
// --vars` does (kustomize v5.8.2, commands/edit/fix/convert.go), on a
// kustomization whose deprecated fields Fix already moved. For each var,
// in order, it finds every scalar holding $(NAME) in the files the
// kustomization names (its resources, a kustomization directory's
// resources and patches one level down, its patches), adds a replacement
// from the var's object and field to each of them, then rewrites
// $(NAME) as NAME_PLACEHOLDER in those files, text for text, so that
// their formatting stays. The replacements k had are replaced, as
// kustomize replaces them.
//
// It writes nothing: it returns the files whose content changed, in the
// order kustomize first names them, for the caller to write. A file to
// change outside dir (a base at ../base, or a symlink leaving dir) is an
// error naming it: kpipe writes only under the directory it edits.
func ConvertVars(k *loaders.Kustomization, dir string) ([]FileEdit, error) {
	if k.Vars == nil {
		return nil, nil
	}
	k.Resources = append(k.Resources, k.Bases...)
	k.Bases = nil
	k.Replacements = []loaders.ReplacementField{}
	c := &varConverter{dir: dir, patches: map[string]loaders.Patch{}, content: map[string][]byte{}}
	files, err := c.filesTouched(k, "")
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, v := range k.Vars {
		targets, err := c.targets(v.Name, files)
		if err != nil {
			return nil, err
		}
		group, version := parseGroupVersion(v.ObjRef.APIVersion)
		k.Replacements = append(k.Replacements, loaders.ReplacementField{Replacement: loaders.Replacement{
			Source: &loaders.SourceSelector{Group: group, Version: version, Kind: v.ObjRef.Kind,
				Name: v.ObjRef.Name, Namespace: v.ObjRef.Namespace, FieldPath: v.FieldRef.FieldPath},
			Targets: targets,
		}})
		old, placeholder := []byte("$("+v.Name+")"), []byte(v.Name+"_PLACEHOLDER")
		for _, f := range files {
			data, ok := c.read(f)
			if !ok || !bytes.Contains(data, old) {
				continue
			}
			c.content[c.key(f)] = bytes.ReplaceAll(data, old, placeholder)
			if !slices.Contains(changed, f) {
				changed = append(changed, f)
			}
		}
	}
	k.Vars = nil
	edits := make([]FileEdit, 0, len(changed))
	for _, f := range changed {
		p, err := c.confined(f)
		if err != nil {
			return nil, err
		}
		edits = append(edits, FileEdit{Path: p, Data: c.content[c.key(f)]})
	}
	return edits, nil
}

// varConverter holds what one conversion read.
type varConverter struct {
	dir string
	// patches are the patches of the files that are patches, by path.
	patches map[string]loaders.Patch
	// content is each file's content as the conversion left it, by
	// key: the file's real path, as kustomize rewrites a file in place
	// before reading it again for the next var.
	content map[string][]byte
}

// abs is the file f (a slash path relative to dir) on disk.
func (c *varConverter) abs(f string) string {
	if filepath.IsAbs(filepath.FromSlash(f)) {
		return filepath.FromSlash(f)
	}
	return filepath.Join(c.dir, filepath.FromSlash(f))
}

// key names f's content: its real path where it has one.
func (c *varConverter) key(f string) string {
	p := c.abs(f)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

// read returns f's content, false where it cannot be read (a directory, a
// URL, a missing file), as kustomize skips those.
func (c *varConverter) read(f string) ([]byte, bool) {
	k := c.key(f)
	if data, ok := c.content[k]; ok {
		return data, true
	}
	data, err := fsread.File(c.abs(f))
	if err != nil {
		return nil, false
	}
	c.content[k] = data
	return data, true
}

// confined returns f's path if it lies under dir (following symlinks),
// else an error naming it.
func (c *varConverter) confined(f string) (string, error) {
	p := c.abs(f)
	root, err := filepath.EvalSymlinks(c.dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("converting vars would rewrite %s, outside %s: kpipe writes only under the directory it edits (convert from a directory that holds every file using the vars)", p, c.dir)
	}
	return p, nil
}

// filesTouched lists the files kustomize looks at for vars, as its
// filesTouchedByKustomize does: each resource (a directory too, which then
// reads as nothing), preceded by what a kustomization file in a resource
// directory names (its resources and patches, prefixed with the
// directory; its own directories are looked up from dir, not from it, as
// kustomize does), then the paths of the patches, which it remembers.
func (c *varConverter) filesTouched(k *loaders.Kustomization, prefix string) ([]string, error) {
	var out []string
	for _, r := range k.Resources {
		entries, err := os.ReadDir(c.abs(r))
		if err == nil {
			for _, e := range entries {
				if !slices.Contains(FileNames, e.Name()) {
					continue
				}
				data, err := fsread.File(filepath.Join(c.abs(r), e.Name()))
				if err != nil {
					continue
				}
				sub, err := parseLoose(data)
				if err != nil {
					return nil, err
				}
				paths, err := c.filesTouched(sub, r)
				if err != nil {
					return nil, err
				}
				out = append(out, paths...)
			}
		}
		out = append(out, path.Join(prefix, r))
	}
	for _, p := range k.Patches {
		if p.Path != "" {
			pp := path.Join(prefix, p.Path)
			out = append(out, pp)
			c.patches[pp] = p
		}
	}
	return out, nil
}

// parseLoose decodes a kustomization as sigs.k8s.io/yaml does, without
// kustomize's read-time fixes and ignoring unknown fields.
func parseLoose(data []byte) (*loaders.Kustomization, error) {
	var doc interface{}
	if err := yaml2.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("error converting YAML to JSON: %w", err)
	}
	j, err := json.Marshal(jsonable(doc))
	if err != nil {
		return nil, fmt.Errorf("error converting YAML to JSON: %w", err)
	}
	var k loaders.Kustomization
	if err := json.Unmarshal(j, &k); err != nil {
		return nil, fmt.Errorf("error unmarshaling JSON: while decoding JSON: %w", err)
	}
	return &k, nil
}

// targets returns the replacement targets of the var name: one for each
// scalar of each object of each file that holds $(name).
func (c *varConverter) targets(name string, files []string) ([]*loaders.TargetSelector, error) {
	var out []*loaders.TargetSelector
	for _, f := range files {
		data, ok := c.read(f)
		if !ok {
			continue
		}
		nodes, err := readObjects(data)
		if err != nil {
			continue // kustomize skips a file it cannot parse
		}
		for _, n := range nodes {
			var found []fieldOption
			if err := findVar(content(n), "$("+name+")", nil, &found); err != nil {
				return nil, fmt.Errorf("error with %s: %s", f, err)
			}
			out = append(out, c.objectTargets(f, n, found)...)
		}
	}
	return out, nil
}

// fieldOption is one field holding a var: its path and options.
type fieldOption struct {
	path    string
	options *loaders.FieldOptions
}

// findVar appends to found every scalar under n that holds v, with its
// path as kustomize spells it: keys and sequence indexes joined by dots,
// a key that holds a dot in brackets, a key as the YAML encoder writes it
// (a comment above it included).
func findVar(n *yaml.Node, v string, at []string, found *[]fieldOption) error {
	switch n.Kind {
	case yaml.SequenceNode:
		for i, e := range n.Content {
			if err := findVar(e, v, append(at, strconv.Itoa(i)), found); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		// kustomize visits the fields by name, each name at its first
		// key (a repeated key is visited twice, at the first).
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, value := firstField(n, n.Content[i].Value)
			item := strings.TrimSpace(encodeNode(key))
			if strings.Contains(item, ".") {
				item = "[" + item + "]"
			}
			if err := findVar(value, v, append(at, item), found); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		if strings.Contains(n.Value, v) {
			opts, err := fieldOptions(n.Value, v)
			if err != nil {
				return err
			}
			*found = append(*found, fieldOption{path: strings.Join(at, "."), options: opts})
		}
	}
	return nil
}

// firstField returns the first key of the mapping n named name, and its
// value.
func firstField(n *yaml.Node, name string) (*yaml.Node, *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// encodeNode is a node as kyaml's String writes it (indent 2).
func encodeNode(n *yaml.Node) string {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	if err := e.Encode(n); err != nil {
		return ""
	}
	_ = e.Close()
	return b.String()
}

// fieldOptions are the options that select v within value: none when
// value is v, else the character beside it as delimiter and v's index
// among the parts.
func fieldOptions(value, v string) (*loaders.FieldOptions, error) {
	if value == v {
		return nil, nil
	}
	i := strings.Index(value, v)
	var delim string
	var index int
	switch {
	case i == 0:
		delim = string(value[len(v)])
	case i+len(v) >= len(value):
		delim = string(value[i-1])
		index = len(strings.Split(value, delim)) - 1
	default:
		pre, post := string(value[i-1]), string(value[i+len(v)])
		if pre != post {
			return nil, fmt.Errorf("cannot convert all vars to replacements; %s is not delimited", v)
		}
		delim = pre
		index = slices.Index(strings.Split(value, delim), v)
		if index == -1 {
			return nil, fmt.Errorf("internal error: could not get index of var %s", v)
		}
	}
	return &loaders.FieldOptions{Delimiter: delim, Index: index}, nil
}

// objectTargets are the targets of the fields found in the object n of
// file f: selecting the object by its kind, name, namespace, group and
// version; or, in a patch (unless it may change both name and kind), by
// the patch's target.
func (c *varConverter) objectTargets(f string, n *yaml.Node, found []fieldOption) []*loaders.TargetSelector {
	n = content(n)
	var out []*loaders.TargetSelector
	if p, ok := c.patches[f]; ok && (p.Options == nil || !p.Options.AllowNameChange || !p.Options.AllowKindChange) {
		// One selector for all of the object's targets, as kustomize
		// shares it.
		sel := &loaders.Selector{}
		if p.Target != nil {
			*sel = *p.Target
		}
		for _, fo := range found {
			if p.Options != nil {
				if p.Options.AllowNameChange {
					sel.Name = metaField(n, "name")
				}
				if p.Options.AllowKindChange {
					sel.Kind = mapValue(n, "kind")
				}
			}
			if ns := metaField(n, "namespace"); ns != "" {
				sel.Namespace = ns
			}
			out = append(out, &loaders.TargetSelector{Select: sel, FieldPaths: []string{fo.path}, Options: fo.options})
		}
		return out
	}
	for _, fo := range found {
		sel := &loaders.Selector{Kind: mapValue(n, "kind"), Name: metaField(n, "name"), Namespace: metaField(n, "namespace")}
		if av := apiVersion(n); av != "" {
			sel.Group, sel.Version = parseGroupVersion(av)
		}
		out = append(out, &loaders.TargetSelector{Select: sel, FieldPaths: []string{fo.path}, Options: fo.options})
	}
	return out
}

// content is the node a document holds.
func content(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return n.Content[0]
	}
	return n
}

// mapValue is the value of the first field name of the mapping n, "" when
// there is none (kyaml's getMapFieldValue).
func mapValue(n *yaml.Node, name string) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	if _, v := firstField(n, name); v != nil {
		return v.Value
	}
	return ""
}

// metaField is metadata's field name, "" when missing or empty (kyaml's
// getMetaStringField).
func metaField(n *yaml.Node, name string) string {
	if n.Kind != yaml.MappingNode || n.Tag == "!!null" {
		return ""
	}
	_, md := firstField(n, "metadata")
	if nilOrEmpty(md) || md.Kind != yaml.MappingNode {
		return ""
	}
	if _, v := firstField(md, name); !nilOrEmpty(v) {
		return v.Value
	}
	return ""
}

// apiVersion is the object's apiVersion, as kyaml's GetMeta reads it.
func apiVersion(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	if _, v := firstField(n, "apiVersion"); !nilOrEmpty(v) && v.Tag != "!!null" {
		return v.Value
	}
	return ""
}

// nilOrEmpty is kyaml's IsYNodeNilOrEmpty.
func nilOrEmpty(n *yaml.Node) bool {
	return n == nil || n.Tag == "!!null" ||
		(n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && len(n.Content) == 0 ||
		n.Kind == 0 && n.Style == 0 && n.Tag == "" && n.Value == "" && n.Anchor == "" && n.Alias == nil &&
			n.Content == nil && n.HeadComment == "" && n.LineComment == "" && n.FootComment == "" && n.Line == 0 && n.Column == 0
}

// parseGroupVersion splits an apiVersion into group and version.
func parseGroupVersion(av string) (string, string) {
	if g, v, ok := strings.Cut(av, "/"); ok {
		return g, v
	}
	return "", av
}

// readObjects splits a file into its objects as kyaml's ByteReader does
// (no reader annotations): documents split at separator lines, empty and
// null documents skipped, the items of a file that is one List or
// ResourceList taken in its place.
func readObjects(data []byte) ([]*yaml.Node, error) {
	docs, err := resyaml.SplitDocuments(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if err != nil {
		return nil, err
	}
	var out []*yaml.Node
	for i, d := range docs {
		if i != len(docs)-1 {
			d += "\n"
		}
		var doc yaml.Node
		err := yaml.NewDecoder(strings.NewReader(d)).Decode(&doc)
		if errors.Is(err, io.EOF) {
			continue
		}
		if err != nil {
			return nil, err
		}
		n := content(&doc)
		if n == nil || n.Tag == "!!null" {
			continue
		}
		if len(docs) == 1 && n.Kind == yaml.MappingNode {
			if kind := mapValue(n, "kind"); kind == "ResourceList" || kind == "List" {
				_, items := firstField(n, "items")
				_, fc := firstField(n, "functionConfig")
				if items != nil || fc != nil {
					if items != nil {
						out = append(out, items.Content...)
					}
					continue
				}
			}
		}
		out = append(out, &doc)
	}
	return out, nil
}
