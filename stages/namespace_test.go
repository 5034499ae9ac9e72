package stages

import (
	"context"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

// TestNamespaceConflict checks that moving two objects of the same kind and
// name into one namespace fails, naming both, and that distinct objects in
// a large list move without error.
func TestNamespaceConflict(t *testing.T) {
	rs, err := resyaml.Decode([]byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: same
  namespace: a
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: same
  namespace: b
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NamespaceFromConfig([]byte(`{"metadata": {"name": "ns", "namespace": "z"}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run(context.Background(), resource.NewList(rs...))
	if err == nil || !strings.Contains(err.Error(), "namespace transformation produces ID conflict") {
		t.Fatalf("err = %v, want an ID conflict", err)
	}

	var many strings.Builder
	for i := 0; i < 300; i++ {
		many.WriteString("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + "\n")
	}
	rs, err = resyaml.Decode([]byte(many.String()))
	if err != nil {
		t.Fatal(err)
	}
	l := resource.NewList(rs...)
	if err := s.Run(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	for _, r := range l.All() {
		if r.Namespace() != "z" {
			t.Fatalf("%s not moved to z", r.ID())
		}
	}
}
