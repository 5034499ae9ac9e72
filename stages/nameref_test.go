package stages

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// runNameRef decodes objects, renames those listed in renames (old name ->
// new name and namespace, as a prefix and a namespace transformer would,
// remembering the old ID), and runs the default name-reference stage.
func runNameRef(t *testing.T, objects string, renames map[string][2]string) (*resource.List, error) {
	t.Helper()
	rs, err := resyaml.Decode([]byte(objects))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		key := r.Kind() + "/" + r.Namespace() + "/" + r.Name()
		to, ok := renames[key]
		if !ok {
			continue
		}
		r.RememberID()
		r.SetName(to[0])
		if to[1] != "" {
			r.SetNamespace(to[1])
		}
	}
	cfg, err := fieldspec.Defaults()
	if err != nil {
		t.Fatal(err)
	}
	l := resource.NewList(rs...)
	return l, NewNameRef(cfg.NameReference).Run(context.Background(), l)
}

// at reads the value at path in obj, a number indexing a list.
func at(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, k := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// field reads a path (see at) of the object of the given kind and name.
func field(t *testing.T, l *resource.List, kind, name string, path ...string) string {
	t.Helper()
	for _, r := range l.All() {
		if r.Kind() == kind && r.Name() == name {
			v := at(r.Object(), path...)
			if s, ok := v.(string); ok {
				return s
			}
			b, _ := output.MarshalValue(v)
			return strings.TrimSpace(string(b))
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return ""
}

// TestNameRefPicksTheNamespace: two ConfigMaps first named alike, renamed
// into two namespaces; each Pod gets the one in its own namespace, and a
// Pod in a third namespace keeps the old name.
func TestNameRefPicksTheNamespace(t *testing.T) {
	l, err := runNameRef(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: a
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: b
---
apiVersion: v1
kind: Pod
metadata:
  name: pa
  namespace: a
spec:
  containers:
  - name: c
    envFrom:
    - configMapRef:
        name: cfg
---
apiVersion: v1
kind: Pod
metadata:
  name: pb
  namespace: b
spec:
  volumes:
  - name: v
    configMap:
      name: cfg
---
apiVersion: v1
kind: Pod
metadata:
  name: pc
  namespace: c
spec:
  volumes:
  - name: v
    configMap:
      name: cfg
`, map[string][2]string{"ConfigMap/a/cfg": {"a-cfg", ""}, "ConfigMap/b/cfg": {"b-cfg", ""}})
	if err != nil {
		t.Fatal(err)
	}
	if got := field(t, l, "Pod", "pa", "spec", "containers", "0", "envFrom", "0", "configMapRef", "name"); got != "a-cfg" {
		t.Errorf("pa refers to %q, want a-cfg", got)
	}
	if got := field(t, l, "Pod", "pb", "spec", "volumes", "0", "configMap", "name"); got != "b-cfg" {
		t.Errorf("pb refers to %q, want b-cfg", got)
	}
	if got := field(t, l, "Pod", "pc", "spec", "volumes", "0", "configMap", "name"); got != "cfg" {
		t.Errorf("pc refers to %q, want cfg (nothing in its namespace)", got)
	}
}

// TestNameRefAmbiguous: two objects of one kind first named alike in one
// namespace, renamed apart, and a referrer that cannot tell them apart:
// kustomize's error, naming both.
func TestNameRefAmbiguous(t *testing.T) {
	_, err := runNameRef(t, `apiVersion: v1
kind: Secret
metadata:
  name: creds
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: default
---
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  volumes:
  - name: v
    secret:
      secretName: creds
`, map[string][2]string{"Secret//creds": {"x-creds", ""}, "Secret/default/creds": {"y-creds", ""}})
	if err == nil {
		t.Fatal("no error, want an ambiguous reference")
	}
	for _, want := range []string{
		"found multiple possible referrals: Secret.v1.[noGrp]/x-creds.[noNs], Secret.v1.[noGrp]/y-creds.default",
		"updating name reference in 'spec/volumes/secret/secretName' field of 'Pod.v1.[noGrp]/p.[noNs]'",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
}

// TestNameRefSubjectNamespace: a RoleBinding refers to a ServiceAccount
// of another namespace through a subject that names it; the subject takes
// the account's new name, and the roleRef its Role's (the one of the
// binding's kind and group, not the ClusterRole of the same name).
func TestNameRefSubjectNamespace(t *testing.T) {
	l, err := runNameRef(t, `apiVersion: v1
kind: ServiceAccount
metadata:
  name: robot
  namespace: tools
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: apps
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: bind
  namespace: apps
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: reader
subjects:
- kind: ServiceAccount
  name: robot
  namespace: tools
`, map[string][2]string{
		"ServiceAccount/tools/robot": {"p-robot", ""},
		"Role/apps/reader":           {"p-reader", ""},
		"ClusterRole//reader":        {"c-reader", ""},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := field(t, l, "RoleBinding", "bind", "subjects", "0"); got != "kind: ServiceAccount\nname: p-robot\nnamespace: tools" {
		t.Errorf("subject:\n%s\nwant p-robot in tools", got)
	}
	if got := field(t, l, "RoleBinding", "bind", "roleRef", "name"); got != "p-reader" {
		t.Errorf("roleRef name %q, want p-reader", got)
	}
}

// TestNameRefMany: in a list of thousands of renamed objects referring to
// each other, every reference finds its own object, and every referral
// records its referrer.
func TestNameRefMany(t *testing.T) {
	var b strings.Builder
	renames := map[string][2]string{}
	const n = 2000
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("ns%d", i%7)
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\n  namespace: %s\n", i, ns)
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n  namespace: %s\nspec:\n  volumes:\n  - name: v\n    configMap:\n      name: cm%d\n", i, ns, i)
		renames[fmt.Sprintf("ConfigMap/%s/cm%d", ns, i)] = [2]string{fmt.Sprintf("x-cm%d", i), ""}
	}
	l, err := runNameRef(t, b.String(), renames)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range l.All() {
		if r.Kind() == "Pod" {
			got := at(r.Object(), "spec", "volumes", "0", "configMap", "name")
			if want := "x-cm" + strings.TrimPrefix(r.Name(), "p"); got != want {
				t.Fatalf("%s refers to %v, want %s", r.Name(), got, want)
			}
			continue
		}
		if refBy := r.RefBy(); len(refBy) != 1 || refBy[0].Name != "p"+strings.TrimPrefix(r.Name(), "x-cm") {
			t.Fatalf("%s referred to by %v", r.ID(), refBy)
		}
	}
}
