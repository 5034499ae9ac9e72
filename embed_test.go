package kpipe_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kpipe/kpipe"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
)

// TestEmbedderStage builds and runs testdata/embed, a program in a module
// of its own that defines a stage (TeamLabel) and builds an overlay that
// lists it under `transformers:`, as code outside kpipe would. Its output
// must be the labels a builtin LabelTransformer adds; built again with
// the same cache it must be the same bytes without the stage running; with
// a setting that changes the stage's fingerprint the stage runs again and
// the output follows; and without a cache it is the cached output.
func TestEmbedderStage(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build testdata/embed (install Go: https://go.dev/dl/)")
	}
	// Read what the build reads, so that go test's cache (which knows
	// the files a test opens, not what the go command reads) runs this
	// again when the example changes.
	for _, f := range []string{"main.go", "go.mod", "go.sum"} {
		if _, err := os.ReadFile(filepath.Join("testdata", "embed", f)); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "embed")
	build := exec.Command(goCmd, "build", "-o", bin, ".")
	build.Dir = filepath.Join("testdata", "embed")
	// The example's go.sum names every module it needs, all of which this
	// module's build has fetched: nothing is downloaded.
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build testdata/embed: %v\n%s", err, out)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, append(args, filepath.Join("testdata", "embed", "tree", "overlay"))...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("embed %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}

	first, log := run("-cache", cache)
	if log != "runs: 1\n" {
		t.Errorf("first build: %q, want the stage run once", log)
	}
	if want := builtinLabels(t, "payments"); first != want {
		t.Errorf("first build:\n%s\nwant what a builtin LabelTransformer gives:\n%s", first, want)
	}
	again, log := run("-cache", cache)
	if log != "runs: 0\n" || again != first {
		t.Errorf("second build with the cache: %q (want no run), output changed: %v", log, again != first)
	}
	other, log := run("-cache", cache, "-prefix", "eu-")
	if log != "runs: 1\n" || other != builtinLabels(t, "eu-payments") {
		t.Errorf("another fingerprint: %q (want a run), output:\n%s", log, other)
	}
	if uncached, _ := run(); uncached != first {
		t.Errorf("without a cache:\n%s\nwith one:\n%s", uncached, first)
	}
}

// builtinLabels renders the example's overlay with a builtin
// LabelTransformer adding team=value where the example lists TeamLabel.
func builtinLabels(t *testing.T, value string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"base/kustomization.yaml", "base/deployment.yaml", "base/service.yaml", "overlay/kustomization.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", "embed", "tree", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	label := "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: team\nlabels:\n  team: " + value +
		"\nfieldSpecs:\n- path: metadata/labels\n  create: true\n"
	if err := os.WriteFile(filepath.Join(dir, "overlay", "team.yaml"), []byte(label), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := kpipe.New(kpipe.Options{}).Build(context.Background(), filepath.Join(dir, "overlay"))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// generatedCM is a stage that appends a ConfigMap named after its config.
type generatedCM struct{ Name string }

func (g *generatedCM) Kind() string        { return "ConfigMapMaker" }
func (g *generatedCM) Fingerprint() []byte { return stages.Fingerprint(g.Kind(), g) }
func (g *generatedCM) Run(_ context.Context, rs *resource.List) error {
	return rs.Append(resource.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": g.Name}, "data": map[string]any{"made": "here"}}))
}

// TestDefinedStageUses: a defined stage serves under `generators:` too,
// with the kustomization's namePrefix applied after it; under
// `validators:` a config of its kind is an external plugin's (refused
// without --enable-alpha-plugins); and a definition no config could
// select is refused.
func TestDefinedStageUses(t *testing.T) {
	def := stages.Definition{APIVersion: "example.com/v1", Kind: "ConfigMapMaker",
		New: func(c *resource.Resource) (stages.Stage, error) { return &generatedCM{Name: c.Name()}, nil }}
	r := kpipe.New(kpipe.Options{Stages: []stages.Definition{def}})
	gen := "apiVersion: example.com/v1\nkind: ConfigMapMaker\nmetadata:\n  name: made\n"
	tree := fstest.MapFS{
		"gen/kustomization.yaml": {Data: []byte("namePrefix: p-\ngenerators:\n- gen.yaml\n")},
		"gen/gen.yaml":           {Data: []byte(gen)},
		"val/kustomization.yaml": {Data: []byte("resources: [cm.yaml]\nvalidators:\n- gen.yaml\n")},
		"val/cm.yaml":            {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")},
		"val/gen.yaml":           {Data: []byte(gen)},
	}
	out, err := r.BuildFS(context.Background(), tree, "gen")
	if want := "apiVersion: v1\ndata:\n  made: here\nkind: ConfigMap\nmetadata:\n  name: p-made\n"; err != nil || string(out) != want {
		t.Errorf("generators: %v\n%s", err, out)
	}
	if _, err := r.BuildFS(context.Background(), tree, "val"); err == nil || !strings.Contains(err.Error(), "external plugins disabled") {
		t.Errorf("validators: %v", err)
	}
	for _, bad := range []stages.Definition{{APIVersion: "builtin", Kind: "X", New: def.New}, {Kind: "X", New: def.New}, {APIVersion: "a/v1", Kind: "X"}} {
		_, err := kpipe.New(kpipe.Options{Stages: []stages.Definition{bad}}).BuildFS(context.Background(), tree, "gen")
		if err == nil || !strings.Contains(err.Error(), "Options.Stages[0]") {
			t.Errorf("definition %+v: %v", bad, err)
		}
	}
}
