package smp

import (
	"reflect"
	"strings"
	"testing"
)

// widgetSchema describes a custom kind, Widget, in two API versions, whose
// spec.template is a pod template of the document's own (containers merge
// by name, their ports by containerPort and protocol), and whose
// spec.parts merge by id.
const widgetSchema = `{
  "definitions": {
    "example.v1.Widget": {
      "type": "object",
      "properties": {
        "spec": {
          "type": "object",
          "properties": {
            "template": {"$ref": "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"},
            "parts": {
              "type": "array",
              "items": {"$ref": "#/definitions/example.v1.Part"},
              "x-kubernetes-patch-strategy": "merge",
              "x-kubernetes-patch-merge-key": "id"
            },
            "labels": {"type": "object", "additionalProperties": {"$ref": "#/definitions/example.v1.Tags"}},
            "missing": {"$ref": "#/definitions/not.there"}
          }
        }
      },
      "x-kubernetes-group-version-kind": [
        {"group": "example.com", "version": "v1", "kind": "Widget"},
        {"group": "", "version": "v1", "kind": "Widget"}
      ]
    },
    "example.v1.Part": {"type": "object", "properties": {"id": {"type": "string"}}},
    "example.v1.Tags": {"type": "array", "x-kubernetes-patch-strategy": "merge"},
    "io.k8s.api.core.v1.PodTemplateSpec": {
      "type": "object",
      "properties": {"spec": {"$ref": "#/definitions/io.k8s.api.core.v1.PodSpec"}}
    },
    "io.k8s.api.core.v1.PodSpec": {
      "type": "object",
      "properties": {
        "containers": {
          "type": "array",
          "items": {"$ref": "#/definitions/io.k8s.api.core.v1.Container"},
          "x-kubernetes-patch-strategy": "merge",
          "x-kubernetes-patch-merge-key": "name"
        }
      }
    },
    "io.k8s.api.core.v1.Container": {
      "type": "object",
      "properties": {
        "ports": {
          "type": "array",
          "items": {"type": "object"},
          "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
          "x-kubernetes-patch-merge-key": "containerPort",
          "x-kubernetes-patch-strategy": "merge"
        }
      }
    }
  }
}`

func mustFromOpenAPI(t *testing.T, doc string, onBuiltin bool) *Schema {
	t.Helper()
	s, err := FromOpenAPI([]byte(doc), onBuiltin)
	if err != nil {
		t.Fatalf("FromOpenAPI: %v", err)
	}
	return s
}

func checkList(t *testing.T, what string, n *schemaNode, keys []string) {
	t.Helper()
	if !n.Associative() {
		t.Errorf("%s: not merged by key", what)
		return
	}
	if got := n.MergeKeys(); !reflect.DeepEqual(got, keys) {
		t.Errorf("%s: merge keys %v, want %v", what, got, keys)
	}
}

func TestFromOpenAPICustomOnly(t *testing.T) {
	s := mustFromOpenAPI(t, widgetSchema, false)
	for _, av := range []string{"example.com/v1", "v1"} {
		w := s.forType(av, "Widget")
		if w == nil {
			t.Fatalf("%s Widget: no schema", av)
		}
		pod := w.Field("spec").Field("template").Field("spec")
		checkList(t, av+" containers", pod.Field("containers"), []string{"name"})
		checkList(t, av+" ports", pod.Field("containers").Elements().Field("ports"), []string{"containerPort", "protocol"})
		checkList(t, av+" parts", w.Field("spec").Field("parts"), []string{"id"})
		checkList(t, av+" labels (additionalProperties)", w.Field("spec").Field("labels").Field("any"), nil)
	}
	w := s.forType("example.com/v1", "Widget")
	if w.Field("spec").Field("missing") != nil {
		t.Error("a reference to an unknown definition has a schema")
	}
	if w.Field("spec").Field("unlisted") != nil {
		t.Error("a field the document does not list has a schema")
	}
	if s.forType("apps/v1", "Deployment") != nil {
		t.Error("a built-in kind has a schema with a custom document alone")
	}
	if s.forType("kustomize.config.k8s.io/v1beta1", "Kustomization") == nil {
		t.Error("kustomize's own Kustomization kind has no schema")
	}
}

