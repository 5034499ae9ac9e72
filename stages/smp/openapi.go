package smp

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// FromOpenAPI returns the schema kustomize merges with when a
// kustomization's `openapi: {path: FILE}` field names a custom OpenAPI
// (Swagger 2.0) document, JSON or YAML. Only the document's definitions
// are read: their x-kubernetes-patch-strategy, x-kubernetes-patch-merge-key
// and x-kubernetes-list-map-keys say which lists merge by key, and
// x-kubernetes-group-version-kind which kinds they describe.
//
// kustomize keeps one schema per process and combines a custom document
// with it in two ways, depending on whether its built-in schema was
// already in use when the document was set. With onBuiltin false the
// result is the document alone (plus kustomize's own Kustomization kind):
// kinds the document does not describe have no schema, so their lists are
// replaced. With onBuiltin true the document is laid over the built-in
// schema: its definitions replace the built-in ones of the same name
// (also where built-in definitions refer to them), its kinds are added,
// and its references may name built-in definitions.
func FromOpenAPI(doc []byte, onBuiltin bool) (*Schema, error) {
	top, err := decodeDocument(doc)
	if err != nil {
		return nil, err
	}
	raw, err := definitions(top)
	if err != nil {
		return nil, err
	}
	bt, err := builtinTable()
	if err != nil {
		return nil, err
	}
	// kustomize parses its Kustomization definitions after the document,
	// so they win over definitions of the same name.
	kustomizeDefs := map[string]bool{}
	for _, k := range bt.kinds {
		if isKustomizeAPIVersion(k.apiVersion) {
			kustomizeDefs[k.def] = true
		}
	}
	nodes := map[string]*schemaNode{}
	for _, d := range bt.defs {
		if onBuiltin || kustomizeDefs[d.name] {
			nodes[d.name] = &schemaNode{}
		}
	}
	custom := map[string]bool{}
	names := make([]string, 0, len(raw))
	for name := range raw {
		if !kustomizeDefs[name] {
			names = append(names, name)
			custom[name] = true
			nodes[name] = &schemaNode{}
		}
	}
	sort.Strings(names)
	c := &converter{raw: raw, nodes: nodes}
	// A definition that is only a reference is the definition it names,
	// also where other definitions refer to it.
	for _, name := range names {
		if _, isRef := ref(raw[name]); isRef {
			nodes[name] = c.resolve(raw[name], map[string]bool{name: true})
		}
	}
	if err := bt.bind(nodes, func(name string) bool { return nodes[name] != nil && !custom[name] }); err != nil {
		return nil, err
	}
	defNodes := map[string]*schemaNode{}
	for _, name := range names {
		n, err := c.definition(name)
		if err != nil {
			return nil, err
		}
		defNodes[name] = n
	}
	s := &Schema{kinds: map[[2]string]*schemaNode{}, id: "openapi/" + digest(doc)}
	if onBuiltin {
		s.id = "openapi+builtin/" + builtinSchemaVersion + "/" + digest(doc)
		for _, k := range bt.kinds {
			n := nodes[k.def]
			if custom[k.def] {
				// A kind keeps the built-in definition it was indexed with;
				// only its references see the document's definitions.
				for _, d := range bt.defs {
					if d.name == k.def {
						if n, err = bt.parseDef(d, nodes); err != nil {
							return nil, err
						}
					}
				}
			}
			s.kinds[[2]string{k.apiVersion, k.kind}] = n
		}
	}
	for _, name := range names {
		gvks, err := groupVersionKinds(name, raw[name])
		if err != nil {
			return nil, err
		}
		for _, k := range gvks {
			s.kinds[k] = defNodes[name]
		}
	}
	for _, k := range bt.kinds {
		if isKustomizeAPIVersion(k.apiVersion) {
			s.kinds[[2]string{k.apiVersion, k.kind}] = nodes[k.def]
		}
	}
	s.clusterScoped = clusterScopedKinds(top)
	return s, nil
}

// ClusterScoped returns the kinds, as [apiVersion, kind], that the custom
// document's API paths declare cluster scoped (read by GET at paths none
// of which has a namespace), sorted; none for the built-in schema, whose
// scopes package resource knows. kustomize leaves such kinds without a
// namespace; kpipe does not read scopes from custom documents yet.
func (s *Schema) ClusterScoped() [][2]string {
	if s == nil {
		return nil
	}
	return s.clusterScoped
}

