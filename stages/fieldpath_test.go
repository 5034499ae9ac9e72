package stages

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitFieldPath(t *testing.T) {
	for _, c := range []struct {
		path string
		want []string
	}{
		{"metadata.name", []string{"metadata", "name"}},
		{".metadata.name", []string{"metadata", "name"}},
		{"spec.template.spec.containers.[name=app].image", []string{"spec", "template", "spec", "containers", "[name=app]", "image"}},
		// A selector value may hold dots.
		{"spec.containers.[image=nginx:1.2.3].name", []string{"spec", "containers", "[image=nginx:1.2.3]", "name"}},
		// A map key with dots, in brackets or escaped.
		{"metadata.annotations.[config.kubernetes.io/local-config]", []string{"metadata", "annotations", "config.kubernetes.io/local-config"}},
		{`data.config\.json.server`, []string{"data", "config.json", "server"}},
		{`metadata.annotations.cloud\.google\.com/neg`, []string{"metadata", "annotations", "cloud.google.com/neg"}},
		{"spec.containers.*.env.[name=A].value", []string{"spec", "containers", "*", "env", "[name=A]", "value"}},
		{"spec.ports.0.port", []string{"spec", "ports", "0", "port"}},
		{"a.[=-jar]", []string{"a", "[=-jar]"}},
		// An unclosed bracket runs to the end.
		{"a.[b.c", []string{"a", "b.c"}},
		{"a.[b=c.d", []string{"a", "[b=c.d"}},
		{"", []string{""}},
		{"a..b", []string{"a", "", "b"}},
	} {
		if got := splitFieldPath(c.path); !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitFieldPath(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}

// FuzzSplitFieldPath checks properties of the field path splitter on any
// input: it always gives at least one element; without brackets,
// escaping each element's dots and joining them gives the path back; and
// without brackets or backslashes it is a plain split on dots.
func FuzzSplitFieldPath(f *testing.F) {
	for _, s := range []string{
		"metadata.name", ".metadata.name", "spec.containers.[name=app].image",
		`data.config\.json.a`, `a\\.b`, `a\`, "a.[b.c].d", "[=x]", "..", ".", "",
		"spec.containers.*.ports.[containerPort=80].name", `x.[a\.b=c].d`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		got := splitFieldPath(path)
		if len(got) == 0 {
			t.Fatalf("splitFieldPath(%q) gave no elements", path)
		}
		if strings.ContainsAny(path, "[]") {
			// Brackets only regroup the parts of the path: a selector
			// is written in the path as it is given back.
			for _, e := range got {
				if !strings.Contains(path, `\`) && strings.HasPrefix(e, "[") && strings.Contains(e, "=") && !strings.Contains(path, e) {
					t.Errorf("splitFieldPath(%q): selector %q is not part of the path", path, e)
				}
			}
			return
		}
		trimmed := strings.TrimPrefix(path, ".")
		escaped := make([]string, len(got))
		for i, e := range got {
			escaped[i] = strings.ReplaceAll(e, ".", `\.`)
		}
		if back := strings.Join(escaped, "."); back != trimmed {
			t.Errorf("splitFieldPath(%q) = %q, which joins back to %q", path, got, back)
		}
		if !strings.Contains(path, `\`) {
			if want := strings.Split(trimmed, "."); !reflect.DeepEqual(got, want) {
				t.Errorf("splitFieldPath(%q) = %q, want %q", path, got, want)
			}
		}
	})
}
