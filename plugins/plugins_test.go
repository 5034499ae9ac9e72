package plugins

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/plugins/goplugin"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
)

func decodeOne(t *testing.T, y string) *resource.Resource {
	t.Helper()
	rs, err := resyaml.Decode([]byte(y))
	if err != nil || len(rs) != 1 {
		t.Fatalf("decoding %q: %v", y, err)
	}
	return rs[0]
}

func writeExec(t *testing.T, path, script string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, dir, config string, role Role, env ...string) (stages.Stage, error) {
	t.Helper()
	return Load(Config{Object: decodeOne(t, config), Role: role, Dir: dir, Source: "config.yaml",
		Read: func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, p)) }},
		Options{EnableAlpha: true, EnableExec: true, Environ: append([]string{"HOME=" + dir}, env...), GoPlugins: goplugin.Open})
}

func render(t *testing.T, rs *resource.List) string {
	t.Helper()
	y, err := output.Marshal(rs.All())
	if err != nil {
		t.Fatal(err)
	}
	return string(y)
}

func TestEnvironDropsShellState(t *testing.T) {
	got := environ([]string{"A=1", "SHLVL=2", "OLDPWD=/x", "PWD=/y", "_=/bin/x", "B=0"}, "/dir", "B=2")
	want := []string{"A=1", "B=2", "PWD=/dir"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("environ = %q, want %q", got, want)
	}
}

func TestFunctionSpecSpellings(t *testing.T) {
	for _, c := range []struct{ config, path, image string }{
		{"kind: K\nmetadata:\n  name: n\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./a.sh\n", "./a.sh", ""},
		{"kind: K\nmetadata:\n  name: n\n  annotations:\n    config.k8s.io/function: |\n      container:\n        image: img:1\n", "", "img:1"},
		{"kind: K\nmetadata:\n  name: n\n  configFn:\n    exec:\n      path: b.sh\n", "b.sh", ""},
		{"kind: K\nmetadata:\n  name: n\n  annotations:\n    config.kubernetes.io/container: img:2\n", "", "img:2"},
	} {
		spec, ok, err := functionSpec(decodeOne(t, c.config))
		if err != nil || !ok || spec.Exec.Path != c.path || spec.Container.Image != c.image {
			t.Errorf("functionSpec(%q) = %+v, %v, %v", c.config, spec, ok, err)
		}
	}
	if _, ok, _ := functionSpec(decodeOne(t, "apiVersion: a/v1\nkind: K\nmetadata:\n  name: n\n")); ok {
		t.Error("a plain config read as a function")
	}
}

func TestPluginHomeOrder(t *testing.T) {
	dir := t.TempDir()
	custom := filepath.Join(dir, "custom")
	xdg := filepath.Join(dir, "xdg")
	dotConfig := filepath.Join(dir, ".config", "kustomize", "plugin")
	env := []string{"HOME=" + dir, "XDG_CONFIG_HOME=" + xdg, "KUSTOMIZE_PLUGIN_HOME=" + custom}
	if got := pluginHome(env); got != filepath.Join(xdg, "kustomize", "plugin") {
		t.Errorf("nothing exists: home %s, want the XDG one", got)
	}
	for _, d := range []string{custom, filepath.Join(xdg, "kustomize", "plugin"), dotConfig} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got := pluginHome(env); got != custom {
		t.Errorf("home %s, want $KUSTOMIZE_PLUGIN_HOME %s", got, custom)
	}
	if got := pluginHome(env[:1]); got != dotConfig {
		t.Errorf("home %s, want %s", got, dotConfig)
	}
}

// A Go plugin is found where kustomize looks for it; one that does not
// load is a clear error.
func TestGoPluginLookup(t *testing.T) {
	dir := t.TempDir()
	so := filepath.Join(dir, ".config", "kustomize", "plugin", "example.com", "v1", "gen", "Gen.so")
	writeExec(t, so, "not really a plugin")
	_, err := load(t, dir, "apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: g\n", Generator)
	if err == nil || !strings.Contains(err.Error(), "Go plugin "+so) || !strings.Contains(err.Error(), "cannot load the Go plugin") {
		t.Errorf("error = %v", err)
	}
	_, err = load(t, dir, "kind: Gen\nmetadata:\n  name: g\n", Generator)
	if err == nil || !strings.Contains(err.Error(), "no apiVersion") {
		t.Errorf("config without apiVersion: error = %v", err)
	}
}

