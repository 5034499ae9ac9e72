package plugins

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/resource"
)

// buildGoPlugin builds testdata/goplugin into path with the flags the test
// binary was built with, or skips the test when that cannot work.
func buildGoPlugin(t *testing.T, path string) {
	t.Helper()
	if !goPluginSupport {
		t.Skip("built with -tags nogoplugin")
	}
	if testing.CoverMode() != "" {
		t.Skip("Go plugins must be built with the host's flags; skipped under -cover")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the plugin with")
	}
	if out, err := exec.Command("go", "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skip("cgo is disabled: Go plugins cannot be built or loaded")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc: Go plugins need cgo")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"build", "-buildmode=plugin", "-o", path}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./testdata/goplugin")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the Go plugin: %v\n%s", err, out)
	}
}

// A Go plugin found as <Kind>.so generates and transforms through package
// pluginapi; its digest is in the stage's fingerprint; a panic is an error.
func TestGoPlugin(t *testing.T) {
	dir := t.TempDir()
	so := filepath.Join(dir, ".config", "kustomize", "plugin", "example.com", "v1", "labeler", "Labeler.so")
	buildGoPlugin(t, so)

	gen, err := load(t, dir, "apiVersion: example.com/v1\nkind: Labeler\nmetadata:\n  name: gen\nname: made\nvalue: x\n", Generator)
	if err != nil {
		t.Fatal(err)
	}
	if gen.Kind() != "GoPlugin" {
		t.Errorf("kind %s", gen.Kind())
	}
	rs := resource.NewList()
	if err := gen.Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: v1\ndata:\n  files: 1\n  value: x\nkind: ConfigMap\nmetadata:\n  name: made\n"
	if got := render(t, rs); got != want {
		t.Errorf("generated\n%s\nwant\n%s", got, want)
	}

	tr, err := load(t, dir, "apiVersion: example.com/v1\nkind: Labeler\nmetadata:\n  name: tr\nvalue: blue\n", Transformer)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	want = "apiVersion: v1\ndata:\n  files: 1\n  value: x\nkind: ConfigMap\nmetadata:\n  labels:\n    team: blue\n  name: made\n"
	if got := render(t, rs); got != want {
		t.Errorf("transformed\n%s\nwant\n%s", got, want)
	}

	// The fingerprint covers the .so's content.
	before := string(tr.Fingerprint())
	data, err := os.ReadFile(so)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), ".config", "kustomize", "plugin", "example.com", "v1", "labeler", "Labeler.so")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, append(data, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if tr.(*plugin).digest == nil || string(tr.Fingerprint()) != before {
		t.Error("fingerprint unstable")
	}
	tr.(*plugin).digest, _ = fileDigest(other)
	if string(tr.Fingerprint()) == before {
		t.Error("the fingerprint does not cover the .so's digest")
	}

	bad, err := load(t, dir, "apiVersion: example.com/v1\nkind: Labeler\nmetadata:\n  name: p\nvalue: panic\n", Transformer)
	if err != nil {
		t.Fatal(err)
	}
	err = bad.Run(context.Background(), rs)
	if err == nil || !strings.Contains(err.Error(), "panic: asked to") || !strings.Contains(err.Error(), "Labeler.so") || !strings.Contains(err.Error(), "config.yaml") {
		t.Errorf("panicking plugin: error = %v", err)
	}
}

// A kpipe built without cgo (the release archives, the README's install)
// cannot load a Go plugin: the error says so and gives the build line that
// can (package plugin's answer without cgo is "plugin: not implemented").
func TestGoPluginWithoutCgoNamesTheBuild(t *testing.T) {
	hint := openHint("plugin: not implemented")
	if !strings.Contains(hint, "without cgo") || !strings.Contains(hint, "`CGO_ENABLED=1 go install ./cmd/kpipe`") {
		t.Errorf("hint for a kpipe without cgo: %q", hint)
	}
	if openHint("plugin.Open(x): realpath failed") != "" {
		t.Error("a hint for an error it does not know")
	}
}
