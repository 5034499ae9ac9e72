package stages

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// replacementCase runs a ReplacementTransformer config over input.
type replacementCase struct {
	name    string
	config  string // the `replacements:` list
	files   map[string]string
	input   string
	want    string
	wantErr string
}

func (c replacementCase) run(t *testing.T) {
	t.Helper()
	cfg := "apiVersion: builtin\nkind: ReplacementTransformer\nmetadata:\n  name: r\nreplacements:\n" + c.config
	s, err := ReplacementsFromConfig([]byte(cfg), mapReader(c.files))
	if err != nil {
		if c.wantErr != "" && strings.Contains(err.Error(), c.wantErr) {
			return
		}
		t.Fatalf("config: %v", err)
	}
	if s.Kind() != "ReplacementTransformer" {
		t.Errorf("Kind() = %q", s.Kind())
	}
	got, err := runTx(t, s, c.input)
	switch {
	case c.wantErr != "":
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("error = %v, want one containing %q", err, c.wantErr)
		}
	case err != nil:
		t.Fatalf("unexpected error: %v", err)
	case got != strings.TrimPrefix(c.want, "\n"):
		t.Errorf("got:\n%s\nwant:\n%s", got, strings.TrimPrefix(c.want, "\n"))
	}
}

// mapReader reads files from a map, as a loader would from disk.
func mapReader(files map[string]string) ReadFile {
	return func(p string) ([]byte, error) {
		data, ok := files[p]
		if !ok {
			return nil, fmt.Errorf("file %q not found", p)
		}
		return []byte(data), nil
	}
}

const twoContainers = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: deploy
spec:
  replicas: 1
  template:
    spec:
      containers:
      - image: foobar:1
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
`

func TestReplacements(t *testing.T) {
	cases := []replacementCase{
		{
			name: "copy one container's image to another",
			config: `
