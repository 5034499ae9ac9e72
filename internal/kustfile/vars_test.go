package kustfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/loaders"
)

// TestConvertVars: each $(VAR) becomes a target (delimiter and index where
// it is part of a value, the key path as kustomize spells it, a patch's
// target for a patch), the files are returned rewritten, nothing is
// written. The expected text is what kustomize v5.8.2 writes for this
// tree (cmd/kpipe's edit_vars_test.go compares with kustomize itself).
func TestConvertVars(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- path: p.yaml\n  target:\n    kind: ConfigMap\nvars:\n- name: A\n  objref:\n    apiVersion: v1\n    kind: Service\n    name: svc\n  fieldref:\n    fieldPath: spec.clusterIP\n- name: B\n  objref:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: d\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: ns\ndata:\n  a.b: $(A)\n  url: http//$(A)/x\n  pair: $(A)-$(B)\n  list: [\"$(B)\"]\n",
		"p.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  p: x=$(B)\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, k, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	edits, err := ConvertVars(k, dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	want := `resources:
- cm.yaml
patches:
- path: p.yaml
  target:
    kind: ConfigMap
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
replacements:
- source:
    fieldPath: spec.clusterIP
    kind: Service
    name: svc
    version: v1
  targets:
  - fieldPaths:
    - data.[a.b]
    select:
      kind: ConfigMap
      name: cm
      namespace: ns
      version: v1
  - fieldPaths:
    - data.url
    options:
      delimiter: /
      index: 2
    select:
      kind: ConfigMap
      name: cm
      namespace: ns
      version: v1
  - fieldPaths:
    - data.pair
    options:
      delimiter: '-'
    select:
      kind: ConfigMap
      name: cm
      namespace: ns
      version: v1
- source:
    group: apps
    kind: Deployment
    name: d
    version: v1
  targets:
  - fieldPaths:
    - data.pair
    options:
      delimiter: '-'
      index: 1
    select:
      kind: ConfigMap
      name: cm
      namespace: ns
      version: v1
  - fieldPaths:
    - data.list.0
    select:
      kind: ConfigMap
      name: cm
      namespace: ns
      version: v1
  - fieldPaths:
    - data.p
    options:
      delimiter: =
      index: 1
    select:
      kind: ConfigMap
`
	if string(got) != want {
		t.Errorf("kustomization:\n%s\nwant:\n%s", got, want)
	}
	if len(edits) != 2 || edits[0].Path != filepath.Join(dir, "cm.yaml") || edits[1].Path != filepath.Join(dir, "p.yaml") {
		t.Fatalf("edits = %+v", edits)
	}
	if s := string(edits[0].Data); !strings.Contains(s, "a.b: A_PLACEHOLDER\n  url: http//A_PLACEHOLDER/x\n  pair: A_PLACEHOLDER-B_PLACEHOLDER\n  list: [\"B_PLACEHOLDER\"]\n") {
		t.Errorf("cm.yaml rewritten as:\n%s", s)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "cm.yaml")); string(data) != files["cm.yaml"] {
		t.Errorf("ConvertVars wrote cm.yaml")
	}

	// A value where the var is not delimited: an error naming the file.
	k.Vars = []loaders.Var{{Name: "C"}}
	if err := os.WriteFile(filepath.Join(dir, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: x-$(C).y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ConvertVars(k, dir); err == nil || err.Error() != "error with cm.yaml: cannot convert all vars to replacements; $(C) is not delimited" {
		t.Errorf("err = %v", err)
	}
}