func TestFromOpenAPIOnBuiltin(t *testing.T) {
	// The document redefines the built-in PodSpec (containers only) and
	// the Deployment definition (without its kind), and describes kinds
	// that refer to built-in definitions.
	doc := `{"definitions": {
  "io.k8s.api.core.v1.PodSpec": {
    "type": "object",
    "properties": {"containers": {"type": "array", "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"}}
  },
  "io.k8s.api.apps.v1.Deployment": {"type": "object"},
  "example.v1.Job": {
    "type": "object",
    "properties": {"spec": {"$ref": "#/definitions/io.k8s.api.batch.v1.JobSpec"}},
    "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Job"}]
  }
}}`
	s := mustFromOpenAPI(t, doc, true)
	dep := s.forType("apps/v1", "Deployment")
	if dep == nil {
		t.Fatal("a built-in kind lost its schema")
	}
	// Deployment keeps the built-in definition it was indexed with, whose
	// references now lead to the document's PodSpec.
	pod := dep.Field("spec").Field("template").Field("spec")
	checkList(t, "Deployment containers", pod.Field("containers"), []string{"name"})
	if pod.Field("volumes").Associative() {
		t.Error("Deployment volumes still merge by key although the document's PodSpec has none")
	}
	jobPod := s.forType("example.com/v1", "Job").Field("spec").Field("template").Field("spec")
	checkList(t, "Job containers (through the built-in JobSpec)", jobPod.Field("containers"), []string{"name"})
	checkList(t, "Service ports", s.forType("v1", "Service").Field("spec").Field("ports"), []string{"port", "protocol"})
	if custom := mustFromOpenAPI(t, doc, false); custom.forType("example.com/v1", "Job").Field("spec") != nil {
		t.Error("without the built-in schema a reference to a built-in definition has a schema")
	}
}

func TestFromOpenAPIYAMLEqualsJSON(t *testing.T) {
	yamlDoc := `definitions:
  example.v1.Widget:
    type: object
    properties:
      items:
        type: array
        x-kubernetes-patch-strategy: merge
        x-kubernetes-patch-merge-key: name
    x-kubernetes-group-version-kind:
    - group: example.com
      version: v1
      kind: Widget
`
	s := mustFromOpenAPI(t, yamlDoc, false)
	checkList(t, "items", s.forType("example.com/v1", "Widget").Field("items"), []string{"name"})
	// A JSON document that does not start with '{' is read as YAML.
	s = mustFromOpenAPI(t, "\n"+widgetSchema, false)
	checkList(t, "parts", s.forType("v1", "Widget").Field("spec").Field("parts"), []string{"id"})
}

func TestFromOpenAPIReferences(t *testing.T) {
	doc := `{"definitions": {
  "A": {"$ref": "#/definitions/B"},
  "B": {"type": "array", "x-kubernetes-patch-strategy": "merge"},
  "C": {"$ref": "#/definitions/D"},
  "D": {"$ref": "#/definitions/C"},
  "K": {
    "type": "object",
    "properties": {"a": {"$ref": "#/definitions/A"}, "c": {"$ref": "#/definitions/C"}, "x": {"$ref": "other.json#/definitions/B"}},
    "x-kubernetes-group-version-kind": [{"version": "v1", "kind": "K"}]
  }
}}`
	k := mustFromOpenAPI(t, doc, false).forType("v1", "K")
	checkList(t, "a (alias of B)", k.Field("a"), nil)
	if k.Field("c") != nil || k.Field("x") != nil {
		t.Error("a cyclic or external reference has a schema")
	}
}

