package manifest

import "testing"

func obj(kind, apiVersion, ns, name string) Object {
	m := map[string]any{"name": name}
	if ns != "" {
		m["namespace"] = ns
	}
	return Object{"apiVersion": apiVersion, "kind": kind, "metadata": m}
}

func TestGeneratedAndNormalize(t *testing.T) {
	list := Object{"apiVersion": "v1", "kind": "List", "items": []any{map[string]any(obj("ConfigMap", "v1", "", "a"))}}
	null := Object{"apiVersion": "v1", "kind": "ConfigMapList", "items": nil}
	crd := obj("CustomResourceDefinition", "apiextensions.k8s.io/v1", "", "w.example.com")
	crd["spec"] = map[string]any{"group": "example.com", "names": map[string]any{"kind": "W"}, "scope": "Cluster"}
	objs := []Object{list, null, obj("ClusterRole", "rbac.authorization.k8s.io/v1", "", "r"), crd, obj("W", "example.com/v1", "x", "w"), obj("ConfigMap", "v1", "dest", "a")}
	tr := Tracking{AppName: "app", LabelKey: DefaultAppLabelKey, Namespace: "dest"}
	out, err := Generated(objs, tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 5 {
		t.Fatalf("%d objects, want 5 (List flattened, null List dropped)", len(out))
	}
	ann := func(o Object) string {
		a, _ := o["metadata"].(map[string]any)["annotations"].(map[string]any)
		s, _ := a[AnnotationTrackingID].(string)
		return s
	}
	if got := ann(out[1]); got != "app:rbac.authorization.k8s.io/ClusterRole:dest/r" {
		t.Errorf("cluster-scoped object without namespace: tracking id %q (Argo CD names the destination namespace)", got)
	}
	if ann(out[2]) != "" {
		t.Error("a CRD is not tracked by the repo-server")
	}
	norm, conds, err := Normalize(out, "dest", NewScope(out), tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(norm) != 4 || len(conds) != 1 || conds[0] != "RepeatedResourceWarning: Resource /ConfigMap/dest/a appeared 2 times among application resources." {
		t.Errorf("normalized %d objects, conditions %q", len(norm), conds)
	}
	if Namespace(norm[3]) != "" || ann(norm[3]) != "app:example.com/W:dest/w" {
		t.Errorf("a cluster-scoped custom resource loses its namespace and is tracked again: %v", norm[3])
	}
}

func TestNonStringAnnotation(t *testing.T) {
	o := obj("ConfigMap", "v1", "", "n")
	o["metadata"].(map[string]any)["annotations"] = map[string]any{"replicas": int64(3)}
	_, err := Generated([]Object{o}, Tracking{AppName: "a", LabelKey: DefaultAppLabelKey})
	want := `failed to set app instance tracking info on manifest: failed to get annotations for /v1, Kind=ConfigMap /n: .metadata.annotations accessor error: contains non-string value in the map under key "replicas": 3 is of the type int64, expected string`
	if err == nil || err.Error() != want {
		t.Errorf("got %v", err)
	}
}
