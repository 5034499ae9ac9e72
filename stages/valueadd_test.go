package stages

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestInsertPathPart(t *testing.T) {
	// kustomize's table for filesys.InsertPathPart (positions 0-based).
	for _, c := range []struct {
		path string
		pos  int
		want string
	}{
		{"", 3, "PEACH"},
		{"/", 0, "/PEACH"},
		{"/", 5, "/PEACH"},
		{"pie", 0, "PEACH/pie"},
		{"pie", -1, "PEACH/pie"},
		{"/pie", 0, "/PEACH/pie"},
		{"raw", 1, "raw/PEACH"},
		{"raw", 99, "raw/PEACH"},
		{"/raw", 1, "/raw/PEACH"},
		{"a/nice/warm/pie", 3, "a/nice/warm/PEACH/pie"},
		{"/a/nice/warm/pie", 3, "/a/nice/warm/PEACH/pie"},
	} {
		if got := insertPathPart(c.path, c.pos, "PEACH"); got != c.want {
			t.Errorf("insertPathPart(%q, %d): got %q, want %q", c.path, c.pos, got, c.want)
		}
	}
}

func TestValueAdd(t *testing.T) {
	files := map[string]string{"targets.yaml": `targets:
- selector:
    kind: IAMPolicyMember
  fieldPath: spec/resourceRef/external
  filePathPosition: 2
`}
	read := func(p string) ([]byte, error) {
		if d, ok := files[p]; ok {
			return []byte(d), nil
		}
		return nil, errors.New("no such file")
	}
	s, err := ValueAddFromConfig([]byte(`
apiVersion: builtin
kind: ValueAddTransformer
metadata:
  name: v
targets:
- fieldPath: metadata/namespace
- fieldPath: spec/new\/field
targetFilePath: targets.yaml
`), "/repo/area-51", read)
	if err != nil {
		t.Fatal(err)
	}
	rs := decodeList(t, `apiVersion: iam.cnrm.cloud.google.com/v1beta1
kind: IAMPolicyMember
metadata:
  name: m
spec:
  resourceRef:
    external: projects/data
---
apiVersion: v1
kind: Namespace
metadata:
  name: ns
`)
	if err := s.Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	m := rs.At(0).Object()
	spec := m["spec"].(map[string]any)
	if got := spec["resourceRef"].(map[string]any)["external"]; got != "projects/area-51/data" {
		t.Errorf("file path insertion: got %v", got)
	}
	if got := spec["new/field"]; got != "area-51" {
		t.Errorf("added field: got %v (value defaults to the directory's name)", got)
	}
	if got := rs.At(0).Namespace(); got != "area-51" {
		t.Errorf("namespace: got %q", got)
	}
	if got := rs.At(1).Namespace(); got != "" {
		t.Errorf("cluster-scoped object got namespace %q", got)
	}

	files["targets.yaml"] = "targets:\n- fieldPath: spec/x\n"
	s2, _ := ValueAddFromConfig([]byte("value: v\ntargetFilePath: targets.yaml\n"), "/d", read)
	s3, _ := ValueAddFromConfig([]byte("value: v\ntargetFilePath: targets.yaml\n"), "/d", read)
	files["targets.yaml"] = "targets:\n- fieldPath: spec/y\n"
	s4, _ := ValueAddFromConfig([]byte("value: v\ntargetFilePath: targets.yaml\n"), "/d", read)
	if string(s2.Fingerprint()) != string(s3.Fingerprint()) || string(s2.Fingerprint()) == string(s4.Fingerprint()) {
		t.Error("fingerprint does not follow the targets file's content")
	}
}

func TestValueAddErrors(t *testing.T) {
	read := func(string) ([]byte, error) { return nil, errors.New("no such file") }
	for cfg, want := range map[string]string{
		"value: v\n":                    "must specify at least one target",
		"targets:\n- fieldPath: \"\"\n": "fieldPath cannot be empty",
		"targets:\n- fieldPath: a\n  filePathPosition: -1": "cannot be negative",
		"targetFilePath: missing.yaml\n":                   "no such file",
	} {
		if _, err := ValueAddFromConfig([]byte(cfg), "/d", read); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %q: got error %v, want one containing %q", cfg, err, want)
		}
	}
	s, err := ValueAddFromConfig([]byte("value: v\ntargets:\n- fieldPath: spec/list/x\n"), "/d", read)
	if err != nil {
		t.Fatal(err)
	}
	rs := decodeList(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nspec:\n  list: [1]\n")
	if err := s.Run(context.Background(), rs); err == nil || !strings.Contains(err.Error(), "ConfigMap") {
		t.Errorf("a list on the path: got error %v, want one naming the object", err)
	}
}
