package build

import (
	"path/filepath"
	"strings"
	"testing"
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
		"app.kubernetes.io/managed-by: kustomize-v5.8.0",
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
