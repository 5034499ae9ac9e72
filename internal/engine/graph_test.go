package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kpipe/kpipe/loaders"
)

// TestHelmFreeBaseIsShared: a base without helm charts, referred to by
// overlays of different namespaces, is one node (the namespace they pass
// down reaches only helm charts); a base with a chart is one node per
// namespace, since its chart is rendered in each.
func TestHelmFreeBaseIsShared(t *testing.T) {
	for _, c := range []struct {
		name  string
		base  string
		nodes int
	}{
		// a, b, and one mid and one base for both
		{"no chart", "resources:\n- cm.yaml\n", 4},
		// a, b, and mid and base in each namespace
		{"chart", "resources:\n- cm.yaml\nhelmCharts:\n- name: x\n", 6},
	} {
		dir := writeTree(t, map[string]string{
			"base/kustomization.yaml": c.base,
			"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
			"a/kustomization.yaml":    "namespace: a\nresources:\n- ../mid\n",
			"b/kustomization.yaml":    "namespace: b\nresources:\n- ../mid\n",
			"mid/kustomization.yaml":  "resources:\n- ../base\n",
		})
		g, errs := Load([]string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}, loaders.RootOnly)
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if want := c.nodes; len(g.Nodes) != want {
			keys := []string{}
			for k := range g.Nodes {
				keys = append(keys, k)
			}
			t.Errorf("%s: %d nodes, want %d: %v", c.name, len(g.Nodes), c.nodes, keys)
		}
		if err := g.DAG.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

// ReadBytes counts the kustomization and resource files a load read, each
// once: a base two roots share counts once.
func TestReadBytes(t *testing.T) {
	files := map[string]string{
		"a/kustomization.yaml":    "resources:\n- ../base\n",
		"b/kustomization.yaml":    "resources:\n- ../base\n- cm.yaml\n",
		"b/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
		"base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\n",
	}
	dir := writeTree(t, files)
	g, errs := LoadContext(context.Background(), []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}, LoadOptions{})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := 0
	for _, c := range files {
		want += len(c)
	}
	if got := g.ReadBytes(); got != int64(want) {
		t.Errorf("ReadBytes = %d, want %d (every file once)", got, want)
	}
}
