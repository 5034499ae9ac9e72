package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/loaders"
)

// graphsTree is a tree whose roots share a base (which gives a deprecation
// warning, and runs a patch: a costly stage, so that its accumulation is
// stored), one of them with a component, with a root that fails and two
// kustomizations that name each other.
func graphsTree() map[string]string {
	files := map[string]string{
		"base/kustomization.yaml":  "commonLabels:\n  team: a\nresources:\n- cm.yaml\npatches:\n- patch: |\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: base\n    data:\n      patched: \"true\"\n",
		"base/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\ndata:\n  k: v\n",
		"comp/kustomization.yaml":  "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamePrefix: c-\n",
		"bad/kustomization.yaml":   "resources:\n- missing.yaml\n",
		"cyc/a/kustomization.yaml": "resources:\n- ../b\n",
		"cyc/b/kustomization.yaml": "resources:\n- ../a\n",
		"solo/kustomization.yaml":  "commonLabels:\n  solo: one\nresources:\n- cm.yaml\n",
		"solo/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: solo\n",
	}
	for i := 1; i <= 6; i++ {
		k := fmt.Sprintf("namePrefix: o%d-\nresources:\n- ../../base\n", i)
		if i == 3 {
			k += "components:\n- ../../comp\n"
		}
		files[fmt.Sprintf("overlays/o%d/kustomization.yaml", i)] = k
	}
	return files
}

// graphsRun is one build-all of tree with the given roots per graph, with
// a cache of its own: the report, each root's output by name, and the
// warnings given.
type graphsRun struct {
	rep      *Report
	outputs  map[string]string
	warnings []string
}

func runGraphs(t *testing.T, tree string, perGraph int) graphsRun {
	t.Helper()
	t.Chdir(tree)
	out, cacheDir := t.TempDir(), t.TempDir()
	store := cache.Open(context.Background(), cache.Options{Dir: cacheDir, Warn: func(m string) { t.Error(m) }})
	defer store.Close()
	var r graphsRun
	o := Options{Trees: []string{"."}, OutDir: out, Restriction: loaders.RootOnly, rootsPerGraph: perGraph}
	o.Engine.Cache = engine.Cache{Store: store, Files: store.FileIndex(), Version: "test"}
	o.Engine.Jobs = 2
	o.Engine.Warn = func(m string) { r.warnings = append(r.warnings, m) }
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run with %d roots a graph: %v", perGraph, err)
	}
	for _, w := range rep.Warnings() {
		r.warnings = append(r.warnings, w.File+": "+w.Message)
	}
	r.rep, r.outputs = rep, map[string]string{}
	for i := range rep.Roots {
		rr := &rep.Roots[i]
		if rr.Output != "" {
			data, err := os.ReadFile(rr.Output)
			if err != nil {
				t.Fatal(err)
			}
			rr.Output, _ = filepath.Rel(out, rr.Output)
			r.outputs[rr.Output] = string(data)
		}
		// What each root's build took from the cache depends on the
		// graphs before it: the run's totals are compared.
		rr.Seconds, rr.NodesBuilt, rr.NodesCached, rr.StageHits, rr.StageMisses = 0, 0, 0, 0, 0
	}
	return r
}

// TestRootsOverSeveralGraphs: build-all loads and builds its roots a few
// at a time (RootsPerGraph), so that memory holds one graph, not every
// root's; split anywhere, a run finds the same roots (a kustomization
// others name is not one, however the two fall; of two that name each
// other, the first is, and fails), writes the same outputs, reports the
// same errors, gives each warning once as one graph does, and builds a
// base shared by roots of several graphs once (the graphs after the
// first find it in the cache).
func TestRootsOverSeveralGraphs(t *testing.T) {
	tree := t.TempDir()
	writeTree(t, tree, graphsTree())
	one := runGraphs(t, tree, 0)
	var roots []string
	for _, rr := range one.rep.Roots {
		rel, _ := filepath.Rel(tree, rr.Path)
		roots = append(roots, filepath.ToSlash(rel)+":"+rr.Status)
	}
	want := []string{"bad:error", "cyc/a:error", "overlays/o1:ok", "overlays/o2:ok", "overlays/o3:ok", "overlays/o4:ok", "overlays/o5:ok", "overlays/o6:ok", "solo:ok"}
	if !slices.Equal(roots, want) {
		t.Fatalf("one graph: roots %v, want %v", roots, want)
	}
	if !strings.Contains(one.rep.Roots[1].Error, "cycle") {
		t.Errorf("one graph: cyc/a fails with %q, want a cycle", one.rep.Roots[1].Error)
	}
	if len(one.warnings) != 2 {
		t.Errorf("one graph: warnings %q, want one for each of the two files with commonLabels", one.warnings)
	}
	if o3 := one.outputs["overlays/o3.yaml"]; !strings.Contains(o3, "name: o3-c-base") || !strings.Contains(o3, "patched:") {
		t.Errorf("one graph: o3's output lacks its component's prefix or its base's patch:\n%s", o3)
	}
	for _, per := range []int{1, 2, 3, 4} {
		got := runGraphs(t, tree, per)
		if !reflect.DeepEqual(got.rep.Roots, one.rep.Roots) {
			t.Errorf("%d roots a graph: report\n%+v\none graph:\n%+v", per, got.rep.Roots, one.rep.Roots)
		}
		if !reflect.DeepEqual(got.outputs, one.outputs) {
			t.Errorf("%d roots a graph: outputs differ from one graph's", per)
		}
		if !slices.Equal(got.warnings, one.warnings) {
			t.Errorf("%d roots a graph: warnings %q, one graph %q", per, got.warnings, one.warnings)
		}
		if got.rep.Summary.NodesBuilt != one.rep.Summary.NodesBuilt {
			t.Errorf("%d roots a graph: %d nodes built (%d from the cache), one graph %d: want as many (a shared base built once)",
				per, got.rep.Summary.NodesBuilt, got.rep.Summary.NodesCached, one.rep.Summary.NodesBuilt)
		}
	}
}

// TestRootsOf: the roots discovery picks from what each kustomization
// names, including kustomizations that name each other across graphs.
func TestRootsOf(t *testing.T) {
	dirs := []string{"/a", "/b", "/base", "/c1", "/c2", "/c3", "/comp", "/x", "/y"}
	refs := map[string][]string{
		"/a":    {"/base", "/comp"},
		"/b":    {"/base"},
		"/c1":   {"/c2"},
		"/c2":   {"/c3"},
		"/c3":   {"/c1"}, // a cycle no other root reaches: /c1 is a root
		"/x":    {"/y"},
		"/y":    {"/x"}, // a cycle: /x is the root
		"/comp": {"/base"},
	}
	component := map[string]bool{"/comp": true}
	if got, want := rootsOf(dirs, refs, component, false), []string{"/a", "/b", "/c1", "/x"}; !slices.Equal(got, want) {
		t.Errorf("roots %v, want %v", got, want)
	}
	if got, want := rootsOf(dirs, refs, component, true), []string{"/a", "/b", "/base", "/c1", "/c2", "/c3", "/x", "/y"}; !slices.Equal(got, want) {
		t.Errorf("every kustomization: %v, want %v", got, want)
	}
	// A cycle reached from a root needs no root of its own.
	refs["/b"] = append(refs["/b"], "/c2")
	if got, want := rootsOf(dirs, refs, component, false), []string{"/a", "/b", "/x"}; !slices.Equal(got, want) {
		t.Errorf("with /b naming /c2: roots %v, want %v", got, want)
	}
}