// clusterScopedKinds reads the document's paths as kyaml's
// findNamespaceability does.
func clusterScopedKinds(top map[string]any) [][2]string {
	paths, _ := top["paths"].(map[string]any)
	namespaced := map[[2]string]bool{}
	for path, item := range paths {
		m, _ := item.(map[string]any)
		get, _ := m["get"].(map[string]any)
		gvk, _ := get["x-kubernetes-group-version-kind"].(map[string]any)
		if gvk == nil {
			continue
		}
		group, _ := gvk["group"].(string)
		version, _ := gvk["version"].(string)
		kind, _ := gvk["kind"].(string)
		if group != "" {
			version = group + "/" + version
		}
		k := [2]string{version, kind}
		if strings.Contains(path, "namespaces/{namespace}") {
			namespaced[k] = true
		} else if _, seen := namespaced[k]; !seen {
			namespaced[k] = false
		}
	}
	var out [][2]string
	for k, ns := range namespaced {
		if !ns {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return out
}

func isKustomizeAPIVersion(apiVersion string) bool {
	return strings.HasPrefix(apiVersion, "kustomize.config.k8s.io/")
}

var (
	builtinTableOnce sync.Once
	builtinTableVal  *table
	builtinTableErr  error
)

// builtinTable is the built-in schema table, read once and never modified.
func builtinTable() (*table, error) {
	builtinTableOnce.Do(func() {
		builtinTableVal, builtinTableErr = readTable(builtinSchemaText)
	})
	return builtinTableVal, builtinTableErr
}

// decodeDocument reads an OpenAPI document as kustomize does: JSON when it
// starts with '{', YAML otherwise.
func decodeDocument(doc []byte) (map[string]any, error) {
	var v any
	if len(doc) > 0 && doc[0] == '{' {
		if err := json.Unmarshal(doc, &v); err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
	} else {
		if err := yaml.Unmarshal(doc, &v); err != nil {
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		var err error
		if v, err = stringKeys(v); err != nil {
			return nil, err
		}
	}
	switch top := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return top, nil
	}
	return nil, fmt.Errorf("the document is not a map but %s", typeName(v))
}

// stringKeys converts YAML maps with non-string keys to maps with string
// keys, as YAML-to-JSON conversion does.
func stringKeys(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			c, err := stringKeys(e)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
		return t, nil
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			switch k.(type) {
			case map[any]any, map[string]any, []any:
				return nil, fmt.Errorf("a map key is not a scalar: %v", k)
			}
			c, err := stringKeys(e)
			if err != nil {
				return nil, err
			}
			m[fmt.Sprint(k)] = c
		}
		return m, nil
	case []any:
		for i, e := range t {
			c, err := stringKeys(e)
			if err != nil {
				return nil, err
			}
			t[i] = c
		}
		return t, nil
	}
	return v, nil
}

// definitions returns the document's definitions by name.
func definitions(top map[string]any) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	v, ok := top["definitions"]
	if !ok || v == nil {
		return out, nil
	}
	defs, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("definitions: not a map but %s", typeName(v))
	}
	for name, d := range defs {
		switch m := d.(type) {
		case nil:
			out[name] = map[string]any{}
		case map[string]any:
			out[name] = m
		default:
			return nil, fmt.Errorf("definition %s: not a map but %s", name, typeName(d))
		}
	}
	return out, nil
}

// groupVersionKinds reads a definition's x-kubernetes-group-version-kind:
// the kinds it describes, as [apiVersion, kind].
func groupVersionKinds(name string, def map[string]any) ([][2]string, error) {
	v, ok := def["x-kubernetes-group-version-kind"]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, nil // kustomize ignores an extension that is not a list
	}
	var out [][2]string
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		var f [3]string
		for i, key := range []string{"group", "version", "kind"} {
			x, present := m[key]
			if !present || x == nil {
				continue
			}
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("definition %s: x-kubernetes-group-version-kind: %s is not a string", name, key)
			}
			f[i] = s
		}
		apiVersion := f[1]
		if f[0] != "" {
			apiVersion = f[0] + "/" + f[1]
		}
		out = append(out, [2]string{apiVersion, f[2]})
	}
	return out, nil
}

// converter turns a document's definitions into schema nodes, resolving
// references through nodes.
type converter struct {
	raw   map[string]map[string]any
	nodes map[string]*schemaNode
}

