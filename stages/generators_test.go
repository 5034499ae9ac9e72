package stages

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// memFiles is a ReadFile over an in-memory tree; a missing file is an
// error that names it.
func memFiles(files map[string]string) ReadFile {
	return func(p string) ([]byte, error) {
		c, ok := files[p]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		}
		return []byte(c), nil
	}
}

// binaryHello is kustomize's test content: not UTF-8.
var binaryHello = string(bytes.Repeat([]byte{0xff, 'h', 'e', 'l', 'l', 'o'}, 30))

var genFiles = map[string]string{
	"app.env":      "DB_USERNAME=admin\nDB_PASSWORD=qwerty\n",
	"app-init.ini": "FOO=bar\nBAR=baz\n",
	"app.bin":      binaryHello,
	"short.bin":    "\xff\xfd",
}

// generate runs a configured generator over an empty list and renders the
// object it made.
func generate(t *testing.T, s Stage) (string, *resource.Resource) {
	t.Helper()
	l := resource.NewList()
	if err := s.Run(context.Background(), l); err != nil {
		t.Fatalf("run: %v", err)
	}
	if l.Len() != 1 {
		t.Fatalf("generated %d objects, want 1", l.Len())
	}
	b, err := output.Marshal(l.All())
	if err != nil {
		t.Fatal(err)
	}
	return string(b), l.At(0)
}