- source:
    kind: Deployment
    fieldPath: spec.template.spec.containers.0.image
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.spec.containers.1.image
`,
			input: twoContainers,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: deploy
spec:
  replicas: 1
  template:
    spec:
      containers:
      - image: foobar:1
        name: replaced-with-digest
      - image: foobar:1
        name: postgresdb
`,
		},
		{
			name: "the default fields are metadata.name, and a list selector picks elements by key",
			config: `
- source:
    kind: ConfigMap
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.spec.containers.[name=postgresdb].image
`,
			input: twoContainers + `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: pg:2.0
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: deploy
spec:
  replicas: 1
  template:
    spec:
      containers:
      - image: foobar:1
        name: replaced-with-digest
      - image: pg:2.0
        name: postgresdb
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: pg:2.0
`,
		},
		{
			// kustomize matches selector values as unanchored regular
			// expressions in targets.
			name: "a target selector is an unanchored regular expression; * takes every element",
			config: `
- sourceValue: new
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.spec.containers.[name=gres].image
    - spec.template.spec.containers.*.env.[name=A].value
`,
			input: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: deploy
spec:
  template:
    spec:
      containers:
      - image: a
        name: one
        env:
        - name: A
          value: x
      - image: b
        name: postgresdb
        env:
        - name: A
          value: y
        - name: B
          value: z
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: deploy
spec:
  template:
    spec:
      containers:
      - env:
        - name: A
          value: new
        image: a
        name: one
      - env:
        - name: A
          value: new
        - name: B
          value: z
        image: new
        name: postgresdb
`,
		},
		{
			name: "a scalar target keeps its type; a created field reads the text as YAML",
			config: `
- source:
    kind: ConfigMap
    fieldPath: data.count
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.replicas
    - metadata.annotations.count
    - spec.template.spec.containers.0.image
    options:
      create: true
`,
			input: twoContainers + `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
data:
  count: "3"
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    count: 3
  name: deploy
spec:
  replicas: 3
  template:
    spec:
      containers:
      - image: "3"
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
---
apiVersion: v1
data:
  count: "3"
kind: ConfigMap
metadata:
  name: cm
`,
		},
		{
			name: "text that does not fit the target's type is an error",
			config: `
- sourceValue: many
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.replicas
`,
			input:   twoContainers,
			wantErr: "map[string]interface {}(nil): yaml: cannot decode !!str `many` as a !!int",
		},
		{
			name: "a map value replaces a field",
			config: `
- source:
    kind: Pod
    fieldPath: spec.containers
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.spec.containers
`,
			input: twoContainers + `---
apiVersion: v1
kind: Pod
metadata:
  name: pod
spec:
  containers:
  - name: c
    image: busybox
    ports:
    - containerPort: 80
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: deploy
spec:
  replicas: 1
  template:
    spec:
      containers:
      - image: busybox
        name: c
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Pod
metadata:
  name: pod
spec:
  containers:
  - image: busybox
    name: c
    ports:
    - containerPort: 80
`,
		},
		{
			name: "delimiters pick a part of the source and replace, prepend or append a part of the target",
			config: `
- source:
    kind: ConfigMap
    fieldPath: data.image
    options:
      delimiter: ":"
      index: 1
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.spec.containers.0.image
    options:
      delimiter: ":"
      index: 1
  - select:
      kind: Deployment
    fieldPaths:
    - metadata.annotations.tags
    options:
      delimiter: ","
      index: -1
      create: true
  - select:
      kind: Deployment
    fieldPaths:
    - spec.template.spec.containers.1.image
    options:
      delimiter: "-"
      index: 5
`,
			input: twoContainers + `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
data:
  image: nginx:1.21
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    tags: 1.21,
  name: deploy
spec:
  replicas: 1
  template:
    spec:
      containers:
      - image: foobar:1.21
        name: replaced-with-digest
      - image: postgres:1.8.0-1.21
        name: postgresdb
---
apiVersion: v1
data:
  image: nginx:1.21
kind: ConfigMap
metadata:
  name: cm
`,
		},
		{
			name: "create appends list elements for selectors and for the next index",
			config: `
- sourceValue: "8080"
  targets:
  - select:
      kind: Pod
    fieldPaths:
    - spec.containers.[name=web].ports.0.containerPort
    - spec.containers.[name=app].args.[=--debug]
    options:
      create: true
`,
			input: `
apiVersion: v1
kind: Pod
metadata:
  name: pod
spec:
  containers:
  - name: app
`,
			want: `
apiVersion: v1
kind: Pod
metadata:
  name: pod
spec:
  containers:
  - args:
    - 8080
    name: app
  - name: web
    ports:
    - containerPort: 8080
`,
		},
		{
			name: "reject by ID and by label",
			config: `
- sourceValue: v
  targets:
  - select:
      name: old-.*
    reject:
    - kind: Service
    - labelSelector: skip=yes
    fieldPaths:
    - metadata.annotations.touched
    options:
      create: true
`,
			input: `
apiVersion: v1
kind: ConfigMap
metadata:
  name: old-a
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: old-b
  labels:
    skip: "yes"
---
apiVersion: v1
kind: Service
metadata:
  name: old-c
`,
			want: `
apiVersion: v1
kind: ConfigMap
metadata:
  annotations:
    touched: v
  name: old-a
---
apiVersion: v1
kind: ConfigMap
metadata:
  labels:
    skip: "yes"
  name: old-b
---
apiVersion: v1
kind: Service
metadata:
  name: old-c
`,
		},
		{
			name: "JSON inside a string is edited in place, keys sorted",
			config: `
- sourceValue: www.example.com
  targets:
  - select:
      kind: ConfigMap
    fieldPaths:
    - data.config\.json.config.hostname
    - metadata.annotations.cloud\.google\.com/backend-config.ports.appA
`,
			input: `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  annotations:
    cloud.google.com/backend-config: '{"ports": {"appA":"x"}}'
data:
  config.json: |-
    {
      "config": {
        "id": "42",
        "hostname": "REPLACE"
      }
    }
`,
			want: `
apiVersion: v1
data:
  config.json: |-
    {
      "config": {
        "hostname": "www.example.com",
        "id": "42"
      }
    }
kind: ConfigMap
metadata:
  annotations:
    cloud.google.com/backend-config: '{"ports":{"appA":"www.example.com"}}'
  name: cm
`,
		},
		{
			name: "YAML inside a string is edited in place, order and quotes kept",
			config: `
- sourceValue: dev
  targets:
  - select:
      kind: ConfigMap
    fieldPaths:
    - data.prometheus\.yml.global.external_labels.env
`,
			input: `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
data:
  prometheus.yml: |-
    global:
      external_labels:
        env: TARGET
    scrape_configs:
      - job_name: "prometheus"
`,
			want: `
apiVersion: v1
data:
  prometheus.yml: |-
    global:
      external_labels:
        env: dev
    scrape_configs:
    - job_name: "prometheus"
kind: ConfigMap
metadata:
  name: cm
`,
		},
		{
			name: "replacements from files: one replacement or a list",
			config: `
- path: one.yaml
- path: list.yaml
`,
			files: map[string]string{
				"one.yaml":  "sourceValue: a\ntargets:\n- select: {kind: Deployment}\n  fieldPaths: [metadata.annotations.one]\n  options: {create: true}\n",
				"list.yaml": "- sourceValue: b\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.annotations.two]\n    options: {create: true}\n",
			},
			input: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    one: a
    two: b
  name: d
`,
		},
		{
			name:    "a file must hold a replacement or a list",
			config:  "- path: bad.yaml\n",
			files:   map[string]string{"bad.yaml": "just text\n"},
			wantErr: "unsupported replacement type encountered within replacement path: string",
		},
		{
			name:    "path and inline replacement together",
			config:  "- path: r.yaml\n  source: {kind: Deployment}\n",
			wantErr: "cannot specify both path and inline replacement",
		},
		{
			name:    "two sources match",
			config:  "- source: {version: v1}\n  targets:\n  - select: {kind: Deployment}\n",
			input:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n",
			wantErr: "multiple matches for selector [noKind].v1.[noGrp]/[noName].[noNs]",
		},
		{
			name:    "no source matches",
			config:  "- source: {kind: Nope, fieldPath: a.b, options: {delimiter: '-', create: true}}\n  targets:\n  - select: {kind: Deployment}\n",
			input:   twoContainers,
			wantErr: "nothing selected by Nope.[noVer].[noGrp]/[noName].[noNs]:a.b:-(0), create=true",
		},
		{
			name:    "the source field is missing",
			config:  "- source: {kind: Deployment, fieldPath: spec.nope}\n  targets:\n  - select: {kind: Deployment}\n",
			input:   twoContainers,
			wantErr: "fieldPath `spec.nope` is missing for replacement source Deployment.[noVer].[noGrp]/[noName].[noNs]",
		},
		{
			name:    "the target field is missing",
			config:  "- sourceValue: x\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.missing.field]\n",
			input:   twoContainers,
			wantErr: `unable to find field "spec.missing.field" in replacement target`,
		},
		{
			name:    "a target path through a list needs an index, selector or *",
			config:  "- sourceValue: x\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.template.spec.containers.name]\n",
			input:   twoContainers,
			wantErr: `unable to find field "spec.template.spec.containers.name" in replacement target: wrong node kind: expected MappingNode but got SequenceNode`,
		},
		{
			// kustomize creates keys without a type, so "true" is a
			// boolean and the object cannot be written as JSON.
			name:    "a created key that reads as a boolean",
			config:  "- sourceValue: x\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.annotations.true]\n    options: {create: true}\n",
			input:   "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  annotations: {}\n",
			wantErr: `map[string]interface {}{"apiVersion":"apps/v1", "kind":"Deployment", "metadata":map[string]interface {}{"annotations":map[interface {}]interface {}{true:"x"}, "name":"d"}}: json: unsupported type: map[interface {}]interface {}`,
		},
		{
			name:    "a target without select",
			config:  "- sourceValue: x\n  targets:\n  - fieldPaths: [metadata.name]\n",
			input:   twoContainers,
			wantErr: "target must specify resources to select",
		},
		{
			name:    "no targets",
			config:  "- sourceValue: x\n",
			input:   twoContainers,
			wantErr: "replacements must specify a source and at least one target",
		},
		{
			name:    "a source and a value",
			config:  "- sourceValue: x\n  source: {kind: Deployment}\n  targets:\n  - select: {kind: Deployment}\n",
			input:   twoContainers,
			wantErr: "value and resource selectors are mutually exclusive",
		},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

