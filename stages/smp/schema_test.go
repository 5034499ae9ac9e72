package smp

import (
	"reflect"
	"strings"
	"testing"
)

func TestBuiltinMergeKeys(t *testing.T) {
	s := Builtin()
	pod := s.forType("apps/v1", "Deployment").Field("spec").Field("template").Field("spec")
	for _, c := range []struct {
		name  string
		node  *schemaNode
		assoc bool
		keys  []string
	}{
		{"containers", pod.Field("containers"), true, []string{"name"}},
		{"container ports", pod.Field("containers").Elements().Field("ports"), true, []string{"containerPort", "protocol"}},
		{"env", pod.Field("initContainers").Elements().Field("env"), true, []string{"name"}},
		{"volumes", pod.Field("volumes"), true, []string{"name"}},
		{"tolerations", pod.Field("tolerations"), false, nil},
		{"service ports", s.forType("v1", "Service").Field("spec").Field("ports"), true, []string{"port", "protocol"}},
		{"finalizers", s.forType("v1", "ConfigMap").Field("metadata").Field("finalizers"), true, nil},
	} {
		if got := c.node.Associative(); got != c.assoc {
			t.Errorf("%s: associative = %v, want %v", c.name, got, c.assoc)
		}
		if got := c.node.MergeKeys(); !reflect.DeepEqual(got, c.keys) {
			t.Errorf("%s: merge keys = %v, want %v", c.name, got, c.keys)
		}
	}
	if s.forType("example.com/v1", "Foo") != nil {
		t.Error("a custom resource has a built-in schema")
	}
	if BuiltinVersion() != "v1.21.2" {
		t.Errorf("built-in schema version %q, want kustomize v5.8.0's v1.21.2", BuiltinVersion())
	}
}

func TestParseTable(t *testing.T) {
	s, err := parseTable(`
kind v1 Thing @T
def T {items=<merge|id>[@E],meta=L,*=@E}
def E {sub=<merge|>[L]}
`)
	if err != nil {
		t.Fatal(err)
	}
	thing := s.forType("v1", "Thing")
	items := thing.Field("items")
	if !items.Associative() || !reflect.DeepEqual(items.MergeKeys(), []string{"id"}) {
		t.Errorf("items: associative=%v keys=%v", items.Associative(), items.MergeKeys())
	}
	if sub := items.Elements().Field("sub"); !sub.Associative() || len(sub.MergeKeys()) != 0 {
		t.Errorf("items[].sub is not a merged list of scalars")
	}
	if thing.Field("other").Field("sub") == nil {
		t.Error("additionalProperties schema not used for unlisted fields")
	}
	if thing.Field("meta").Field("x") != nil {
		t.Error("a leaf schema has fields")
	}
	for _, bad := range []string{"def T {a=@missing}", "def T {a=L", "kind v1 X @nope", "def T L", "what is this"} {
		if _, err := parseTable(bad); err == nil {
			t.Errorf("parseTable(%q) succeeded", bad)
		} else if !strings.Contains(err.Error(), "line 1") {
			t.Errorf("parseTable(%q) error %q does not name the line", bad, err)
		}
	}
}
