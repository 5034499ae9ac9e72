package stages

import (
	"context"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// txCase is one transformer case: a builtin plugin config, the input
// resources, and kustomize v5.8.0's output (or the start of its error).
type txCase struct {
	name    string
	config  string
	input   string
	want    string
	wantErr string
}

// runTx runs s over the resources of input, once with frozen resources
// (checking they are left untouched) and once with private ones, and
// returns the output.
func runTx(t *testing.T, s Stage, input string) (string, error) {
	t.Helper()
	var outs [2]string
	var errs [2]error
	for pass, freeze := range []bool{true, false} {
		rs, err := resyaml.Decode([]byte(input))
		if err != nil {
			t.Fatalf("decoding input: %v", err)
		}
		l := resource.NewList(rs...)
		var before []byte
		if freeze {
			l.Freeze()
			before, _ = output.Marshal(l.All())
		}
		orig := l.Copy()
		errs[pass] = s.Run(context.Background(), l)
		if freeze {
			after, _ := output.Marshal(orig.All())
			if string(after) != string(before) {
				t.Errorf("%s changed a frozen resource:\n%s", s.Kind(), after)
			}
		}
		if errs[pass] == nil {
			b, err := output.Marshal(l.All())
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			outs[pass] = string(b)
		}
	}
	if outs[0] != outs[1] || (errs[0] == nil) != (errs[1] == nil) {
		t.Errorf("frozen and private runs differ:\n%s\n%v\n---\n%s\n%v", outs[0], errs[0], outs[1], errs[1])
	}
	return outs[0], errs[0]
}

// runTxCases configures each case with fromConfig and checks its output.
func runTxCases(t *testing.T, kind string, fromConfig func([]byte) (Stage, error), cases []txCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := fromConfig([]byte(c.config))
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			if s.Kind() != kind {
				t.Errorf("Kind() = %q, want %q", s.Kind(), kind)
			}
			checkTx(t, s, c.input, c.want, c.wantErr)
		})
	}
}

