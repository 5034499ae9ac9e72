package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
)

// A base shared by overlays that do and do not ask for buildMetadata is
// built once per context: its own buildMetadata is ignored, the root's
// applies, and origins are relative to the root.
func TestBuildMetadataFollowsTheRoot(t *testing.T) {
	root := writeTree(t, map[string]string{
		"base/kustomization.yaml":  "resources:\n- cm.yaml\nnamePrefix: b-\nbuildMetadata: [originAnnotations]\n",
		"base/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
		"plain/kustomization.yaml": "resources:\n- ../base\n",
		"annotated/kustomization.yaml": "resources:\n- ../base\nnamePrefix: a-\n" +
			"buildMetadata: [originAnnotations, transformerAnnotations, managedByLabel]\n",
		"self/kustomization.yaml": "resources:\n- ../base\nbuildMetadata: [transformerAnnotations]\n",
	})
	dirs := []string{"plain", "annotated", "base", "self"}
	var roots []string
	for _, d := range dirs {
		roots = append(roots, filepath.Join(root, d))
	}
	out := buildAll(t, roots, 2)
	if strings.Contains(out[0], "config.kubernetes.io") {
		t.Errorf("plain overlay: the base's own buildMetadata applied:\n%s", out[0])
	}
	for _, want := range []string{
		"config.kubernetes.io/origin: |\n      path: ../base/cm.yaml\n",
		"alpha.config.kubernetes.io/transformations: |\n      - configuredIn: ../base/kustomization.yaml\n" +
			"        configuredBy:\n          apiVersion: builtin\n          kind: PrefixTransformer\n" +
			"      - configuredIn: kustomization.yaml\n",
		"app.kubernetes.io/managed-by: kustomize-" + KustomizeVersion,
		"name: a-b-cm",
	} {
		if !strings.Contains(out[1], want) {
			t.Errorf("annotated overlay lacks %q:\n%s", want, out[1])
		}
	}
	if !strings.Contains(out[2], "path: cm.yaml\n") {
		t.Errorf("base as a root: origin not relative to it:\n%s", out[2])
	}
	// transformerAnnotations alone: origins are tracked but not written.
	if strings.Contains(out[3], "config.kubernetes.io/origin") || !strings.Contains(out[3], "configuredIn: ../base/kustomization.yaml") {
		t.Errorf("self overlay: want transformations only:\n%s", out[3])
	}
	// Built with the others or alone, each root's output is the same.
	for i, r := range roots {
		if alone := buildAll(t, []string{r}, 1); alone[0] != out[i] {
			t.Errorf("%s: output differs when built alone:\n%s\n---\n%s", dirs[i], alone[0], out[i])
		}
	}
}

func TestPluginConfigDirectory(t *testing.T) {
	root := writeTree(t, map[string]string{
		"plugins/kustomization.yaml": "resources:\n- prefix.yaml\n",
		"plugins/prefix.yaml": "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: p\nprefix: x-\n" +
			"fieldSpecs:\n- path: metadata/name\n",
		"app/kustomization.yaml": "resources:\n- cm.yaml\ntransformers:\n- ../plugins\nbuildMetadata: [originAnnotations, transformerAnnotations]\n",
		"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
	})
	out := buildAll(t, []string{filepath.Join(root, "app")}, 1)[0]
	for _, want := range []string{"name: x-cm", "configuredIn: ../plugins/prefix.yaml", "kind: PrefixSuffixTransformer\n          name: p\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// With a cache, a change to a file of a plugin config directory or of a
// base built under buildMetadata shows in the next build.
func TestWarmBuildFollowsPluginDirsAndOrigins(t *testing.T) {
	root := writeTree(t, map[string]string{
		"plugins/kustomization.yaml": "resources:\n- prefix.yaml\n",
		"plugins/prefix.yaml": "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: p\nprefix: x-\n" +
			"fieldSpecs:\n- path: metadata/name\n",
		"base/kustomization.yaml":  "resources:\n- cm.yaml\n",
		"base/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
		"app/kustomization.yaml":   "resources:\n- ../base\ntransformers:\n- ../plugins\nbuildMetadata: [originAnnotations]\n",
		"plain/kustomization.yaml": "resources:\n- ../base\n",
	})
	roots := []string{filepath.Join(root, "app"), filepath.Join(root, "plain")}
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	if store == nil {
		t.Fatal("cache did not open")
	}
	check := func(step string) {
		t.Helper()
		cold, _ := outputs(t, roots, nil)
		warm, _ := outputs(t, roots, store)
		for i := range roots {
			if warm[i] != cold[i] {
				t.Errorf("%s: %s: warm build differs from cold:\n%s\n---\n%s", step, roots[i], warm[i], cold[i])
			}
		}
	}
	check("first")
	write := func(p, c string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plugins/prefix.yaml", "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: p\nprefix: y-\n"+
		"fieldSpecs:\n- path: metadata/name\n")
	check("plugin config changed")
	write("base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm2\n")
	check("base changed")
	out, _ := outputs(t, roots, store)
	if !strings.Contains(out[0], "name: y-cm2") || !strings.Contains(out[0], "path: ../base/cm.yaml") || strings.Contains(out[1], "origin") {
		t.Errorf("unexpected outputs:\n%s\n---\n%s", out[0], out[1])
	}
}