// TestConfigMapGenerator follows kustomize's TestMakeConfigMap, with the
// output as `kustomize build` prints it (keys sorted, before the hash).
func TestConfigMapGenerator(t *testing.T) {
	cases := []struct {
		name string
		cfg  loaders.GeneratorArgs
		want string
	}{
		{"env file", loaders.GeneratorArgs{Name: "envConfigMap", Envs: []string{"app.env"}}, `apiVersion: v1
data:
  DB_PASSWORD: qwerty
  DB_USERNAME: admin
kind: ConfigMap
metadata:
  name: envConfigMap
`},
		{"text file", loaders.GeneratorArgs{Name: "fileConfigMap1", Files: []string{"app-init.ini"}}, `apiVersion: v1
data:
  app-init.ini: |
    FOO=bar
    BAR=baz
kind: ConfigMap
metadata:
  name: fileConfigMap1
`},
		{"text and binary file", loaders.GeneratorArgs{Name: "fileConfigMap2", Files: []string{"app-init.ini", "app.bin"}}, `apiVersion: v1
binaryData:
  app.bin: |
    /2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbG
    xv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hl
    bGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv/2
    hlbGxv/2hlbGxv/2hlbGxv/2hlbGxv
data:
  app-init.ini: |
    FOO=bar
    BAR=baz
kind: ConfigMap
metadata:
  name: fileConfigMap2
`},
		{"key=path", loaders.GeneratorArgs{Name: "renamed", Files: []string{"settings=app-init.ini"}}, `apiVersion: v1
data:
  settings: |
    FOO=bar
    BAR=baz
kind: ConfigMap
metadata:
  name: renamed
`},
		{"literals, options, namespace", loaders.GeneratorArgs{
			Name: "literalConfigMap2", Namespace: "ns",
			Literals: []string{"a=x", "b=y", `c="Hello World"`, "d='true'", "e='", "f=a=b"},
			Options: &loaders.GeneratorOptions{
				Labels:      map[string]string{"veggie": "celery", "dog": "beagle"},
				Annotations: map[string]string{"river": "Missouri"},
				Immutable:   true,
			},
		}, `apiVersion: v1
data:
  a: x
  b: "y"
  c: Hello World
  d: "true"
  e: ''''
  f: a=b
immutable: true
kind: ConfigMap
metadata:
  annotations:
    river: Missouri
  labels:
    dog: beagle
    veggie: celery
  name: literalConfigMap2
  namespace: ns
`},
		{"no data", loaders.GeneratorArgs{Name: "empty"}, `apiVersion: v1
kind: ConfigMap
metadata:
  name: empty
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewConfigMapGenerator(c.cfg, memFiles(genFiles))
			if err != nil {
				t.Fatal(err)
			}
			if s.Kind() != "ConfigMapGenerator" {
				t.Errorf("Kind() = %q", s.Kind())
			}
			got, r := generate(t, s)
			if got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
			if r.Gen == nil || !r.Gen.NeedsHash {
				t.Errorf("Gen = %+v, want a hash suffix", r.Gen)
			}
		})
	}
}

// TestSecretGenerator follows kustomize's TestMakeSecret.
func TestSecretGenerator(t *testing.T) {
	cases := []struct {
		name string
		cfg  loaders.GeneratorArgs
		want string
	}{
		{"env file", loaders.GeneratorArgs{Name: "envSecret", Envs: []string{"app.env"}}, `apiVersion: v1
data:
  DB_PASSWORD: cXdlcnR5
  DB_USERNAME: YWRtaW4=
kind: Secret
metadata:
  name: envSecret
type: Opaque
`},
		{"text and binary file", loaders.GeneratorArgs{Name: "fileSecret2", Files: []string{"app-init.ini", "short.bin"}}, `apiVersion: v1
data:
  app-init.ini: Rk9PPWJhcgpCQVI9YmF6Cg==
  short.bin: //0=
kind: Secret
metadata:
  name: fileSecret2
type: Opaque
`},
		{"type and labels", loaders.GeneratorArgs{Name: "literalSecret1", Literals: []string{"a=x"}, Type: "foobar",
			Options: &loaders.GeneratorOptions{Labels: map[string]string{"foo": "bar"}}}, `apiVersion: v1
data:
  a: eA==
kind: Secret
metadata:
  labels:
    foo: bar
  name: literalSecret1
type: foobar
`},
		{"empty secret keeps an empty data map", loaders.GeneratorArgs{Name: "es"}, `apiVersion: v1
data: {}
kind: Secret
metadata:
  name: es
type: Opaque
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewSecretGenerator(c.cfg, memFiles(genFiles))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := generate(t, s); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestEncodeBase64LineBreaks(t *testing.T) {
	// 51 bytes encode to 68 characters: one line, no newline.
	if got := encodeBase64(strings.Repeat("a", 51)); strings.Contains(got, "\n") || len(got) != 68 {
		t.Errorf("51 bytes: %q", got)
	}
	// 52 bytes encode to 72 characters: lines of 70, each ended.
	want := "YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYQ\n==\n"
	if got := encodeBase64(strings.Repeat("a", 52)); got != want {
		t.Errorf("52 bytes: %q, want %q", got, want)
	}
	// 105 bytes encode to exactly 140 characters: two full lines.
	got := encodeBase64(strings.Repeat("a", 105))
	if lines := strings.Split(got, "\n"); len(lines) != 3 || len(lines[0]) != 70 || len(lines[1]) != 70 || lines[2] != "" {
		t.Errorf("105 bytes: %q", got)
	}
}

func TestEnvFileParsing(t *testing.T) {
	content := "\xef\xbb\xbfFIRST=1\n# comment\n\n   INDENTED=yes\nBARE\nQ=\"kept\"\nEQ=a=b\r\n=novalue\nSP = x \n"
	got, err := envFilePairs([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	want := []kvPair{{"FIRST", "1"}, {"INDENTED", "yes"}, {"BARE", ""}, {"Q", `"kept"`}, {"EQ", "a=b"}, {"SP ", " x "}}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pair %d = %q, want %q", i, got[i], want[i])
		}
	}
	if _, err := envFilePairs([]byte("A=1\nB=\xff\n")); err == nil || !strings.Contains(err.Error(), "has invalid utf8 bytes") {
		t.Errorf("invalid UTF-8: error = %v", err)
	}
}

func TestGeneratorErrors(t *testing.T) {
	cases := []struct {
		name string
		cfg  loaders.GeneratorArgs
		want string
	}{
		{"no name", loaders.GeneratorArgs{Literals: []string{"a=b"}}, "a configmap must have a name"},
		{"repeated key", loaders.GeneratorArgs{Name: "m", Literals: []string{"a=1"}, Files: []string{"a=app.env"}},
			"configmap m illegally repeats the key `a`"},
		{"literal without =", loaders.GeneratorArgs{Name: "m", Literals: []string{"ok=1", "noequals"}},
			"loading KV pairs: literal sources [ok=1 noequals]: invalid literal source noequals, expected key=value"},
		{"literal without key", loaders.GeneratorArgs{Name: "m", Literals: []string{"=v"}},
			"invalid literal source =v, expected key=value"},
		{"file key with =", loaders.GeneratorArgs{Name: "m", Files: []string{"k=a=b"}},
			`loading KV pairs: file sources: [k=a=b]: source "k=a=b" key name or file path contains '='`},
		{"file without key", loaders.GeneratorArgs{Name: "m", Files: []string{"=app.env"}},
			`missing key name for file path "app.env" in source "=app.env"`},
		{"file without path", loaders.GeneratorArgs{Name: "m", Files: []string{"k="}},
			`missing file path for key name "k" in source "k="`},
		{"missing file", loaders.GeneratorArgs{Name: "m", Files: []string{"nope.txt"}},
			"loading KV pairs: file sources: [nope.txt]: open nope.txt: file does not exist"},
		{"missing env file", loaders.GeneratorArgs{Name: "m", Envs: []string{"app.env", "nope.env"}},
			"loading KV pairs: env source files: [app.env nope.env]: open nope.env"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewConfigMapGenerator(c.cfg, memFiles(genFiles))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestGeneratorReadError(t *testing.T) {
	denied := errors.New("security; file '/x' is not in or below '/root'")
	read := func(string) ([]byte, error) { return nil, denied }
	_, err := NewSecretGenerator(loaders.GeneratorArgs{Name: "s", Files: []string{"../x"}}, read)
	if !errors.Is(err, denied) {
		t.Errorf("error = %v, want it to wrap the loader's error", err)
	}
}

func TestGeneratorFingerprintCoversFiles(t *testing.T) {
	cfg := loaders.GeneratorArgs{Name: "m", Files: []string{"f.txt"}}
	a, err := NewConfigMapGenerator(cfg, memFiles(map[string]string{"f.txt": "one"}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewConfigMapGenerator(cfg, memFiles(map[string]string{"f.txt": "two"}))
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := NewConfigMapGenerator(cfg, memFiles(map[string]string{"f.txt": "one"}))
	if bytes.Equal(a.Fingerprint(), b.Fingerprint()) {
		t.Error("fingerprint does not change with the file's contents")
	}
	if !bytes.Equal(a.Fingerprint(), a2.Fingerprint()) {
		t.Error("fingerprint differs for equal configs")
	}
	cfg.Options = &loaders.GeneratorOptions{DisableNameSuffixHash: true}
	c, _ := NewConfigMapGenerator(cfg, memFiles(map[string]string{"f.txt": "one"}))
	if bytes.Equal(a.Fingerprint(), c.Fingerprint()) {
		t.Error("fingerprint does not cover the hash option")
	}
	s, _ := NewSecretGenerator(loaders.GeneratorArgs{Name: "m", Files: []string{"f.txt"}}, memFiles(map[string]string{"f.txt": "one"}))
	if bytes.Equal(a.Fingerprint(), s.Fingerprint()) {
		t.Error("ConfigMap and Secret generators share a fingerprint")
	}
}

func TestGeneratorFromPluginConfig(t *testing.T) {
	files := memFiles(map[string]string{"e.env": "K=V\n"})
	s, err := ConfigMapGeneratorFromConfig([]byte(`
apiVersion: builtin
kind: ConfigMapGenerator
metadata:
  name: meta-name
  namespace: meta-ns
name: top-name
env: e.env
literals: [x=1, "n=2"]
options:
  labels: {a: b}
  disableNameSuffixHash: true
`), files)
	if err != nil {
		t.Fatal(err)
	}
	got, r := generate(t, s)
	// The top-level name wins over metadata's; metadata's namespace is
	// used; `env` is ignored by the plugin, as in kustomize.
	want := `apiVersion: v1
data:
  "n": "2"
  x: "1"
kind: ConfigMap
metadata:
  labels:
    a: b
  name: top-name
  namespace: meta-ns
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if r.Gen.NeedsHash {
		t.Error("disableNameSuffixHash was ignored")
	}

	cfg, err := decodeGeneratorConfig([]byte("metadata: {name: m}\nbehavior: merge\nenvs: [a.env]\n"))
	if err != nil || cfg.Behavior != behaviorMerge || cfg.Name != "m" || len(cfg.Envs) != 1 {
		t.Errorf("decoded %+v, %v", cfg, err)
	}

	s, err = SecretGeneratorFromConfig([]byte(`
apiVersion: builtin
kind: SecretGenerator
metadata:
  name: from-meta
type: kubernetes.io/tls
literals: [k=v]
`), files)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = generate(t, s)
	want = `apiVersion: v1
data:
  k: dg==
kind: Secret
metadata:
  name: from-meta
type: kubernetes.io/tls
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestMergeGeneratorOptions(t *testing.T) {
	local := &loaders.GeneratorOptions{Labels: map[string]string{"a": "local"}}
	global := &loaders.GeneratorOptions{
		Labels:                map[string]string{"a": "global", "b": "global"},
		Annotations:           map[string]string{"c": "global"},
		DisableNameSuffixHash: true,
	}
	got := MergeGeneratorOptions(local, global)
	if got.Labels["a"] != "local" || got.Labels["b"] != "global" || got.Annotations["c"] != "global" ||
		!got.DisableNameSuffixHash || got.Immutable {
		t.Errorf("merged = %+v", got)
	}
	if len(local.Labels) != 1 {
		t.Errorf("local options modified: %+v", local)
	}
	if MergeGeneratorOptions(nil, nil) != nil {
		t.Error("nil options merged into non-nil")
	}
	if got := MergeGeneratorOptions(nil, &loaders.GeneratorOptions{Immutable: true}); got == nil || !got.Immutable {
		t.Errorf("global immutable lost: %+v", got)
	}
}

// baseList is what a base built: a generated ConfigMap renamed by a
// prefix, and a plain one read from a file.
func baseList(t *testing.T) *resource.List {
	t.Helper()
	rs, err := resyaml.Decode([]byte(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  labels: {base: "yes", shared: base}
  annotations: {bann: x}
data:
  a: "1"
  b: "2"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
data:
  num: 5
binaryData:
  bin: aGVsbG8=
`))
	if err != nil {
		t.Fatal(err)
	}
	rs[0].Gen = &resource.Generated{NeedsHash: true}
	rs[0].RememberID()
	rs[0].SetName("p-cm")
	rs[0].AddNamePrefix("p-")
	l := resource.NewList(rs...)
	l.Freeze()
	return l
}

func runOn(t *testing.T, s Stage, l *resource.List) string {
	t.Helper()
	before, _ := output.Marshal(l.All())
	out := l.Copy()
	if err := s.Run(context.Background(), out); err != nil {
		t.Fatalf("run: %v", err)
	}
	if after, _ := output.Marshal(l.All()); !bytes.Equal(before, after) {
		t.Errorf("the input list was modified:\n%s", after)
	}
	b, err := output.Marshal(out.All())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGeneratorMerge(t *testing.T) {
	l := baseList(t)
	s, err := NewConfigMapGenerator(loaders.GeneratorArgs{Name: "cm", Behavior: "merge", Literals: []string{"b=3", "c=4"},
		Options: &loaders.GeneratorOptions{Labels: map[string]string{"shared": "overlay"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := l.Copy()
	if err := s.Run(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	b, _ := output.Marshal(out.All())
	want := `apiVersion: v1
data:
  a: "1"
  b: "3"
  c: "4"
kind: ConfigMap
metadata:
  annotations:
    bann: x
    internal.config.kubernetes.io/prefixes: p-
  labels:
    base: "yes"
    shared: overlay
  name: p-cm
---
apiVersion: v1
binaryData:
  bin: aGVsbG8=
data:
  num: 5
kind: ConfigMap
metadata:
  name: plain
`
	if string(b) != want {
		t.Errorf("got:\n%s\nwant:\n%s", b, want)
	}
	r := out.At(0)
	if prev := r.PrevIDs(); len(prev) != 1 || prev[0].Name != "cm" {
		t.Errorf("previous IDs = %v, want the base's", prev)
	}
	if r.Gen == nil || !r.Gen.NeedsHash {
		t.Errorf("Gen = %+v, want the hash kept", r.Gen)
	}
	if runOn(t, s, l) != want {
		t.Error("run over a frozen list differs")
	}
}

func TestGeneratorMergeIntoPlainObject(t *testing.T) {
	s, err := NewConfigMapGenerator(loaders.GeneratorArgs{Name: "plain", Behavior: "merge", Literals: []string{"more=7"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := baseList(t)
	got := runOn(t, s, l)
	// Data values become strings; binaryData is kept.
	want := `apiVersion: v1
binaryData:
  bin: aGVsbG8=
data:
  more: "7"
  num: "5"
kind: ConfigMap
metadata:
  name: plain
`
	if !strings.HasSuffix(got, want) {
		t.Errorf("got:\n%s\nwant it to end with:\n%s", got, want)
	}
	out := l.Copy()
	_ = s.Run(context.Background(), out)
	if g := out.At(1).Gen; g != nil {
		// The base object had no generator options: no hash suffix.
		t.Errorf("Gen = %+v, want nil", g)
	}
}

func TestGeneratorReplace(t *testing.T) {
	s, err := NewConfigMapGenerator(loaders.GeneratorArgs{Name: "cm", Behavior: "replace", Literals: []string{"new=1"},
		Options: &loaders.GeneratorOptions{DisableNameSuffixHash: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := baseList(t)
	out := l.Copy()
	if err := s.Run(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	r := out.At(0)
	if r.Name() != "p-cm" || r.Labels()["base"] != "yes" {
		t.Errorf("replaced object lost the base's name or labels: %v", r.Object())
	}
	if d := resource.StringMap(r.Object()["data"]); len(d) != 1 || d["new"] != "1" {
		t.Errorf("data = %v, want only the new data", d)
	}
	if r.Gen == nil || r.Gen.NeedsHash {
		t.Errorf("Gen = %+v: the hash suffix needs both sides to want it", r.Gen)
	}
}

func TestGeneratorBehaviorErrors(t *testing.T) {
	cases := []struct {
		name, behavior, cmName, want string
	}{
		{"create over existing", "", "cm",
			`merging from generator ConfigMapGenerator "cm": id resid.ResId{Gvk:resid.Gvk{Group:"", Version:"v1", Kind:"ConfigMap", isClusterScoped:false}, Name:"cm", Namespace:""} exists; can not use behavior: 'unspecified', behavior must be merge or replace`},
		{"explicit create", "create", "plain", "can not use behavior: 'create', behavior must be merge or replace"},
		{"unknown behavior acts as create", "upsert", "plain", "can not use behavior: 'unspecified'"},
		{"merge into nothing", "merge", "nope",
			`id resid.ResId{Gvk:resid.Gvk{Group:"", Version:"v1", Kind:"ConfigMap", isClusterScoped:false}, Name:"nope", Namespace:""} does not exist; cannot merge or replace`},
		{"replace nothing", "replace", "nope", "does not exist; cannot merge or replace"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewConfigMapGenerator(loaders.GeneratorArgs{Name: c.cmName, Behavior: c.behavior}, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Run(context.Background(), baseList(t).Copy())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestGeneratorAmbiguousMerge(t *testing.T) {
	rs, err := resyaml.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"a-", "b-"} {
		rs[i].RememberID()
		rs[i].SetName(p + "x")
	}
	s, _ := NewConfigMapGenerator(loaders.GeneratorArgs{Name: "x", Behavior: "merge"}, nil)
	err = s.Run(context.Background(), resource.NewList(rs...))
	if err == nil || !strings.Contains(err.Error(), "found multiple objects") || !strings.Contains(err.Error(), "b-x") {
		t.Errorf("error = %v, want one naming both candidates", err)
	}
}

func TestGeneratorRunsTwiceIndependently(t *testing.T) {
	s, _ := NewConfigMapGenerator(loaders.GeneratorArgs{Name: "m", Literals: []string{"a=1"}}, nil)
	l1, l2 := resource.NewList(), resource.NewList()
	if err := s.Run(context.Background(), l1); err != nil {
		t.Fatal(err)
	}
	l1.Edit(0).SetName("changed")
	if err := s.Run(context.Background(), l2); err != nil {
		t.Fatal(err)
	}
	if l2.At(0).Name() != "m" {
		t.Errorf("a second run saw the first run's edit: %s", l2.At(0).Name())
	}
}

func TestIAMPolicyGenerator(t *testing.T) {
	s, err := IAMPolicyGeneratorFromConfig([]byte(`
apiVersion: builtin
kind: IAMPolicyGenerator
metadata:
  name: g
cloud: gke
kubernetesService:
  namespace: k8s-namespace
  name: k8s-sa-name
serviceAccount:
  name: gsa-name
  projectId: project-id
`))
	if err != nil {
		t.Fatal(err)
	}
	got, r := generate(t, s)
	want := `apiVersion: v1
kind: ServiceAccount
metadata:
  annotations:
    iam.gke.io/gcp-service-account: gsa-name@project-id.iam.gserviceaccount.com
  name: k8s-sa-name
  namespace: k8s-namespace
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if r.Gen != nil {
		t.Errorf("Gen = %+v: the ServiceAccount takes no hash", r.Gen)
	}
	if _, err := IAMPolicyGeneratorFromConfig([]byte("cloud: aws\n")); err == nil || err.Error() != "cloud provider aws not supported yet" {
		t.Errorf("error = %v", err)
	}
}
