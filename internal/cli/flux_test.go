package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/helmtest"

	"github.com/kpipe/kpipe/internal/genrepo"
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

// kpipe flux build-all renders HelmReleases only with --enable-helm:
// without it, a HelmRelease is an object of its Kustomization's output and
// helm never runs; with it, each has its own output, and one kpipe cannot
// render (an OCI artifact pinned by digest) fails naming itself and why.
func TestFluxBuildAllHelmReleases(t *testing.T) {
	helm := helmtest.V3(t)
	dir := t.TempDir()
	ks := strings.ReplaceAll(strings.ReplaceAll(fluxKsFile, "./src", "./apps"), "  targetNamespace: web\n", "")
	writeFiles(t, dir, map[string]string{
		"clusters/prod/apps.yaml":           ks,
		"apps/hr.yaml":                      "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: local, namespace: web}\nspec:\n  interval: 1h\n  chart:\n    spec:\n      chart: ./charts/c\n      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}\n  values: {msg: hi}\n",
		"apps/oci.yaml":                     "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: podinfo, namespace: web}\nspec: {interval: 1h, url: oci://ghcr.io/stefanprodan/charts/podinfo, ref: {digest: \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"}}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: podinfo, namespace: web}\nspec:\n  interval: 1h\n  chartRef: {kind: OCIRepository, name: podinfo}\n",
		"charts/c/Chart.yaml":               "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"charts/c/templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  msg: {{ .Values.msg }}\n",
	})
	t.Chdir(dir)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	code, _, errOut := kpipe(t, "flux", "build-all", "clusters/prod", "--source-root", ".", "--out-dir", "out")
	if code != 0 {
		t.Fatalf("without --enable-helm: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat("out/web/local.helmrelease.yaml"); !os.IsNotExist(err) {
		t.Fatalf("without --enable-helm a HelmRelease was rendered: %v", err)
	}
	code, _, errOut = kpipe(t, "flux", "build-all", "clusters/prod", "--source-root", ".", "--out-dir", "out", "--enable-helm", "--helm-command", helm)
	if code != 1 || !strings.Contains(errOut, "1 of 4 Flux Kustomizations and HelmReleases failed") ||
		!strings.Contains(errOut, "HelmRelease web/podinfo: its chart is the artifact of OCIRepository web/podinfo (oci://ghcr.io/stefanprodan/charts/podinfo) at digest sha256:0000") {
		t.Fatalf("with --enable-helm: exit %d:\n%s", code, errOut)
	}
	data, err := os.ReadFile("out/web/local.helmrelease.yaml")
	if err != nil || !strings.Contains(string(data), "msg: hi\n") || !strings.Contains(string(data), "helm.toolkit.fluxcd.io/name: local\n") {
		t.Fatalf("the in-repository chart's HelmRelease: %v\n%s", err, data)
	}
	if _, err := os.Stat("out/web/podinfo.helmrelease.yaml"); !os.IsNotExist(err) {
		t.Fatalf("the failed HelmRelease has an output: %v", err)
	}
	// --check names an edited HelmRelease output by its kind.
	if err := os.WriteFile("out/web/local.helmrelease.yaml", append(data, "# edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = kpipe(t, "flux", "build-all", "clusters/prod", "--source-root", ".", "--out-dir", "out", "--enable-helm", "--helm-command", helm, "--check")
	if code != 1 || !strings.Contains(errOut, "out of date: out/web/local.helmrelease.yaml (the output of HelmRelease web/local)") {
		t.Fatalf("--check after an edit of a HelmRelease's output: exit %d:\n%s", code, errOut)
	}
}

// kpipe diff --flux and affected --flux compare a cluster's Flux
// Kustomizations between a commit and the working tree: the one whose
// rendering an edit changes is named, with the path that reaches it, in
// lines and JSON; --flux with --argocd is refused.
func TestFluxDiffAndAffected(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git (apt-get install git)")
	}
	dir := t.TempDir()
	child := strings.NewReplacer("name: app", "name: child", "path: ./src", "path: ./child").Replace(fluxKsFile)
	writeFiles(t, dir, map[string]string{
		"clusters/prod/app.yaml": fluxKsFile,
		"src/deploy.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  tag: ${TAG}\n",
		"src/child.yaml":         child,
		"child/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v1\n",
	})
	if err := genrepo.InitGit(dir); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	writeFiles(t, dir, map[string]string{"child/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v2\n"})
	cacheDir := t.TempDir()

	code, out, errOut := kpipe(t, "diff", "--flux", "clusters/prod", "--base", "HEAD", "--cache-dir", cacheDir, "--color", "never")
	if code != 1 || !strings.Contains(out, "web/child") || strings.Contains(out, "flux-system/app") || !strings.Contains(out, "+  k: v2") {
		t.Errorf("diff --flux: exit %d, want 1 and web/child alone changed:\n%s%s", code, out, errOut)
	}
	code, out, errOut = kpipe(t, "affected", "--flux", "--since", "HEAD", "clusters/prod", "--cache-dir", cacheDir)
	if code != 0 || out != "web/child\n" {
		t.Errorf("affected --flux: exit %d, want 0 and web/child:\n%s%s", code, out, errOut)
	}
	code, out, errOut = kpipe(t, "affected", "--flux", "--since", "HEAD", "clusters/prod", "--cache-dir", cacheDir, "--format", "json")
	var listed struct {
		Since          string
		Kustomizations []struct {
			Kustomization, Status string
			Because               []string
		}
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || code != 0 || listed.Since != "HEAD" || len(listed.Kustomizations) != 1 ||
		listed.Kustomizations[0].Kustomization != "web/child" || !strings.Contains(strings.Join(listed.Kustomizations[0].Because, " "), "child/cm.yaml") {
		t.Errorf("affected --flux --format json: exit %d, %v:\n%s%s", code, err, out, errOut)
	}
	code, _, errOut = kpipe(t, "affected", "--flux", "--argocd", "--since", "HEAD", "clusters/prod")
	if code == 0 || !strings.Contains(errOut, "--argocd and --flux compare different units") {
		t.Errorf("--flux with --argocd: exit %d: %s", code, errOut)
	}
}