func TestFromOpenAPIIDs(t *testing.T) {
	a := mustFromOpenAPI(t, widgetSchema, false)
	b := mustFromOpenAPI(t, widgetSchema, true)
	c := mustFromOpenAPI(t, strings.Replace(widgetSchema, `"id"`, `"key"`, 1), false)
	ids := map[string]bool{a.ID(): true, b.ID(): true, c.ID(): true, Builtin().ID(): true}
	if len(ids) != 4 {
		t.Errorf("schema IDs are not distinct: %v", ids)
	}
	if again := mustFromOpenAPI(t, widgetSchema, false); again.ID() != a.ID() {
		t.Error("the same document gave two IDs")
	}
}

func TestFromOpenAPIErrors(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"definitions": {`, "not valid JSON"},
		{"definitions: [a, b]", "definitions: not a map"},
		{"- a\n- b", "not a map but a list"},
		{`{"definitions": {"X": 3}}`, "definition X: not a map"},
		{`{"definitions": {"X": {"type": "array", "x-kubernetes-patch-strategy": 1}}}`, "definition X: x-kubernetes-patch-strategy is not a string"},
		{`{"definitions": {"X": {"properties": {"a": {"x-kubernetes-patch-strategy": "merge", "x-kubernetes-list-map-keys": [1]}}}}}`, "definition X: properties: a: x-kubernetes-list-map-keys"},
		{`{"definitions": {"X": {"properties": []}}}`, "definition X: properties: not a map"},
	} {
		_, err := FromOpenAPI([]byte(c.doc), false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FromOpenAPI(%q) error %v, want one containing %q", c.doc, err, c.want)
		}
	}
	for _, doc := range []string{"", "{}", "definitions:", "swagger: '2.0'\n"} {
		s, err := FromOpenAPI([]byte(doc), false)
		if err != nil {
			t.Errorf("FromOpenAPI(%q): %v", doc, err)
		} else if s.forType("kustomize.config.k8s.io/v1beta1", "Kustomization") == nil {
			t.Errorf("FromOpenAPI(%q): no Kustomization kind", doc)
		}
	}
}

func TestMergeWithCustomSchema(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"parts": []any{
			map[string]any{"id": "a", "size": 1},
			map[string]any{"id": "b", "size": 2},
		}},
	}
	patch := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"parts": []any{map[string]any{"id": "b", "size": 3}}},
	}
	count := func(s *Schema) int {
		merged, _, err := Merge(obj, patch, s)
		if err != nil {
			t.Fatal(err)
		}
		return len(resourceList(merged, "spec", "parts"))
	}
	if n := count(mustFromOpenAPI(t, widgetSchema, false)); n != 2 {
		t.Errorf("with the custom schema the patch left %d parts, want 2 (merged by id)", n)
	}
	if n := count(Builtin()); n != 1 {
		t.Errorf("with the built-in schema the patch left %d parts, want 1 (list replaced)", n)
	}
}

// resourceList returns the list at a path of maps.
func resourceList(m map[string]any, path ...string) []any {
	var v any = m
	for _, p := range path {
		mm, _ := v.(map[string]any)
		v = mm[p]
	}
	l, _ := v.([]any)
	return l
}

func TestFromOpenAPIClusterScoped(t *testing.T) {
	doc := `{"definitions": {}, "paths": {
  "/apis/example.com/v1/clusterthings": {"get": {"x-kubernetes-group-version-kind": {"group": "example.com", "version": "v1", "kind": "ClusterThing"}}},
  "/apis/example.com/v1/things": {"get": {"x-kubernetes-group-version-kind": {"group": "example.com", "version": "v1", "kind": "Thing"}}},
  "/apis/example.com/v1/namespaces/{namespace}/things": {"get": {"x-kubernetes-group-version-kind": {"group": "example.com", "version": "v1", "kind": "Thing"}}},
  "/api/v1/namespaces": {"get": {"x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": "Namespace"}}},
  "/api/v1/other": {"post": {}}
}}`
	got := mustFromOpenAPI(t, doc, false).ClusterScoped()
	want := [][2]string{{"example.com/v1", "ClusterThing"}, {"v1", "Namespace"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cluster-scoped kinds %v, want %v", got, want)
	}
	if Builtin().ClusterScoped() != nil {
		t.Error("the built-in schema reports cluster-scoped kinds")
	}
}
