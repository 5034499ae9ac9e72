package stages

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/smp"
)

const smpDeployments = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  template:
    spec:
      containers:
      - name: app
        image: app:1
        env:
        - name: A
          value: a
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
      - name: app
        image: api:1
`

// mapFiles serves patch files from memory.
func mapFiles(files map[string]string) ReadFile {
	return func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, fmt.Errorf("file %s not found", p)
	}
}

func TestPatchStrategicMergeByID(t *testing.T) {
	read := mapFiles(map[string]string{"p.yaml": `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: sidecar
        image: proxy:2
      - name: app
        env:
        - name: B
          value: b
`})
	s, err := NewPatchStrategicMerge(PatchStrategicMergeConfig{Paths: []string{"p.yaml"}}, read)
	if err != nil {
		t.Fatal(err)
	}
	// New containers come first; the patched container keeps its fields
	// and gains the patch's env first.
	checkTx(t, s, smpDeployments, `apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: web
  name: web
spec:
  template:
    spec:
      containers:
      - image: proxy:2
        name: sidecar
      - env:
        - name: B
          value: b
        - name: A
          value: a
        image: app:1
        name: app
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
      - image: api:1
        name: app
`, "")
}

func TestPatchStrategicMergeErrors(t *testing.T) {
	read := mapFiles(map[string]string{
		"empty.yaml":    "# only a comment\n",
		"nokind.yaml":   "apiVersion: v1\nmetadata:\n  name: x\n",
		"noname.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {a: b}\n",
		"scalar.yaml":   "just text\n",
		"broken.yaml":   "a: [\n",
		"missing.yaml":  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nope\n",
		"deployment.ok": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
	})
	for _, c := range []struct {
		cfg     PatchStrategicMergeConfig
		wantErr string
	}{
		{PatchStrategicMergeConfig{}, "empty file path and empty patch content"},
		{PatchStrategicMergeConfig{Paths: []string{"empty.yaml"}}, "patch appears to be empty; files=[empty.yaml], Patch="},
		{PatchStrategicMergeConfig{Paths: []string{"nokind.yaml"}}, "missing kind in object {{v1 } {{x } map[] map[]}}"},
		{PatchStrategicMergeConfig{Paths: []string{"noname.yaml"}}, "missing metadata.name in object {{v1 ConfigMap} {{ } map[a:b] map[]}}"},
		{PatchStrategicMergeConfig{Paths: []string{"scalar.yaml"}}, "missing Resource metadata"},
		{PatchStrategicMergeConfig{Patches: "thisIsNotAPatch"}, "missing Resource metadata"},
		{PatchStrategicMergeConfig{Paths: []string{"broken.yaml"}}, "MalformedYAMLError: yaml: line "},
		{PatchStrategicMergeConfig{Paths: []string{"absent.yaml"}}, "file absent.yaml not found"},
	} {
		_, err := NewPatchStrategicMerge(c.cfg, read)
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%+v: error %v, want one containing %q", c.cfg, err, c.wantErr)
		}
	}

	s, err := NewPatchStrategicMerge(PatchStrategicMergeConfig{Paths: []string{"missing.yaml"}}, read)
	if err != nil {
		t.Fatal(err)
	}
	checkTx(t, s, smpDeployments, "", "no matches for Id Deployment.v1.apps/nope.[noNs]; failed to find unique target for patch Deployment.v1.apps/nope.[noNs]")
}

func TestPatchStrategicMergeInlinePathAndDelete(t *testing.T) {
	// A path may hold the patch itself; `$patch: delete` removes the object.
	s, err := NewPatchStrategicMerge(PatchStrategicMergeConfig{Paths: []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n$patch: delete\n",
	}}, mapFiles(nil))
	if err != nil {
		t.Fatal(err)
	}
	checkTx(t, s, smpDeployments, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
      - image: api:1
        name: app
`, "")
}

