package stages

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

func TestExpandVars(t *testing.T) {
	values := map[string]any{"NAME": "svc", "PORT": 80, "RATIO": 1.5, "ON": true}
	mapping := func(k string) any {
		if v, ok := values[k]; ok {
			return v
		}
		return "$(" + k + ")"
	}
	for _, c := range []struct {
		in   string
		want any
	}{
		{"$(NAME)", "svc"},
		// A whole-string reference keeps the value's type.
		{"$(PORT)", 80},
		{"$(RATIO)", 1.5},
		{"$(ON)", true},
		// Inside text, values are written as text.
		{"http://$(NAME):$(PORT)/", "http://svc:80/"},
		{"$(RATIO)x", "1.5x"},
		// Unknown names and incomplete references stay.
		{"$(NOPE)", "$(NOPE)"},
		{"a $(NOPE) b", "a $(NOPE) b"},
		{"$(NAME", "$(NAME"},
		// $$ is an escaped $.
		{"$$(NAME)", "$(NAME)"},
		{"cost: $$5", "cost: $5"},
		{"$", "$"},
		{"a$b", "a$b"},
		{"", ""},
	} {
		if got := expandVars(c.in, mapping); !reflect.DeepEqual(got, c.want) {
			t.Errorf("expandVars(%q) = %#v, want %#v", c.in, got, c.want)
		}
	}
}

