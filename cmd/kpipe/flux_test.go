package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fluxKsFile = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: flux-system
spec:
  interval: 10m
  path: ./src
  targetNamespace: web
  postBuild:
    substitute:
      TAG: "1.27"
  sourceRef:
    kind: GitRepository
    name: flux-system
`

// kpipe flux build kustomization is flux's command: its flags, its
// output, its refusals ("✗ " and exit 1), and it writes nothing into the
// tree.
func TestFluxBuildKustomization(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"ks.yaml":         fluxKsFile,
		"src/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:${TAG}\n",
	})
	t.Chdir(dir)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	code, out, errOut := kpipe(t, "flux", "build", "kustomization", "app", "--path", "./src", "--kustomization-file", "./ks.yaml", "--dry-run")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"image: nginx:1.27\n", "namespace: web\n", "kustomize.toolkit.fluxcd.io/name: app\n", "kustomize.toolkit.fluxcd.io/namespace: flux-system\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasSuffix(out, "---\n") {
		t.Errorf("flux ends every document with ---:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "src/kustomization.yaml")); !os.IsNotExist(err) {
		t.Errorf("kpipe wrote into --path: %v", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"app", "--path", "./src", "--bogus"}, "✗ unknown flag: --bogus\n"},
		{[]string{"--path", "./src"}, "✗ kustomization name is required\n"},
		{[]string{"app", "--path", "./nope", "--kustomization-file", "ks.yaml", "--dry-run"}, "✗ invalid resource path \"" + filepath.Join(dir, "nope") + "\"\n"},
		{[]string{"app", "--path", "./src", "--kustomization-file", "ks.yaml"}, "✗ kpipe flux builds offline: add --dry-run"},
		{[]string{"other", "--path", "./src", "--kustomization-file", "ks.yaml", "--dry-run"}, "✗ failed to get kustomization object: failed find kustomization with name 'other' and namespace 'flux-system' in file 'ks.yaml'\n"},
	} {
		code, out, errOut := kpipe(t, append([]string{"flux", "build", "ks"}, c.args...)...)
		if code != 1 || out != "" || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.args, code, out, errOut, c.want)
		}
	}
}

// kpipe flux build-all writes one output per Flux Kustomization, takes an
// unchanged one from the cache, and --check names what differs.
func TestFluxBuildAll(t *testing.T) {
	dir := t.TempDir()
	child := strings.NewReplacer("name: app", "name: child", "path: ./src", "path: ./child").Replace(fluxKsFile)
	writeFiles(t, dir, map[string]string{
		".git/HEAD":              "ref: refs/heads/main\n",
		"clusters/prod/app.yaml": fluxKsFile,
		"src/deploy.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  tag: ${TAG}\n",
		"src/child.yaml":         child,
		"child/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
	})
	t.Chdir(dir)
	cacheDir := t.TempDir()
	code, _, errOut := kpipe(t, "flux", "build-all", "clusters/prod", "--out-dir", "out", "--cache-dir", cacheDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "rendered 3 Flux Kustomizations (0 failed, 3 changed, 0 up to date)") {
		t.Errorf("summary: %s", errOut)
	}
	for _, f := range []string{"out/flux-system/flux-system.yaml", "out/flux-system/app.yaml", "out/web/child.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	code, _, errOut = kpipe(t, "flux", "build-all", "clusters/prod", "--out-dir", "out", "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(errOut, "(0 failed, 0 changed, 3 up to date)") {
		t.Errorf("second run: exit %d: %s", code, errOut)
	}
	writeFiles(t, dir, map[string]string{"child/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c2\n"})
	code, _, errOut = kpipe(t, "flux", "build-all", "clusters/prod", "--out-dir", "out", "--check", "--cache-dir", cacheDir)
	if code != 1 || !strings.Contains(errOut, "out of date: out/web/child.yaml (the output of Kustomization web/child)") {
		t.Errorf("--check after an edit: exit %d: %s", code, errOut)
	}
}
