package plugins

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/resource"
)

// buildGoPlugin builds testdata/goplugin into path with the flags the test
// binary was built with, or skips the test when that cannot work.
func buildGoPlugin(t *testing.T, path string) {
	t.Helper()
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
	if !strings.Contains(hint, "without cgo") || !strings.Contains(hint, "`CGO_ENABLED=1 go install ./cmd/kpipe-full`") {
		t.Errorf("hint for a kpipe without cgo: %q", hint)
	}
	if openHint("plugin.Open(x): realpath failed") != "" {
		t.Error("a hint for an error it does not know")
	}
}

// A program that passes no opener (Options.GoPlugins nil) cannot load a Go
// plugin: the error says so, names the .so and wraps ErrNoGoPlugins; exec
// plugins still run.
func TestGoPluginWithoutOpener(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, ".config", "kustomize", "plugin", "example.com", "v1")
	so := filepath.Join(home, "gen", "Gen.so")
	writeExec(t, so, "not really a plugin")
	writeExec(t, filepath.Join(home, "exe", "Exe"), "#!/bin/sh\nprintf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: made\\n'\n")
	opts := Options{EnableAlpha: true, Environ: []string{"HOME=" + dir}}
	config := func(kind string) Config {
		return Config{Object: decodeOne(t, "apiVersion: example.com/v1\nkind: "+kind+"\nmetadata:\n  name: g\n"), Role: Generator, Dir: dir, Source: "config.yaml"}
	}
	_, err := Load(config("Gen"), opts)
	if !errors.Is(err, ErrNoGoPlugins) || !strings.Contains(err.Error(), "Go plugin "+so) ||
		!strings.Contains(err.Error(), "cannot load the Go plugin: this kpipe binary cannot load Go plugins") {
		t.Errorf("Go plugin without an opener: error = %v", err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	exe, err := Load(config("Exe"), opts)
	if err != nil {
		t.Fatalf("exec plugin without a Go plugin opener: %v", err)
	}
	rs := resource.NewList()
	if err := exe.Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	if got, want := render(t, rs), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: made\n"; got != want {
		t.Errorf("exec plugin generated\n%s\nwant\n%s", got, want)
	}
}
