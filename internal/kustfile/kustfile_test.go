package kustfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/loaders"
)

func writeKust(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRewriteKeepsOrderAndComments: fields already in the file keep their
// place and the comments before them (a comment inside a list moves before
// its field, as with kustomize); new fields follow in kustomize's order;
// apiVersion, missing in the file, is added after them.
func TestRewriteKeepsOrderAndComments(t *testing.T) {
	src, err := os.ReadFile("testdata/commented.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := writeKust(t, string(src))
	f, k, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	k.Namespace = "ns"
	k.Replicas = []loaders.Replica{{Name: "web", Count: 0}}
	if err := f.Write(k); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	want := `# top comment

# comment inside a list
resources:
- a.yaml
- b.yaml
namePrefix: p-
kind: Kustomization
# comment before images
images:
- name: x
  newTag: "2"
apiVersion: kustomize.config.k8s.io/v1beta1
namespace: ns
replicas:
- count: 0
  name: web
`
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	fi, _ := os.Stat(filepath.Join(dir, "kustomization.yaml"))
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// TestReadFixes: deprecated fields are folded on read as kustomize does.
func TestReadFixes(t *testing.T) {
	k, err := Parse([]byte("bases: [b]\nresources: [r]\nimageTags: [{name: x, newTag: '1'}]\nconfigMapGenerator: [{name: c, env: e.env}]\nkind: Component\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(k.Resources, ",") != "r,b" || k.Bases != nil {
		t.Errorf("resources %v bases %v", k.Resources, k.Bases)
	}
	if len(k.Images) != 1 || k.Images[0].NewTag != "1" || k.ImageTags != nil {
		t.Errorf("images %v", k.Images)
	}
	if g := k.ConfigMapGenerator[0]; g.Env != "" || strings.Join(g.Envs, ",") != "e.env" {
		t.Errorf("generator %+v", g)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1alpha1" {
		t.Errorf("component apiVersion %q", k.APIVersion)
	}
}

// TestBadInput: unknown fields and bad YAML are errors naming the file,
// and the file is not touched.
func TestBadInput(t *testing.T) {
	for _, bad := range []string{"resources: [a]\nimage: x\n", "resources: [a\n", "namePrefix: [x]\n",
		"vars: [{name: x, objref: {kind: S, name: a}, bogus: 1}]\n", "replicas: [{name: a, count: x}]\n"} {
		dir := writeKust(t, bad)
		_, _, err := Open(dir)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "kustomization.yaml")) {
			t.Errorf("%q: err %v", bad, err)
		}
	}
	if _, _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "missing kustomization file") {
		t.Errorf("empty dir: %v", err)
	}
	dir := writeKust(t, "resources: []\n")
	os.WriteFile(filepath.Join(dir, "kustomization.yml"), []byte("{}"), 0o644)
	if _, _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "multiple") {
		t.Errorf("two files: %v", err)
	}
}

func TestSplitImageName(t *testing.T) {
	for in, want := range map[string][3]string{
		"nginx":                      {"nginx", "", ""},
		"nginx:1.2":                  {"nginx", "1.2", ""},
		"reg.io:5000/nginx":          {"reg.io:5000/nginx", "", ""},
		"reg.io:5000/nginx:1":        {"reg.io:5000/nginx", "1", ""},
		"nginx@sha256:abc":           {"nginx", "", "sha256:abc"},
		"reg.io:5000/n:1@sha256:abc": {"reg.io:5000/n", "1", "sha256:abc"},
		"reg.io/a/b@sha256:abc":      {"reg.io/a/b", "", "sha256:abc"},
	} {
		n, tag, d := splitImageName(in)
		if [3]string{n, tag, d} != want {
			t.Errorf("%s: got %q %q %q, want %q", in, n, tag, d, want)
		}
	}
}

func TestSetImagesPreserveAndSort(t *testing.T) {
	k := &loaders.Kustomization{Images: []loaders.Image{{Name: "b", NewName: "old/b", NewTag: "1", TagSuffix: "-x"}, {Name: "a", NewTag: "0"}}}
	if err := SetImages(k, []string{"b=*:2", "c@sha256:d"}); err != nil {
		t.Fatal(err)
	}
	want := []loaders.Image{{Name: "a", NewTag: "0"}, {Name: "b", NewName: "old/b", NewTag: "2"}, {Name: "c", Digest: "sha256:d"}}
	if len(k.Images) != 3 || k.Images[0] != want[0] || k.Images[1] != want[1] || k.Images[2] != want[2] {
		t.Errorf("got %+v", k.Images)
	}
	if err := SetImages(k, []string{"noversion"}); err == nil {
		t.Error("an image with no new name, tag or digest was accepted")
	}
}

