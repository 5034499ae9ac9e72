package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
)

// varsTree is a base declaring a var, shared by two overlays with
// different prefixes, and an overlay that declares the same var again.
func varsTree(t *testing.T, extra ...string) string {
	files := map[string]string{
		"base/kustomization.yaml": `resources: [app.yaml]
vars:
- name: SVC
  objref: {apiVersion: v1, kind: Service, name: web}
- name: PORT
  objref: {apiVersion: v1, kind: Service, name: web}
  fieldref:
    fieldpath: spec.ports[0].port
`,
		"base/app.yaml": `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 8080
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
        args: ["--upstream=http://$(SVC):$(PORT)", "$$(SVC)"]
        env:
        - name: PORT
          value: $(PORT)
`,
		"dev/kustomization.yaml":  "resources: [../base]\nnamePrefix: dev-\n",
		"prod/kustomization.yaml": "resources: [../base]\nnamePrefix: prod-\n",
		"twice/kustomization.yaml": `resources: [../base]
vars:
- name: SVC
  objref: {apiVersion: v1, kind: Service, name: web}
`,
	}
	for i := 0; i+1 < len(extra); i += 2 {
		files[extra[i]] = extra[i+1]
	}
	return writeTree(t, files)
}

// TestVarsResolveAtEachRoot checks that a var declared in a shared base
// takes each root's final name of the object it reads.
func TestVarsResolveAtEachRoot(t *testing.T) {
	root := varsTree(t)
	out := buildAll(t, []string{filepath.Join(root, "dev"), filepath.Join(root, "prod")}, 2)
	for i, env := range []string{"dev", "prod"} {
		for _, want := range []string{
			"- --upstream=http://" + env + "-web:8080\n",
			"- $(SVC)\n",
			"value: 8080\n",
		} {
			if !strings.Contains(out[i], want) {
				t.Errorf("%s output lacks %q:\n%s", env, want, out[i])
			}
		}
	}
}

func TestVarDeclaredTwice(t *testing.T) {
	root := varsTree(t)
	err := buildErr(t, filepath.Join(root, "twice"))
	want := "merging vars [{SVC Service.[noVer].[noGrp] {}}]: var 'SVC' already encountered"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want one containing %q", err, want)
	}
}

func TestVarsInTwoBasesCollide(t *testing.T) {
	root := varsTree(t, "both/kustomization.yaml", "resources: [../dev, ../prod]\n")
	err := buildErr(t, filepath.Join(root, "both"))
	want := "accumulating resources: accumulation err='accumulating resources from '../prod': '" + filepath.Join(root, "prod") +
		"' must resolve to a file': recursed merging from path '" + filepath.Join(root, "prod") + "': var 'PORT' already encountered"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v\nwant one containing %q", err, want)
	}
}

// TestVarsFromTheCache checks that a base's vars survive the cache: a warm
// build resolves them as a cold one does.
func TestVarsFromTheCache(t *testing.T) {
	root := varsTree(t)
	roots := []string{filepath.Join(root, "dev"), filepath.Join(root, "prod")}
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	if store == nil {
		t.Fatal("cache did not open")
	}
	defer store.Close()
	cold, _ := outputs(t, roots, nil)
	outputs(t, roots, store)
	warm, stats := outputs(t, roots, store)
	for i := range roots {
		if warm[i] != cold[i] {
			t.Errorf("%s: output with the cache differs:\n--- warm\n%s\n--- cold\n%s", roots[i], warm[i], cold[i])
		}
	}
	if stats.NodesCached == 0 && stats.RootsCached == 0 {
		t.Errorf("nothing came from the cache (stats %+v)", stats)
	}
}

// TestReplacementsField checks the `replacements:` field, with entries in
// place and in files, and the builtin ReplacementTransformer.
func TestReplacementsField(t *testing.T) {
	root := writeTree(t, map[string]string{
		"kustomization.yaml": `resources: [app.yaml]
namePrefix: p-
replacements:
- path: repl.yaml
- source: {kind: ConfigMap, name: cfg, fieldPath: data.tag}
  targets:
  - select: {kind: Deployment}
    fieldPaths:
    - spec.template.spec.containers.[name=web].image
    options: {delimiter: ":", index: 1}
transformers:
- copy-name.yaml
`,
		"repl.yaml": `source: {kind: Service, name: web}
targets:
- select: {kind: Deployment, name: web}
  fieldPaths: [metadata.annotations.service]
  options: {create: true}
`,
		"copy-name.yaml": `apiVersion: builtin
kind: ReplacementTransformer
metadata:
  name: copy
replacements:
- source: {kind: Deployment}
  targets:
  - select: {kind: ConfigMap}
    fieldPaths: [data.deployment]
    options: {create: true}
`,
		"app.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  tag: "1.25"
---
apiVersion: v1
kind: Service
metadata:
  name: web
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx:latest
`,
	})
	out := buildAll(t, []string{root}, 1)[0]
	for _, want := range []string{
		"deployment: p-web\n", // the transformer ran after the prefix
		"service: p-web\n",    // the field's replacements too
		"image: nginx:1.25\n", // only the tag was replaced
		"name: p-cfg\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestReplacementsConfigErrorNamesTheKustomization(t *testing.T) {
	root := writeTree(t, map[string]string{
		"kustomization.yaml": "replacements:\n- path: missing.yaml\n",
	})
	err := buildErr(t, root)
	for _, want := range []string{
		filepath.Join(root, "kustomization.yaml") + ": trouble configuring builtin ReplacementTransformer with config: `\nReplacements:\n- path: missing.yaml\n`: ",
		"missing.yaml",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want one containing %q", err, want)
		}
	}
}