// checkTx runs s and compares its output or error with the expectation.
func checkTx(t *testing.T, s Stage, input, want, wantErr string) {
	t.Helper()
	got, err := runTx(t, s, input)
	switch {
	case wantErr != "":
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("error = %v, want one containing %q", err, wantErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), s.Kind()+": ") {
			t.Errorf("error %q does not name the stage", err)
		}
	case err != nil:
		t.Fatalf("unexpected error: %v", err)
	case got != want:
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func defaultFieldSpecs(t *testing.T) *fieldspec.Config {
	t.Helper()
	c, err := fieldspec.Defaults()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLabelsCases(t *testing.T) {
	runTxCases(t, "LabelTransformer", LabelsFromConfig, labelsCases)
}

// TestNumericCommonLabels is kustomize's TestNumericCommonLabels:
// commonLabels with the default field specs.
func TestNumericCommonLabels(t *testing.T) {
	tc := defaultFieldSpecs(t)
	s := NewLabels(LabelsConfig{Labels: map[string]string{"version": "1"}, FieldSpecs: tc.CommonLabels})
	checkTx(t, s, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: the-deployment
`, `apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    version: "1"
  name: the-deployment
spec:
  selector:
    matchLabels:
      version: "1"
  template:
    metadata:
      labels:
        version: "1"
`, "")
}

// TestLabelsTemplatesNoSelectors is kustomize's
// TestKustomizationLabelsDoesNotCreateInvalidTemplatePaths: a `labels:`
// entry with includeTemplates (template specs plus metadata/labels), then
// commonLabels.
func TestLabelsTemplatesNoSelectors(t *testing.T) {
	tc := defaultFieldSpecs(t)
	fss, err := fieldspec.MergeSpecs(tc.Labels, tc.TemplateLabels...)
	if err != nil {
		t.Fatal(err)
	}
	fss, err = fieldspec.MergeSpecs(fss, loaders.FieldSpec{Path: "metadata/labels", CreateIfNotPresent: true})
	if err != nil {
		t.Fatal(err)
	}
	entry := NewLabels(LabelsConfig{Labels: map[string]string{
		"app.kubernetes.io/component": "a",
		"app.kubernetes.io/instance":  "b",
		"app.kubernetes.io/name":      "c",
		"app.kubernetes.io/part-of":   "d",
	}, FieldSpecs: fss})
	common := NewLabels(LabelsConfig{Labels: map[string]string{"app": "test-server"}, FieldSpecs: tc.CommonLabels})
	rs, err := resyaml.Decode([]byte(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: deployment
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: test-server
        image: test-server
---
apiVersion: v1
kind: Service
metadata:
  name: service
spec:
  ports:
  - port: 80
    protocol: TCP
    targetPort: 9376
`))
	if err != nil {
		t.Fatal(err)
	}
	l := resource.NewList(rs...)
	l.Freeze()
	for _, s := range []Stage{entry, common} {
		if err := s.Run(context.Background(), l); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := output.Marshal(l.All())
	want := `apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: test-server
    app.kubernetes.io/component: a
    app.kubernetes.io/instance: b
    app.kubernetes.io/name: c
    app.kubernetes.io/part-of: d
  name: deployment
spec:
  replicas: 1
  selector:
    matchLabels:
      app: test-server
  template:
    metadata:
      labels:
        app: test-server
        app.kubernetes.io/component: a
        app.kubernetes.io/instance: b
        app.kubernetes.io/name: c
        app.kubernetes.io/part-of: d
    spec:
      containers:
      - image: test-server
        name: test-server
---
apiVersion: v1
kind: Service
metadata:
  labels:
    app: test-server
    app.kubernetes.io/component: a
    app.kubernetes.io/instance: b
    app.kubernetes.io/name: c
    app.kubernetes.io/part-of: d
  name: service
spec:
  ports:
  - port: 80
    protocol: TCP
    targetPort: 9376
  selector:
    app: test-server
`
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestLabelsNoLabelsIsNoOp(t *testing.T) {
	s := NewLabels(LabelsConfig{FieldSpecs: []loaders.FieldSpec{{Path: "metadata/labels", CreateIfNotPresent: true}}})
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	checkTx(t, s, in, in, "")
}

func TestLabelsFingerprint(t *testing.T) {
	fs := []loaders.FieldSpec{{Path: "metadata/labels", CreateIfNotPresent: true}}
	a := NewLabels(LabelsConfig{Labels: map[string]string{"a": "1"}, FieldSpecs: fs})
	b := NewLabels(LabelsConfig{Labels: map[string]string{"a": "1"}, FieldSpecs: fs})
	c := NewLabels(LabelsConfig{Labels: map[string]string{"a": "2"}, FieldSpecs: fs})
	d := NewAnnotations(AnnotationsConfig{Annotations: map[string]string{"a": "1"}, FieldSpecs: fs})
	e := NewLabels(LabelsConfig{Labels: map[string]string{"a": "1"}, FieldSpecs: []loaders.FieldSpec{{Path: "metadata/labels"}}})
	if string(a.Fingerprint()) != string(b.Fingerprint()) {
		t.Error("equal configs have different fingerprints")
	}
	for _, o := range []Stage{c, d, e} {
		if string(a.Fingerprint()) == string(o.Fingerprint()) {
			t.Errorf("%s fingerprint does not cover its config", o.Kind())
		}
	}
}

func TestLabelsFromConfigErrors(t *testing.T) {
	if _, err := LabelsFromConfig([]byte("labels: [a]\n")); err == nil || !strings.HasPrefix(err.Error(), "LabelTransformer: ") {
		t.Errorf("error = %v", err)
	}
	if _, err := LabelsFromConfig([]byte("labels: {a: b\n")); err == nil {
		t.Error("malformed YAML accepted")
	}
}

var labelsCases = []txCase{
	{
		name: "TestLabelTransformer",
		config: `
apiVersion: builtin
kind: LabelTransformer
metadata:
  name: notImportantHere
labels:
  app: myApp
  quotedBoolean: "true"
  quotedFruit: "peach"
  unquotedBoolean: true
  env: production
fieldSpecs:
- path: spec/selector
  create: true
  version: v1
  kind: Service
- path: metadata/labels
  create: true
- path: spec/selector/matchLabels
  create: true
  kind: Deployment
- path: spec/template/metadata/labels
  create: true
  kind: Deployment
`,
		input: `
apiVersion: v1
kind: Service
metadata:
  name: myService
spec:
  ports:
  - port: 7002
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: mungebot
  labels:
    app: mungebot
spec:
  replicas: 1
  template:
    metadata:
      labels:
        app: mungebot
    spec:
      containers:
      - name: nginx
        image: nginx
`,
		want: `apiVersion: v1
kind: Service
metadata:
  labels:
    app: myApp
    env: production
    quotedBoolean: "true"
    quotedFruit: peach
    unquotedBoolean: "true"
  name: myService
spec:
  ports:
  - port: 7002
  selector:
    app: myApp
    env: production
    quotedBoolean: "true"
    quotedFruit: peach
    unquotedBoolean: "true"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: myApp
    env: production
    quotedBoolean: "true"
    quotedFruit: peach
    unquotedBoolean: "true"
  name: mungebot
spec:
  replicas: 1
  selector:
    matchLabels:
      app: myApp
      env: production
      quotedBoolean: "true"
      quotedFruit: peach
      unquotedBoolean: "true"
  template:
    metadata:
      labels:
        app: myApp
        env: production
        quotedBoolean: "true"
        quotedFruit: peach
        unquotedBoolean: "true"
    spec:
      containers:
      - image: nginx
        name: nginx
`,
	},
	{
		name: "labels_edge",
		config: `apiVersion: builtin
kind: LabelTransformer
metadata:
  name: x
labels:
  a: 1
  b: "true"
  c: null
fieldSpecs:
- path: metadata/labels
  create: true
- path: spec/selector/matchLabels
  create: true
  kind: Deployment
- path: spec/template/metadata/labels
  kind: Deployment
- path: spec/jobs/selector
  create: true
`,
		input: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  labels:
    a: old
    keep: 2
spec:
  selector:
    matchLabels: null
  template:
    metadata:
      labels: null
---
apiVersion: v1
kind: Service
metadata:
  name: s
  labels: ~
spec:
  jobs:
  - selector: {x: y}
  - selector: null
  - name: nosel
  - null
`,
		want: `apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    a: "1"
    b: "true"
    c: ""
    keep: 2
  name: d
spec:
  jobs:
    selector:
      a: "1"
      b: "true"
      c: ""
  selector:
    matchLabels:
      a: "1"
      b: "true"
      c: ""
  template:
    metadata:
      labels: null
---
apiVersion: v1
kind: Service
metadata:
  labels:
    a: "1"
    b: "true"
    c: ""
  name: s
spec:
  jobs:
  - selector:
      a: "1"
      b: "true"
      c: ""
      x: "y"
  - selector:
      a: "1"
      b: "true"
      c: ""
  - name: nosel
    selector:
      a: "1"
      b: "true"
      c: ""
  - null
`,
	},
	{
		name: "labels_err",
		config: `apiVersion: builtin
kind: LabelTransformer
metadata:
  name: x
labels:
  a: b
fieldSpecs:
- path: spec/selector
  create: true
`,
		input: `apiVersion: v1
kind: Service
metadata:
  name: s
spec:
  selector: foo
`,
		wantErr: "considering field 'spec/selector' of object Service.v1.[noGrp]/s.[noNs]: wrong node kind: expected MappingNode but got ScalarNode",
	},
}
