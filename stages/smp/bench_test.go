package smp

import (
	"math/rand"
	"testing"
)

func BenchmarkMergeDeployment(b *testing.B) {
	r := rand.New(rand.NewSource(3))
	obj := randomDeployment(r)
	for len(obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)) < 3 {
		obj = randomDeployment(r)
	}
	patch := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "c1", "image": "new", "env": []any{map[string]any{"name": "X", "value": "y"}}},
		}}}}}
	s := Builtin()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := Merge(obj, patch, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseBuiltinTable(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := parseTable(builtinSchemaText); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFromOpenAPI reads a small custom document alone and laid over
// the built-in schema (which binds every built-in definition again).
func BenchmarkFromOpenAPI(b *testing.B) {
	for _, onBuiltin := range []bool{false, true} {
		b.Run(map[bool]string{false: "alone", true: "onBuiltin"}[onBuiltin], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := FromOpenAPI([]byte(widgetSchema), onBuiltin); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
