package resyaml

import (
	"strings"
	"testing"

	"github.com/kpipe/kpipe/resource"
)

// `metadata.name: 123`, `namespace: 456` and `kind: 5` are read as their
// text, as kustomize reads them; a list as name is still missing.
func TestNumericIdentityFieldsAreTheirText(t *testing.T) {
	rs, err := Decode([]byte("apiVersion: v1\nkind: 5\nmetadata:\n  name: 123\n  namespace: 456\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if id := rs[0].ID(); id.Kind != "5" || id.Name != "123" || id.Namespace != "456" {
		t.Errorf("ID = %+v", id)
	}
	if rs[1].Name() != "true" {
		t.Errorf("name %q", rs[1].Name())
	}
	if _, err := Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [a]\n")); err == nil {
		t.Error("a list as name was accepted")
	}
	if _, err := Decode([]byte("apiVersion: v1\nkind: [a]\nmetadata:\n  name: x\n")); err == nil {
		t.Error("a list as kind was accepted")
	}
}

// Aliases are judged by what they expand to: a 9^5 expansion (913 KB, which
// kustomize renders) decodes; a 9^9 one (a billion laughs) is refused
// without being expanded.
func TestAliasesAreLimitedByExpandedSize(t *testing.T) {
	doc := func(levels int) []byte {
		s := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\nx:\n  l0: &l0 [x,x,x,x,x,x,x,x,x]\n"
		for i := 1; i < levels; i++ {
			p := "*l" + string(rune('0'+i-1))
			s += "  l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [" + p + "," + p + "," + p + "," + p + "," + p + "," + p + "," + p + "," + p + "," + p + "]\n"
		}
		return []byte(s)
	}
	rs, err := Decode(doc(5))
	if err != nil {
		t.Fatalf("a 9^5 expansion: %v", err)
	}
	l4, _ := resource.Lookup(rs[0].Object(), "x", "l4")
	if n := len(l4.([]any)); n != 9 {
		t.Errorf("l4 has %d items", n)
	}
	if _, err := Decode(doc(9)); err == nil || !IsSyntaxError(err) || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("a 9^9 expansion: %v", err)
	}
}
