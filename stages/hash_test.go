package stages

import (
	"context"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

func decodeOneObject(t *testing.T, y string) map[string]any {
	t.Helper()
	rs, err := resyaml.Decode([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return rs[0].Object()
}

// TestContentHash uses the vectors of kustomize's hasher tests, and names
// kustomize v5.8.0 printed for generated objects.
func TestContentHash(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"empty configmap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "6ct58987ht"},
		{"one key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  one: \"\"\n", "9g67k2htb6"},
		{"three keys, numbers", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  two: 2\n  one: \"\"\n  three: 3\n", "7757f9kkct"},
		{"binary data", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nbinaryData:\n  one: \"\"\n", "6mtk2m274t"},
		{"binary data, three keys", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nbinaryData:\n  two: 2\n  one: \"\"\n  three: 3\n", "9th7kc28dg"},
		{"data and binary data", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  one: \"\"\nbinaryData:\n  two: \"\"\n", "698h7c7t9m"},
		// The name is not part of the hash: kustomize printed a-hmg6f82fh6
		// and bbbb-hmg6f82fh6 for two ConfigMaps with data x: "1".
		{"name ignored", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: \"1\"}\n", "hmg6f82fh6"},
		{"name ignored 2", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bbbb}\ndata: {x: \"1\"}\n", "hmg6f82fh6"},
		{"secret, empty", "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\ntype: my-type\n", "5gmgkf8578"},
		{"secret, one key", "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\ntype: my-type\ndata:\n  one: \"\"\n", "74bd68bm66"},
		{"secret, three keys", "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\ntype: my-type\ndata:\n  two: 2\n  one: \"\"\n  three: 3\n", "4gf75c7476"},
		{"secret, stringData", "apiVersion: v1\nkind: Secret\nmetadata: {name: x}\ntype: my-type\ndata:\n  one: \"\"\nstringData:\n  two: 2\n", "c4h4264gdb"},
		{"generated secret", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: Opaque\ndata: {x: MQ==}\n", "bf2648c599"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := contentHash(decodeOneObject(t, c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("hash = %s, want %s", got, c.want)
			}
		})
	}
	if _, err := contentHash(decodeOneObject(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")); err == nil {
		t.Error("hash of a Pod: no error")
	}
}

func TestHashTransformer(t *testing.T) {
	rs, err := resyaml.Decode([]byte(`
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
data: {x: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: nohash}
data: {x: "1"}
---
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: ns}
type: Opaque
data: {x: MQ==}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
`))
	if err != nil {
		t.Fatal(err)
	}
	rs[0].Gen = &resource.Generated{NeedsHash: true}
	rs[1].Gen = &resource.Generated{NeedsHash: false}
	rs[2].Gen = &resource.Generated{Behavior: behaviorCreate, NeedsHash: true}
	l := resource.NewList(rs...)
	l.Freeze()
	out := l.Copy()
	if err := NewHashTransformer().Run(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range out.All() {
		names = append(names, r.Name())
	}
	if got, want := strings.Join(names, " "), "a-hmg6f82fh6 nohash s-bf2648c599 p"; got != want {
		t.Errorf("names = %s, want %s", got, want)
	}
	if l.At(0).Name() != "a" {
		t.Error("the frozen input was renamed")
	}
	prev := out.At(2).PrevIDs()
	if len(prev) != 1 || prev[0].Name != "s" || prev[0].Namespace != "ns" || prev[0].Kind != "Secret" {
		t.Errorf("previous IDs = %v, want the name before the hash", prev)
	}

	bad := resource.NewList(rs[3].Clone())
	bad.Edit(0).Gen = &resource.Generated{NeedsHash: true}
	err = NewHashTransformer().Run(context.Background(), bad)
	if err == nil || !strings.HasPrefix(err.Error(), "HashTransformer: ") {
		t.Errorf("error = %v, want the HashTransformer to refuse a Pod", err)
	}
}