// TestReplacementsEarlierNames checks that sources and targets are found
// by the names objects had before a prefix was added.
func TestReplacementsEarlierNames(t *testing.T) {
	rs, err := resyaml.Decode([]byte(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: source
data:
  v: value
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: target
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		r.RememberID()
		r.SetName("p-" + r.Name())
	}
	l := resource.NewList(rs...)
	l.Freeze()
	s, err := NewReplacements(ReplacementsConfig{Replacements: []loaders.ReplacementField{{Replacement: loaders.Replacement{
		Source:  &loaders.SourceSelector{Name: "source", FieldPath: "data.v"},
		Targets: []*loaders.TargetSelector{{Select: &loaders.Selector{Name: "target"}, FieldPaths: []string{"data.v"}, Options: &loaders.FieldOptions{Create: true}}},
	}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	got, _ := output.MarshalOne(l.At(1))
	want := "apiVersion: v1\ndata:\n  v: value\nkind: ConfigMap\nmetadata:\n  name: p-target\n"
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestReplacementsFingerprint checks that the fingerprint covers the
// contents of replacement files.
func TestReplacementsFingerprint(t *testing.T) {
	cfg := ReplacementsConfig{Replacements: []loaders.ReplacementField{{Path: "r.yaml"}}}
	fp := func(content string) []byte {
		s, err := NewReplacements(cfg, mapReader(map[string]string{"r.yaml": content}))
		if err != nil {
			t.Fatal(err)
		}
		return s.Fingerprint()
	}
	a := fp("sourceValue: a\ntargets: [{select: {kind: X}}]\n")
	b := fp("sourceValue: b\ntargets: [{select: {kind: X}}]\n")
	if bytes.Equal(a, b) {
		t.Error("replacement files with different contents give the same fingerprint")
	}
	if !bytes.Equal(a, fp("sourceValue: a\ntargets: [{select: {kind: X}}]\n")) {
		t.Error("the fingerprint is not stable")
	}
}

// TestReplacementsConfigYAML checks the config kustomize shows when a
// kustomization's replacements cannot be configured.
func TestReplacementsConfigYAML(t *testing.T) {
	got := ReplacementsConfigYAML([]loaders.ReplacementField{
		{Path: "nope.yaml"},
		{Replacement: loaders.Replacement{
			Source:  &loaders.SourceSelector{Kind: "ConfigMap", FieldPath: "data.v"},
			Targets: []*loaders.TargetSelector{{Select: &loaders.Selector{Kind: "ConfigMap"}, FieldPaths: []string{"data.x"}, Options: &loaders.FieldOptions{Create: true, Delimiter: "."}}},
		}},
	})
	want := `Replacements:
- path: nope.yaml
- source:
    fieldPath: data.v
    kind: ConfigMap
  targets:
  - fieldPaths:
    - data.x
    options:
      create: true
      delimiter: .
    select:
      kind: ConfigMap
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// FuzzReplacementsFromConfig feeds arbitrary builtin ReplacementTransformer
// configs to the parser and runs what it accepts over a small list: bad
// input must give an error, never a panic, and a run must leave the list
// decodable (every object still a map with a kind).
func FuzzReplacementsFromConfig(f *testing.F) {
	for _, s := range []string{
		`{"replacements":[{"source":{"kind":"ConfigMap","name":"a","fieldPath":"data.x"},"targets":[{"select":{"kind":"ConfigMap"},"fieldPaths":["data.y"]}]}]}`,
		`replacements:
- source: {kind: ConfigMap, name: a, fieldPath: data.x}
  targets:
  - select: {kind: ConfigMap}
    fieldPaths: [data.z]
    options: {create: true, delimiter: "-", index: 1}`,
		`replacements: [{path: missing.yaml}]`,
		`{"replacements": [{"source": {"fieldPath": "[=]"}}]}`,
		"", "{", "replacements: 3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, config string) {
		read := func(string) ([]byte, error) { return nil, errors.New("no files in this test") }
		s, err := ReplacementsFromConfig([]byte(config), read)
		if err != nil {
			return
		}
		rs, err := resyaml.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: one-two\n  y: old\n"))
		if err != nil {
			t.Fatal(err)
		}
		l := resource.NewList(rs...)
		if err := s.Run(context.Background(), l); err != nil {
			return
		}
		for _, r := range l.All() {
			if r.Kind() == "" {
				t.Errorf("a replacement left an object without a kind: %v", r.Object())
			}
		}
	})
}

// TestReplacementCopiesSharedObjects: a replacement converts only the
// part of a target its field paths reach and keeps the rest as it was;
// when the target is shared (frozen), what it keeps is a copy, so that a
// later stage editing the result leaves the shared object alone, and the
// result is the one a whole conversion gives.
func TestReplacementCopiesSharedObjects(t *testing.T) {
	s, err := ReplacementsFromConfig([]byte(`apiVersion: builtin
kind: ReplacementTransformer
metadata:
  name: r
replacements:
- source:
    kind: ConfigMap
    name: src
    fieldPath: data.v
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - metadata.annotations.v
    - spec.template.spec.containers.[name=main].image
    options:
      create: true
`), mapReader(nil))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := resyaml.Decode([]byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: src
data:
  v: "5"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  labels:
    app: d
spec:
  replicas: 2
  selector:
    matchLabels:
      app: d
  template:
    metadata:
      labels:
        app: d
    spec:
      containers:
      - name: main
        image: old
        ports:
        - containerPort: 80
`))
	if err != nil {
		t.Fatal(err)
	}
	shared := resource.NewList(rs...)
	shared.Freeze()
	before, _ := output.Marshal(shared.All())
	l := shared.Copy()
	if err := s.Run(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	got, _ := output.Marshal(l.All()[1:])
	want := `apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    v: 5
  labels:
    app: d
  name: d
spec:
  replicas: 2
  selector:
    matchLabels:
      app: d
  template:
    metadata:
      labels:
        app: d
    spec:
      containers:
      - image: "5"
        name: main
        ports:
        - containerPort: 80
`
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Edit what the replacement did not reach, in the result.
	d := l.Edit(1).Edit()
	resource.LookupMap(d, "metadata", "labels")["app"] = "changed"
	resource.LookupMap(d, "spec", "selector", "matchLabels")["app"] = "changed"
	resource.LookupMap(d, "spec")["replicas"] = 9
	if after, _ := output.Marshal(shared.All()); !bytes.Equal(after, before) {
		t.Errorf("editing the result changed the shared objects:\n%s", after)
	}
}
