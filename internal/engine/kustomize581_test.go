package engine

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/stages"
)

// build581 builds dir as v5.8.2 (kpipe's reference) and as v5.8.1 (Flux's
// kustomize), returning both outputs or errors.
func build581(t *testing.T, files map[string]string, dir string) (v582, v581 string, err582, err581 error) {
	t.Helper()
	root := writeTree(t, files)
	for i, on := range []bool{false, true} {
		_, res := Build(context.Background(), Request{Dirs: []string{filepath.Join(root, dir)},
			Load: LoadOptions{Restriction: loaders.RootOnly}, Options: Options{Jobs: 1, Kustomize581: on}})
		if i == 0 {
			v582, err582 = string(res[0].YAML), res[0].Err
		} else {
			v581, err581 = string(res[0].YAML), res[0].Err
		}
	}
	return
}

const statefulSet581 = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  template:
    spec:
      containers:
      - name: db
        image: postgres@sha512:abc
  volumeClaimTemplates:
  - metadata:
      name: data
`

// TestKustomize581 checks each difference Options.Kustomize581 makes, and
// that v5.8.2's output is kustomize v5.8.2's.
func TestKustomize581(t *testing.T) {
	t.Run("labels includeTemplates reach volumeClaimTemplates", func(t *testing.T) {
		files := map[string]string{
			"k/kustomization.yaml": "resources: [ss.yaml]\nlabels:\n- pairs: {team: a}\n  includeTemplates: true\n",
			"k/ss.yaml":            statefulSet581,
		}
		v582, v581, e1, e2 := build581(t, files, "k")
		if e1 != nil || e2 != nil {
			t.Fatal(e1, e2)
		}
		vct := "  - metadata:\n      labels:\n        team: a\n      name: data\n"
		if strings.Contains(v582, vct) || !strings.Contains(v581, vct) {
			t.Errorf("volumeClaimTemplates labels: v5.8.2:\n%s\nv5.8.1:\n%s", v582, v581)
		}
	})
	t.Run("images: sha512 digests and invalid names", func(t *testing.T) {
		files := map[string]string{
			"k/kustomization.yaml":   "resources: [ss.yaml]\nimages:\n- name: postgres\n  newTag: \"16\"\n",
			"k/ss.yaml":              statefulSet581,
			"bad/kustomization.yaml": "resources: [../k/ss.yaml]\nimages:\n- name: \"post[\"\n  newTag: \"16\"\n",
		}
		v582, v581, e1, e2 := build581(t, files, "k")
		if e1 != nil || e2 != nil {
			t.Fatal(e1, e2)
		}
		if !strings.Contains(v582, "image: postgres:16\n") || !strings.Contains(v581, "image: postgres@sha512:abc") {
			t.Errorf("sha512 digest: v5.8.2:\n%s\nv5.8.1:\n%s", v582, v581)
		}
		files["bad/kustomization.yaml"] = "resources: [../k/ss.yaml]\nimages:\n- name: \"post[\"\n  newTag: \"16\"\n"
		root := writeTree(t, files)
		for _, v581 := range []bool{false, true} {
			_, res := Build(context.Background(), Request{Dirs: []string{filepath.Join(root, "bad")},
				Load: LoadOptions{Restriction: loaders.None}, Options: Options{Jobs: 1, Kustomize581: v581}})
			var pe *stages.PanicError
			if got := errors.As(res[0].Err, &pe); got != v581 {
				t.Errorf("v5.8.1=%v: invalid image name: error %v", v581, res[0].Err)
			}
			if v581 && pe != nil && !strings.Contains(pe.Error(), "invalid memory address or nil pointer dereference") {
				t.Errorf("panic: %v", pe)
			}
		}
	})
	t.Run("CronJob image volumes", func(t *testing.T) {
		files := map[string]string{
			"k/kustomization.yaml": "resources: [cj.yaml]\nimages:\n- name: nginx\n  newTag: \"2\"\n",
			"k/cj.yaml":            "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: c\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          volumes:\n          - name: v\n            image:\n              reference: nginx\n",
		}
		v582, v581, e1, e2 := build581(t, files, "k")
		if e1 != nil || e2 != nil {
			t.Fatal(e1, e2)
		}
		if !strings.Contains(v582, "reference: nginx:2") || !strings.Contains(v581, "reference: nginx\n") {
			t.Errorf("CronJob image volume: v5.8.2:\n%s\nv5.8.1:\n%s", v582, v581)
		}
	})
	t.Run("ambiguous paths", func(t *testing.T) {
		files := map[string]string{
			"a/k/kustomization.yaml":    "resources:\n- ../base - ../../base\n",
			"a/base/kustomization.yaml": "resources: [cm.yaml]\n",
			"a/base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
		}
		_, v581, e1, e2 := build581(t, files, "a/k")
		if e1 == nil || !strings.Contains(e1.Error(), "is ambiguous") || e2 != nil || !strings.Contains(v581, "name: c") {
			t.Errorf("v5.8.2: %v; v5.8.1: %v\n%s", e1, e2, v581)
		}
	})
	t.Run("secretGenerator merge and stringData", func(t *testing.T) {
		files := map[string]string{
			"base/kustomization.yaml": "resources: [s.yaml]\n",
			"base/s.yaml":             "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {a: hello}\ndata: {b: eA==}\n",
			"ov/kustomization.yaml":   "resources: [../base]\nsecretGenerator:\n- name: s\n  behavior: merge\n  literals: [c=3]\n",
		}
		v582, v581, e1, e2 := build581(t, files, "ov")
		if e1 != nil || e2 != nil {
			t.Fatal(e1, e2)
		}
		// kustomize v5.8.2's output, byte for byte.
		want582 := "apiVersion: v1\ndata:\n  a: aGVsbG8=\n  b: eA==\n  c: Mw==\nkind: Secret\nmetadata:\n  name: s\ntype: Opaque\n"
		if v582 != want582 || strings.Contains(v581, "a: aGVsbG8=") {
			t.Errorf("v5.8.2:\n%s\nwant:\n%s\nv5.8.1:\n%s", v582, want582, v581)
		}
	})
	t.Run("replacements inside structured data", func(t *testing.T) {
		files := map[string]string{
			"k/kustomization.yaml": `resources: [cm.yaml]
replacements:
- source: {kind: ConfigMap, name: src, fieldPath: data.host}
  targets:
  - select: {name: dst}
    fieldPaths: [data.config\.yaml.url]
    options: {delimiter: /, index: 2}
`,
			"k/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: src}\ndata: {host: example.org}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: dst}\ndata:\n  config.yaml: |-\n    url: https://old/api\n",
		}
		v582, v581, e1, e2 := build581(t, files, "k")
		if e1 != nil || e2 != nil {
			t.Fatal(e1, e2)
		}
		if !strings.Contains(v582, "url: https://example.org/api") || !strings.Contains(v581, "url: example.org") {
			t.Errorf("v5.8.2:\n%s\nv5.8.1:\n%s", v582, v581)
		}
	})
}