// A generator's generator-option annotations become the object's options:
// merge behavior merges into the existing ConfigMap.
func TestGeneratorBehaviorMerge(t *testing.T) {
	dir := t.TempDir()
	writeExec(t, filepath.Join(dir, ".config", "kustomize", "plugin", "example.com", "v1", "gen", "Gen"), `#!/bin/sh
cat <<END
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  annotations:
    kustomize.config.k8s.io/behavior: merge
data:
  b: "2"
END
`)
	s, err := load(t, dir, "apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: g\n", Generator)
	if err != nil {
		t.Fatal(err)
	}
	rs := resource.NewList(decodeOne(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n"))
	if err := s.Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	got := render(t, rs)
	want := "apiVersion: v1\ndata:\n  a: \"1\"\n  b: \"2\"\nkind: ConfigMap\nmetadata:\n  name: cm\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// With origin annotations, the generated object is annotated before
	// it is merged (not run on an empty list, where merge would fail).
	s, err = stages.GeneratorWithOrigin(s, &stages.Origin{ConfiguredIn: "gen.yaml", ConfiguredBy: stages.OriginRef{Kind: "Gen", Name: "g"}})
	if err != nil {
		t.Fatal(err)
	}
	rs = resource.NewList(decodeOne(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n"))
	if err := s.Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	if got := render(t, rs); !strings.Contains(got, "configuredIn: gen.yaml") || !strings.Contains(got, `b: "2"`) {
		t.Errorf("with origin: got\n%s", got)
	}
}

// Container functions run with docker or podman from PATH, without
// network, as nobody; without either, a clear error.
func TestContainerFunction(t *testing.T) {
	dir := t.TempDir()
	config := "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: f\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: example.com/fn:1\n        envs: [A=1]\n"
	_, err := load(t, dir, config, Transformer, "PATH="+filepath.Join(dir, "nowhere"))
	if err == nil || !strings.Contains(err.Error(), "no container engine found") || !strings.Contains(err.Error(), "example.com/fn:1") {
		t.Errorf("no engine: error = %v", err)
	}
	bin := filepath.Join(dir, "bin")
	writeExec(t, filepath.Join(bin, "podman"), `#!/bin/sh
case "$*" in
"run --rm -i --network none --user nobody --security-opt=no-new-privileges -e A=1 -e B=2 example.com/fn:1") ;;
*) echo "unexpected arguments: $*" >&2; exit 1 ;;
esac
sed 's/name: x$/name: z/'
`)
	s, err := Load(Config{Object: decodeOne(t, config), Role: Transformer, Dir: dir, Source: "config.yaml"},
		Options{EnableAlpha: true, Env: []string{"B"}, Environ: []string{"PATH=" + bin + ":/usr/bin:/bin", "B=2"}})
	if err != nil {
		t.Fatal(err)
	}
	rs := resource.NewList(decodeOne(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"))
	if err := s.Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	// The function runner gives new objects a path, which the build strips.
	want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    config.kubernetes.io/path: configmap_z.yaml\n    internal.config.kubernetes.io/path: configmap_z.yaml\n  name: z\n"
	if got := render(t, rs); got != want {
		t.Errorf("got\n%s", got)
	}
}

// TestTransformerOutputByID: a transformer's output replaces the input
// objects with the same IDs, in their places, adds the new ones at the
// end and drops those it did not print, over thousands of objects; an
// object printed twice is an error.
func TestTransformerOutputByID(t *testing.T) {
	dir := t.TempDir()
	// Drop cm7 (whose ID annotation names it too), change cm3, add one.
	writeExec(t, filepath.Join(dir, ".config", "kustomize", "plugin", "example.com", "v1", "tx", "Tx"), `#!/bin/sh
awk 'BEGIN { RS = "---\n"; ORS = "---\n" } $0 !~ /name: cm7\n/ { sub(/v: "3"/, "v: changed"); print }'
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added\n'
`)
	s, err := load(t, dir, "apiVersion: example.com/v1\nkind: Tx\nmetadata:\n  name: t\n", Transformer)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	var in strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&in, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\ndata:\n  v: \"%d\"\n", i, i)
	}
	objs, err := resyaml.Decode([]byte(in.String()))
	if err != nil {
		t.Fatal(err)
	}
	rs := resource.NewList(objs...)
	rs.Freeze()
	if err := s.Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	if rs.Len() != n {
		t.Fatalf("%d objects, want %d", rs.Len(), n)
	}
	for i, r := range rs.All() {
		want := fmt.Sprintf("cm%d", i)
		if i >= 7 {
			want = fmt.Sprintf("cm%d", i+1)
		}
		if i == n-1 {
			want = "added"
		}
		if r.Name() != want {
			t.Fatalf("object %d is %s, want %s", i, r.Name(), want)
		}
		if _, ok := r.Annotation(idAnnotation); ok {
			t.Fatalf("%s keeps the ID annotation", r.Name())
		}
	}
	if v := resource.LookupString(rs.At(3).Object(), "data", "v"); v != "changed" {
		t.Errorf("cm3's v is %q, want the transformer's", v)
	}

	writeExec(t, filepath.Join(dir, ".config", "kustomize", "plugin", "example.com", "v1", "dup", "Dup"), `#!/bin/sh
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: twice\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: twice\n  namespace: default\n'
`)
	s, err = load(t, dir, "apiVersion: example.com/v1\nkind: Dup\nmetadata:\n  name: d\n", Transformer)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run(context.Background(), resource.NewList())
	if err == nil || !strings.Contains(err.Error(), "plugin generated duplicate resource") {
		t.Errorf("printing one object twice: %v", err)
	}
}