func TestVarSet(t *testing.T) {
	var s VarSet
	if err := s.MergeAll([]loaders.Var{
		{Name: "B", ObjRef: loaders.VarTarget{APIVersion: "apps/v1", Kind: "Deployment", Name: "d"}},
		{Name: "A", ObjRef: loaders.VarTarget{APIVersion: "v1", Kind: "Service", Name: "s"}, FieldRef: loaders.FieldSelector{FieldPath: "spec.ports[0].port"}},
	}); err != nil {
		t.Fatal(err)
	}
	got := FormatVars(s.Sorted())
	want := "[{A Service.v1.[noGrp] {spec.ports[0].port}} {B Deployment.v1.apps {metadata.name}}]"
	if got != want {
		t.Errorf("vars are kept as %s, want %s (sorted, defaulted)", got, want)
	}
	var other VarSet
	if err := other.Merge(loaders.Var{Name: "A", ObjRef: loaders.VarTarget{Kind: "ConfigMap", Name: "c"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.MergeSet(&other); err == nil || err.Error() != "var 'A' already encountered" {
		t.Errorf("merging a second var A: error = %v", err)
	}
}

func TestVarFormatsAsKustomize(t *testing.T) {
	v := loaders.Var{Name: "X", ObjRef: loaders.VarTarget{APIVersion: "v1", Kind: "Service", Name: "s"}}
	// As declared: the apiVersion is not shown.
	if got := FormatVars([]loaders.Var{v}); got != "[{X Service.[noVer].[noGrp] {}}]" {
		t.Errorf("declared var formats as %s", got)
	}
	if got := defaulted(v).String(); got != "{X Service.v1.[noGrp] {metadata.name}}" {
		t.Errorf("defaulted var formats as %s", got)
	}
}

const varInput = `
apiVersion: v1
kind: Service
metadata:
  name: svc
  namespace: a
spec:
  ports:
  - port: 80
  sessionAffinityConfig:
    clientIP:
      timeoutSeconds: 1.5
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    port: $(PORT)
spec:
  template:
    spec:
      containers:
      - name: c
        image: i
        command: [serve, --addr=$(SVC):$(PORT), $$(SVC)]
        env:
        - name: TIMEOUT
          value: $(TIMEOUT)
        - name: PORT
          value: $(PORT)
`

// encodeList writes a list as kpipe prints it.
func encodeList(t *testing.T, l *resource.List) string {
	t.Helper()
	b, err := output.Marshal(l.All())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestVarResolver(t *testing.T) {
	vars := []loaders.Var{
		{Name: "SVC", ObjRef: loaders.VarTarget{APIVersion: "v1", Kind: "Service", Name: "svc"}},
		{Name: "PORT", ObjRef: loaders.VarTarget{APIVersion: "v1", Kind: "Service", Name: "svc"}, FieldRef: loaders.FieldSelector{FieldPath: "spec.ports[0].port"}},
		{Name: "TIMEOUT", ObjRef: loaders.VarTarget{Group: "", Version: "v1", Kind: "Service", Name: "svc"}, FieldRef: loaders.FieldSelector{FieldPath: "spec.sessionAffinityConfig.clientIP.timeoutSeconds"}},
	}
	got, err := resolveVarsWithState(t, varInput, vars)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- --addr=p-svc:80\n", // the name after the prefix
		"- $(SVC)\n",          // $$ escapes
		"value: 1.5\n",        // a float keeps its type
		"value: 80\n",         // so does an int
		"    port: 80\n",      // in a map too
		"name: p-web\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestVarErrors(t *testing.T) {
	svc := loaders.VarTarget{APIVersion: "v1", Kind: "Service", Name: "svc"}
	for _, c := range []struct {
		name  string
		input string
		vars  []loaders.Var
		want  string
	}{
		{"no such object", varInput, []loaders.Var{{Name: "X", ObjRef: loaders.VarTarget{Kind: "Service", Name: "nope"}}},
			"var '{X Service.[noVer].[noGrp] {metadata.name}}' cannot be mapped to a field in the set of known resources"},
		{"no such field", varInput, []loaders.Var{{Name: "X", ObjRef: svc, FieldRef: loaders.FieldSelector{FieldPath: "spec.nope"}}},
			"field specified in var '{X Service.v1.[noGrp] {spec.nope}}' not found in corresponding resource"},
		{"ambiguous", varInput + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n  namespace: b\n",
			[]loaders.Var{{Name: "X", ObjRef: svc}},
			"found 2 resId matches for var {X Service.v1.[noGrp] {}} (unable to disambiguate)"},
		{"a list holding a number", strings.Replace(varInput, "command: [", "command: [1, ", 1),
			[]loaders.Var{{Name: "SVC", ObjRef: svc}},
			"considering field 'spec/template/spec/containers/command' of object Deployment.v1.apps/p-web.[noNs]: visit traversal on path: [command]: invalid value type expect a string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := resolveVarsWithState(t, c.input, c.vars)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestVarNamespaceDisambiguates checks that a var naming a namespace reads
// the object in that namespace only.
func TestVarNamespaceDisambiguates(t *testing.T) {
	input := varInput + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n  namespace: b\nspec:\n  ports:\n  - port: 90\n"
	got, err := resolveVarsWithState(t, input, []loaders.Var{{Name: "PORT",
		ObjRef:   loaders.VarTarget{APIVersion: "v1", Kind: "Service", Name: "svc", Namespace: "b"},
		FieldRef: loaders.FieldSelector{FieldPath: "spec.ports[0].port"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "value: 90\n") {
		t.Errorf("the var did not read the Service in namespace b:\n%s", got)
	}
}

// resolveVarsWithState runs vars over input as a build does: the vars
// mark the objects they read (by their names as written), then every name
// gets a prefix, then the root resolves the vars. It also checks that the
// resolver leaves shared objects alone.
func resolveVarsWithState(t *testing.T, input string, vars []loaders.Var) (string, error) {
	t.Helper()
	rs, err := resyaml.Decode([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	l := resource.NewList(rs...)
	l.Freeze()
	if err := NewVarTargets(vars).Run(context.Background(), l); err != nil {
		return "", err
	}
	for i := range l.All() {
		r := l.Edit(i)
		r.RememberID()
		r.SetName("p-" + r.Name())
	}
	l.Freeze()
	before := encodeList(t, l)
	var set VarSet
	if err := set.MergeAll(vars); err != nil {
		return "", err
	}
	s := NewVarResolver(VarResolverConfig{Vars: set.Sorted(), FieldSpecs: defaultFieldSpecs(t).VarReference})
	shared := l.Copy()
	if err := s.Run(context.Background(), l); err != nil {
		return "", err
	}
	if after := encodeList(t, shared); after != before {
		t.Errorf("the resolver changed shared (frozen) objects:\n%s", after)
	}
	return encodeList(t, l), nil
}