func TestPatchSMPWithTarget(t *testing.T) {
	patch := `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ignored
  namespace: elsewhere
  labels:
    tier: 2
    on: true
spec:
  replicas: 3
`
	s, err := newPatch(loaders.Patch{Patch: patch, Target: &loaders.Selector{Kind: "Deployment"}}, mapFiles(nil))
	if err != nil {
		t.Fatal(err)
	}
	// Every selected object is patched; names and namespaces stay; labels
	// of a targeted patch become strings, as kustomize copies them.
	checkTx(t, s, smpDeployments, `apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: web
    "on": "true"
    tier: "2"
  name: web
spec:
  replicas: 3
  template:
    spec:
      containers:
      - env:
        - name: A
          value: a
        image: app:1
        name: app
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    "on": "true"
    tier: "2"
  name: api
spec:
  replicas: 3
  template:
    spec:
      containers:
      - image: api:1
        name: app
`, "")

	two := patch + "---\n" + patch
	if _, err := newPatch(loaders.Patch{Patch: two, Target: &loaders.Selector{Kind: "Deployment"}}, mapFiles(nil)); err == nil ||
		!strings.Contains(err.Error(), "Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field") {
		t.Errorf("two patches with a target: error %v", err)
	}
}

func TestPatchSMPWithoutTargetErrors(t *testing.T) {
	s, err := newPatch(loaders.Patch{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: other\n"}, mapFiles(nil))
	if err != nil {
		t.Fatal(err)
	}
	checkTx(t, s, smpDeployments, "", `no resource matches strategic merge patch "Deployment.v1.apps/other.[noNs]": no matches for Id`)

	s, err = newPatch(loaders.Patch{Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template: 3\n"}, mapFiles(nil))
	if err != nil {
		t.Fatal(err)
	}
	checkTx(t, s, smpDeployments, "", "wrong node kind: expected MappingNode but got ScalarNode")
}

// TestPatchSMPRename: with allowNameChange and allowKindChange a patch
// renames the object, and the old ID still finds it afterwards.
func TestPatchSMPRename(t *testing.T) {
	rename, err := newPatch(loaders.Patch{
		Patch:   "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web2\n",
		Target:  &loaders.Selector{Name: "web"},
		Options: &loaders.PatchOptions{AllowNameChange: true, AllowKindChange: true},
	}, mapFiles(nil))
	if err != nil {
		t.Fatal(err)
	}
	byOldID, err := NewPatchStrategicMerge(PatchStrategicMergeConfig{
		Patches: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5\n",
	}, mapFiles(nil))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := resyaml.Decode([]byte(smpDeployments))
	if err != nil {
		t.Fatal(err)
	}
	l := resource.NewList(rs...)
	l.Freeze()
	for _, s := range []Stage{rename, byOldID} {
		if err := s.Run(context.Background(), l); err != nil {
			t.Fatal(err)
		}
	}
	r := l.At(0)
	if r.Kind() != "StatefulSet" || r.Name() != "web2" || r.OrigID().Name != "web" || r.OrigID().Kind != "Deployment" {
		t.Errorf("renamed to %s, original %s", r.ID(), r.OrigID())
	}
	if v, _ := resource.Lookup(r.Object(), "spec", "replicas"); v != 5 {
		t.Errorf("patch by the old ID did not apply: replicas %v", v)
	}

	// Without the options the name and kind stay.
	keep, err := newPatch(loaders.Patch{Patch: "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web2\n", Target: &loaders.Selector{Name: "api"}}, mapFiles(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := keep.Run(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	if id := l.At(1).ID(); id.Kind != "Deployment" || id.Name != "api" {
		t.Errorf("patch without options renamed the object to %s", id)
	}
}

func TestPatchSMPFingerprint(t *testing.T) {
	mk := func(patch string, opts *loaders.PatchOptions) []byte {
		s, err := newPatch(loaders.Patch{Patch: patch, Target: &loaders.Selector{Kind: "Deployment"}, Options: opts}, mapFiles(nil))
		if err != nil {
			t.Fatal(err)
		}
		return s.Fingerprint()
	}
	p1 := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  replicas: 1\n"
	p2 := strings.Replace(p1, "replicas: 1", "replicas: 2", 1)
	if bytes.Equal(mk(p1, nil), mk(p2, nil)) {
		t.Error("different patches have the same fingerprint")
	}
	if bytes.Equal(mk(p1, nil), mk(p1, &loaders.PatchOptions{AllowNameChange: true})) {
		t.Error("options do not change the fingerprint")
	}
	if !bytes.Equal(mk(p1, nil), mk(p1, nil)) {
		t.Error("fingerprint is not deterministic")
	}
}

func TestPatchStrategicMergeFromConfig(t *testing.T) {
	s, err := PatchStrategicMergeFromConfig([]byte(`
apiVersion: builtin
kind: PatchStrategicMergeTransformer
metadata:
  name: x
patches: |-
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: api
  spec:
    template:
      spec:
        containers:
        - name: app
          image: api:2
`), mapFiles(nil))
	if err != nil {
		t.Fatal(err)
	}
	out, err := runTx(t, s, smpDeployments)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "image: api:2") || strings.Count(out, "name: app") != 2 {
		t.Errorf("patch not applied:\n%s", out)
	}
}

// FuzzNewPatch feeds arbitrary text to the `patches` parser, which tells
// strategic-merge patches from JSON patches: it must not panic, and a
// strategic-merge patch it accepts must apply (or fail) without panicking
// and without touching frozen input.
func FuzzNewPatch(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n$patch: delete\n",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: api\n",
		`[{"op": "add", "path": "/spec/replicas", "value": 3}]`,
		"- op: remove\n  path: /metadata/labels\n",
		"# nothing\n",
		"thisIsNotAPatch",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - $patch: replace\n      - name: x\n",
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	files, _ := filepath.Glob("../../shared/conformance/cases/*patch*/in/*patch*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(string(data), false)
		}
	}
	f.Fuzz(func(t *testing.T, text string, withTarget bool) {
		cfg := loaders.Patch{Patch: text}
		if withTarget {
			cfg.Target = &loaders.Selector{Kind: "Deployment"}
		}
		s, err := newPatch(cfg, mapFiles(nil))
		if err != nil {
			return
		}
		if _, isSMP := s.(*smpStage); !isSMP {
			return
		}
		rs, err := resyaml.Decode([]byte(smpDeployments))
		if err != nil {
			t.Fatal(err)
		}
		l := resource.NewList(rs...)
		l.Freeze()
		before, _ := output.Marshal(l.All())
		orig := l.Copy()
		err = s.Run(context.Background(), l)
		if after, _ := output.Marshal(orig.All()); !bytes.Equal(before, after) {
			t.Fatal("a patch changed frozen input")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "PatchTransformer: ") {
			t.Fatalf("error %q does not name the stage", err)
		}
		var se *resyaml.SyntaxError
		if errors.As(err, &se) {
			t.Fatalf("syntax error at run time: %v", err)
		}
	})
}

func TestWithMergeSchema(t *testing.T) {
	schema, err := smp.FromOpenAPI([]byte(`{"definitions": {"w": {
  "type": "object",
  "properties": {"parts": {"type": "array", "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "id"}},
  "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}]
}}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	in := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nparts:\n- id: a\n- id: b\n"
	patch := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nparts:\n- id: c\n"
	builtin, err := newPatch(loaders.Patch{Patch: patch}, mapFiles(nil))
	if err != nil {
		t.Fatal(err)
	}
	custom := WithMergeSchema(builtin, schema)
	// The list is replaced with the built-in schema (the kind is unknown)
	// and merged by id with the custom one; the original stage is unchanged.
	checkTx(t, builtin, in, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nparts:\n- id: c\n", "")
	checkTx(t, custom, in, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nparts:\n- id: c\n- id: a\n- id: b\n", "")
	if bytes.Equal(builtin.Fingerprint(), custom.Fingerprint()) {
		t.Error("the schema does not change the fingerprint")
	}
	// A wrapped stage gets the schema too.
	o := &Origin{Path: "k.yaml"}
	wrapped := WithMergeSchema(TransformerWithOrigin(builtin, o), schema)
	if !bytes.Equal(wrapped.Fingerprint(), TransformerWithOrigin(custom, o).Fingerprint()) {
		t.Error("a stage wrapped with an origin did not get the schema")
	}
	if WithMergeSchema(builtin, nil) != builtin {
		t.Error("a nil schema changed the stage")
	}
	ns, err := NewNamespace(NamespaceConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if WithMergeSchema(ns, schema) != ns {
		t.Error("a stage that does not merge was changed")
	}
}