func TestAddLabelsForce(t *testing.T) {
	k := &loaders.Kustomization{}
	if err := AddLabels(k, map[string]string{"a": "1"}, LabelOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := AddLabels(k, map[string]string{"a": "2"}, LabelOptions{}); err == nil {
		t.Error("existing label overwritten without --force")
	}
	if err := AddLabels(k, map[string]string{"a": "2"}, LabelOptions{Force: true}); err != nil || k.CommonLabels["a"] != "2" {
		t.Errorf("force: %v %v", err, k.CommonLabels)
	}
	if err := AddLabels(k, map[string]string{"b": "1", "c": "2"}, LabelOptions{WithoutSelector: true}); err != nil {
		t.Fatal(err)
	}
	if len(k.Labels) != 1 || len(k.Labels[0].Pairs) != 2 || k.Labels[0].IncludeSelectors {
		t.Errorf("labels %+v", k.Labels)
	}
}

func TestFixCommonLabelsConflict(t *testing.T) {
	k := &loaders.Kustomization{CommonLabels: map[string]string{"a": "1"}, Labels: []loaders.Label{{Pairs: map[string]string{"a": "2"}}}}
	if err := Fix(k, t.TempDir()); err == nil || !strings.Contains(err.Error(), "'a'") {
		t.Errorf("conflict: %v", err)
	}
}

func TestGeneratorChecks(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x"), 0o644)
	k := &loaders.Kustomization{GeneratorOptions: &loaders.GeneratorOptions{Labels: map[string]string{"g": "1"}}}
	if err := AddConfigMap(k, GeneratorFlags{Name: "c", FileSources: []string{"f.txt"}, LiteralSources: []string{"A=1"}}, dir); err != nil {
		t.Fatal(err)
	}
	if o := k.ConfigMapGenerator[0].Options; o == nil || o.Labels["g"] != "1" {
		t.Errorf("global options not merged: %+v", o)
	}
	for _, g := range []GeneratorFlags{
		{Name: "d", LiteralSources: []string{"=1"}},
		{Name: "d", FileSources: []string{"missing.txt"}},
		{Name: "d", LiteralSources: []string{"A=1", "A=2"}},
		{Name: "d", LiteralSources: []string{"bad key=1"}},
	} {
		if err := AddConfigMap(&loaders.Kustomization{}, g, dir); err == nil {
			t.Errorf("%+v accepted", g)
		}
	}
	if err := SetConfigMap(k, GeneratorFlags{Name: "c", LiteralSources: []string{"B=1"}}, dir); err == nil {
		t.Error("set of a missing key accepted")
	}
}

// TestWriteThroughSymlink: a symlinked kustomization file stays a link and
// its target gets the new content.
func TestWriteThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.yaml")
	os.WriteFile(real, []byte("namespace: a\n"), 0o644)
	link := filepath.Join(dir, "kustomization.yaml")
	if err := os.Symlink("real.yaml", link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	f, k, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	k.Namespace = "b"
	if err := f.Write(k); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if got, _ := os.ReadFile(real); !strings.Contains(string(got), "namespace: b\n") {
		t.Errorf("target: %q", got)
	}
}

// TestWriteAtomicFailure: a write that cannot happen names the file and
// leaves nothing behind.
func TestWriteAtomicFailure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "missing", "kustomization.yaml")
	if err := WriteAtomic(p, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("err %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
}

// TestGeneratorEntriesRead: a secretGenerator entry keeps its type, and a
// configMapGenerator entry (which has none: TestErrorsAsBefore) reads its
// other fields as the build reads them.
func TestGeneratorEntriesRead(t *testing.T) {
	k, err := Parse([]byte("secretGenerator:\n- name: s\n  type: x\nconfigMapGenerator:\n- name: a\n  namespace: ns\n  behavior: merge\n" +
		"  literals: [k=v]\n  files: [f]\n  env: e.env\n  options: {immutable: true}\n- name: b\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := k.SecretGenerator[0]; s.Name != "s" || s.Type != "x" {
		t.Errorf("secret %+v", s)
	}
	want := loaders.GeneratorArgs{Name: "a", Namespace: "ns", Behavior: "merge", Literals: []string{"k=v"}, Files: []string{"f"},
		Envs: []string{"e.env"}, Options: &loaders.GeneratorOptions{Immutable: true}}
	if len(k.ConfigMapGenerator) != 2 || !reflect.DeepEqual(k.ConfigMapGenerator[0], want) || k.ConfigMapGenerator[1].Name != "b" {
		t.Errorf("configMapGenerator %+v", k.ConfigMapGenerator)
	}
}