// definition fills and returns the node of one of the document's
// definitions.
func (c *converter) definition(name string) (*schemaNode, error) {
	d := c.raw[name]
	if _, isRef := ref(d); isRef {
		return c.nodes[name], nil // resolved before
	}
	n, err := c.node(d)
	if err != nil {
		return nil, fmt.Errorf("definition %s: %w", name, err)
	}
	*c.nodes[name] = *n
	return c.nodes[name], nil
}

// ref returns the definition a schema's $ref names: "" with true for a
// reference kpipe cannot follow (not "#/definitions/NAME").
func ref(s map[string]any) (string, bool) {
	r, _ := s["$ref"].(string)
	if r == "" {
		return "", false
	}
	name, ok := strings.CutPrefix(r, "#/definitions/")
	if !ok || strings.Contains(name, "/") {
		return "", true
	}
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(name), true
}

// resolve follows the references from a schema with a $ref to a
// definition's node; nil (no schema) when one cannot be followed, as in
// kustomize.
func (c *converter) resolve(s map[string]any, seen map[string]bool) *schemaNode {
	for {
		name, _ := ref(s)
		if name == "" || seen[name] {
			return nil
		}
		seen[name] = true
		next, custom := c.raw[name]
		if !custom {
			return c.nodes[name] // built-in, or unknown (nil)
		}
		if _, again := ref(next); !again {
			return c.nodes[name]
		}
		s = next
	}
}

// expr returns the node of a field's, element's or additional property's
// schema.
func (c *converter) expr(v any) (*schemaNode, error) {
	switch s := v.(type) {
	case nil:
		return leafNode, nil
	case map[string]any:
		if _, isRef := ref(s); isRef {
			return c.resolve(s, map[string]bool{}), nil
		}
		return c.node(s)
	}
	return nil, fmt.Errorf("a schema is not a map but %s", typeName(v))
}

// node converts a schema that is not a reference.
func (c *converter) node(s map[string]any) (*schemaNode, error) {
	n := &schemaNode{}
	var err error
	if n.strategy, n.keys, err = patchStrategy(s); err != nil {
		return nil, err
	}
	if isArraySchema(s["type"]) {
		n.array = true
		if items, ok := s["items"].(map[string]any); ok {
			if n.items, err = c.expr(items); err != nil {
				return nil, fmt.Errorf("items: %w", err)
			}
		}
		return n, nil
	}
	n.closed = true
	if v, ok := s["properties"]; ok && v != nil {
		props, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("properties: not a map but %s", typeName(v))
		}
		n.fields = make(map[string]*schemaNode, len(props))
		for name, p := range props {
			f, err := c.expr(p)
			if err != nil {
				return nil, fmt.Errorf("properties: %s: %w", name, err)
			}
			n.fields[name] = f
		}
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		if n.any, err = c.expr(ap); err != nil {
			return nil, fmt.Errorf("additionalProperties: %w", err)
		}
	}
	return n, nil
}

// patchStrategy reads a schema's patch strategy and merge keys as kyaml's
// PatchStrategyAndKeyList does: no strategy, no keys; else the list-map
// keys, or the merge key.
func patchStrategy(s map[string]any) (string, []string, error) {
	v, ok := s["x-kubernetes-patch-strategy"]
	if !ok {
		return "", nil, nil
	}
	strategy, ok := v.(string)
	if !ok {
		return "", nil, fmt.Errorf("x-kubernetes-patch-strategy is not a string")
	}
	if v, ok := s["x-kubernetes-list-map-keys"]; ok {
		list, ok := v.([]any)
		if !ok {
			return "", nil, fmt.Errorf("x-kubernetes-list-map-keys is not a list")
		}
		keys := make([]string, len(list))
		for i, k := range list {
			if keys[i], ok = k.(string); !ok {
				return "", nil, fmt.Errorf("x-kubernetes-list-map-keys holds a value that is not a string")
			}
		}
		return strategy, keys, nil
	}
	if v, ok := s["x-kubernetes-patch-merge-key"]; ok {
		key, ok := v.(string)
		if !ok {
			return "", nil, fmt.Errorf("x-kubernetes-patch-merge-key is not a string")
		}
		return strategy, []string{key}, nil
	}
	return strategy, nil, nil
}

// isArraySchema reports whether a schema's type is exactly "array".
func isArraySchema(t any) bool {
	switch v := t.(type) {
	case string:
		return v == "array"
	case []any:
		return len(v) == 1 && v[0] == "array"
	}
	return false
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any, map[any]any:
		return "a map"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}
