package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
)

// widgetSchema makes the parts of a Widget merge by the given key.
func widgetSchema(key string) string {
	return `{"definitions": {"example.v1.Widget": {
  "type": "object",
  "properties": {"spec": {"type": "object", "properties": {"parts": {
    "type": "array", "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "` + key + `"}}}},
  "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}]
}}}`
}

const widget = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  parts:
  - id: a
  - id: b
`

const widgetPatch = `patches:
- patch: |-
    apiVersion: example.com/v1
    kind: Widget
    metadata:
      name: w
    spec:
      parts:
      - id: c
`

// Merged by id, the patch's part comes first and the others stay; with no
// schema for the kind, the patch replaces the list.
const (
	partsMerged   = "  - id: c\n  - id: a\n  - id: b\n"
	partsReplaced = "  parts:\n  - id: c\n"
)

// buildOutputs builds roots in one run and returns each root's output or
// error text.
func buildOutputs(t *testing.T, roots []string) []string {
	t.Helper()
	out, _ := outputs(t, roots, nil)
	return out
}

func TestOpenAPISchemaIsPerRoot(t *testing.T) {
	root := writeTree(t, map[string]string{
		"base/kustomization.yaml":   "resources:\n- widget.yaml\n",
		"base/widget.yaml":          widget,
		"custom/kustomization.yaml": "resources:\n- ../base\nopenapi:\n  path: schema.json\n" + widgetPatch,
		"custom/schema.json":        widgetSchema("id"),
		"plain/kustomization.yaml":  "resources:\n- ../base\n" + widgetPatch,
	})
	custom, plain := filepath.Join(root, "custom"), filepath.Join(root, "plain")
	// In one process kustomize would let the first root's schema leak into
	// the second; here each root has its own, whatever the order.
	for _, roots := range [][]string{{custom, plain}, {plain, custom}} {
		out := buildOutputs(t, roots)
		for i, r := range roots {
			want := partsReplaced
			if r == custom {
				want = partsMerged
			}
			if !strings.Contains(out[i], want) {
				t.Errorf("roots %v: %s:\n%s\nwant parts:\n%s", roots, filepath.Base(r), out[i], want)
			}
		}
	}
}

func TestOpenAPISchemaInheritance(t *testing.T) {
	root := writeTree(t, map[string]string{
		// The base patches; an overlay declaring a schema passes it down.
		"base/kustomization.yaml":      "resources:\n- widget.yaml\n" + widgetPatch,
		"base/widget.yaml":             widget,
		"overlay/kustomization.yaml":   "resources:\n- ../base\nopenapi:\n  path: schema.json\n",
		"overlay/schema.json":          widgetSchema("id"),
		"overlay2/kustomization.yaml":  "resources:\n- ../base\n",
		"declares/kustomization.yaml":  "resources:\n- widget.yaml\nopenapi:\n  path: schema.json\n",
		"declares/widget.yaml":         widget,
		"declares/schema.json":         widgetSchema("id"),
		"fromBase/kustomization.yaml":  "resources:\n- ../declares\n" + widgetPatch,
		"component/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nopenapi:\n  path: schema.json\n" + widgetPatch,
		"component/schema.json":        widgetSchema("id"),
		"withComp/kustomization.yaml":  "resources:\n- ../declares\ncomponents:\n- ../component\n",
		// The outermost declaration wins: the root's built-in version
		// overrides the base's custom document.
		"builtin/kustomization.yaml": "resources:\n- ../declares\nopenapi:\n  version: v1.21.2\n" + widgetPatch,
	})
	roots := []string{"base", "overlay", "overlay2", "fromBase", "withComp", "builtin"}
	want := []string{partsReplaced, partsMerged, partsReplaced, partsMerged, partsMerged, partsReplaced}
	var dirs []string
	for _, r := range roots {
		dirs = append(dirs, filepath.Join(root, r))
	}
	for i, out := range buildOutputs(t, dirs) {
		if !strings.Contains(out, want[i]) {
			t.Errorf("%s:\n%s\nwant parts:\n%s", roots[i], out, want[i])
		}
	}
	// The base is one node as a root and under overlay2, another under the
	// overlay that passes its schema down.
	g, _ := Load(dirs, loaders.RootOnly)
	var bases int
	for _, n := range g.Nodes {
		if n.Dir == filepath.Join(root, "base") {
			bases++
		}
	}
	if bases != 2 {
		t.Errorf("the base is %d nodes, want 2", bases)
	}
}

func TestOpenAPISchemaErrors(t *testing.T) {
	root := writeTree(t, map[string]string{
		"both/kustomization.yaml":      "openapi:\n  path: schema.json\n  version: v1.21.2\n",
		"both/schema.json":             widgetSchema("id"),
		"version/kustomization.yaml":   "openapi:\n  version: v1.14.1\n",
		"missing/kustomization.yaml":   "openapi:\n  path: nope.json\n",
		"invalid/kustomization.yaml":   "openapi:\n  path: schema.json\n",
		"invalid/schema.json":          `{"definitions": [`,
		"inherits/kustomization.yaml":  "resources:\n- ../invalid\n",
		"overrides/kustomization.yaml": "resources:\n- ../both\nopenapi:\n  version: v1.21.2\n",
		"outside/kustomization.yaml":   "openapi:\n  path: ../both/schema.json\n",
		"remote/kustomization.yaml":    "openapi:\n  path: https://example.com/schema.json\n",
	})
	for _, c := range []struct{ dir, want string }{
		{"both", "both/kustomization.yaml: openapi: builtin version and custom schema provided, cannot use both"},
		{"version", "version/kustomization.yaml: openapi: the specified OpenAPI version is not built in"},
		{"missing", "missing/kustomization.yaml: openapi: "},
		{"invalid", "invalid/kustomization.yaml: openapi: invalid schema file 'schema.json': not valid JSON"},
		{"inherits", "invalid/kustomization.yaml: openapi: invalid schema file 'schema.json'"},
		{"overrides", ""}, // the base's conflicting declaration is not in effect
		{"outside", "outside/kustomization.yaml: openapi: "},
		{"remote", "remote/kustomization.yaml: openapi: 'https://example.com/schema.json': remote resources are not enabled in this build"}, // Load has no fetcher
	} {
		out := buildOutputs(t, []string{filepath.Join(root, c.dir)})[0]
		if c.want == "" {
			if strings.HasPrefix(out, "error: ") {
				t.Errorf("%s: %s", c.dir, out)
			}
			continue
		}
		if !strings.HasPrefix(out, "error: ") || !strings.Contains(out, c.want) {
			t.Errorf("%s: got %q, want an error containing %q", c.dir, out, c.want)
		}
	}
}

func TestOpenAPISchemaInCacheKey(t *testing.T) {
	root := writeTree(t, map[string]string{
		"base/kustomization.yaml": "resources:\n- widget.yaml\nopenapi:\n  path: schema.json\n" + widgetPatch,
		"base/widget.yaml":        widget,
		"base/schema.json":        widgetSchema("id"),
	})
	dir := filepath.Join(root, "base")
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	if store == nil {
		t.Fatal("cache did not open")
	}
	defer store.Close()
	first, _ := outputs(t, []string{dir}, store)
	if !strings.Contains(first[0], partsMerged) {
		t.Fatalf("first build:\n%s", first[0])
	}
	// The patch merges by a key no part has: every part is kept apart.
	if err := os.WriteFile(filepath.Join(dir, "schema.json"), []byte(widgetSchema("name")), 0o644); err != nil {
		t.Fatal(err)
	}
	warm, _ := outputs(t, []string{dir}, store)
	cold, _ := outputs(t, []string{dir}, nil)
	if warm[0] != cold[0] {
		t.Errorf("after the schema changed, the cached build gave\n%s\nand a build without cache\n%s", warm[0], cold[0])
	}
	if warm[0] == first[0] {
		t.Errorf("the output did not change with the schema:\n%s", warm[0])
	}
}

func TestOpenAPIScopeWarning(t *testing.T) {
	root := writeTree(t, map[string]string{
		"k/kustomization.yaml": "openapi:\n  path: schema.json\n",
		"k/schema.json": `{"paths": {
  "/apis/example.com/v1/clusterthings": {"get": {"x-kubernetes-group-version-kind": {"group": "example.com", "version": "v1", "kind": "ClusterThing"}}},
  "/api/v1/namespaces": {"get": {"x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": "Namespace"}}}
}}`,
	})
	g, _ := Load([]string{filepath.Join(root, "k")}, loaders.RootOnly)
	if len(g.Warnings) != 1 || !strings.Contains(g.Warnings[0], "k/kustomization.yaml: openapi: 'schema.json' declares cluster-scoped kinds") ||
		!strings.HasSuffix(g.Warnings[0], ": example.com/v1 ClusterThing") {
		t.Errorf("warnings %q, want one about example.com/v1 ClusterThing only", g.Warnings)
	}
}
