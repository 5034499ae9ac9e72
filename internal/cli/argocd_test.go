package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/genrepo"
)

const argoRepoURL = "https://example.com/team/config.git"

// argoRepo writes a small monorepo (2 apps x 2 environments) with 6
// Applications over its roots (one in three with Kustomize options), an
// ApplicationSet generating one Application per environment directory of
// app000, an app of apps (a Directory source over the Applications), an
// Application of another repository and one of a Helm repository, commits it with the remote argoRepoURL, and makes it the
// current directory.
func argoRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found (apt-get install git)")
	}
	dir := t.TempDir()
	roots, err := genrepo.Write(dir, genrepo.Spec{Apps: 2, Envs: 2, ResourcesPerApp: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := genrepo.WriteApplications(dir, roots, 6, argoRepoURL); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"argocd/sets/envs.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: envs
  namespace: argocd
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: ` + argoRepoURL + `
      revision: HEAD
      directories:
      - path: apps/app000/*
      - path: apps/app000/base
        exclude: true
  template:
    metadata:
      name: 'set-{{.path.basename}}'
    spec:
      project: default
      source:
        repoURL: ` + argoRepoURL + `
        path: '{{.path.path}}'
      destination:
        server: https://kubernetes.default.svc
        namespace: '{{.path.basename}}'
`,
		"argocd/root.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: root
spec:
  source:
    repoURL: ` + argoRepoURL + `
    path: argocd/apps
  destination:
    namespace: argocd
`,
		"argocd/other.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: elsewhere
spec:
  source:
    repoURL: https://example.com/someone/else.git
    path: x
  destination:
    namespace: x
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: chart
spec:
  source:
    repoURL: https://charts.example.com
    chart: nginx
    targetRevision: 1.0.0
  destination:
    namespace: x
`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := genrepo.InitGit(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := genrepo.Git(dir, "remote", "add", "origin", "git@example.com:team/config"); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return dir
}

// TestArgocdBuildAll: every Application rendered once into its file, equal
// to what `argocd manifests` prints for it; the others listed as skipped
// with why; a second run renders nothing; --check names what changed;
// shards split the Applications and their reports merge.
func TestArgocdBuildAll(t *testing.T) {
	dir := argoRepo(t)
	// The outputs inside the repository: the app of apps' output holds
	// Applications, which are not found again.
	cacheDir, out := t.TempDir(), filepath.Join(dir, "rendered")
	code, _, errOut := kpipe(t, "argocd", "build-all", "--cache-dir", cacheDir, "--out-dir", out, "--report", filepath.Join(out, "..", "r.json"))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"skipped chart (argocd/other.yaml): Helm repository chart nginx", "skipped elsewhere (argocd/other.yaml): repository https://example.com/someone/else.git is not this repository",
		"rendered 11 Applications (0 failed, 2 skipped, 9 changed, 0 up to date)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	names := argoOutputs(t, out)
	want := []string{"bench-000", "bench-001", "bench-002", "bench-003", "bench-004", "bench-005", "root", "set-dev", "set-staging"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("outputs %v, want %v", names, want)
	}
	// The same bytes as kpipe argocd manifests, alone.
	for _, i := range []string{"000", "002"} {
		code, m, errOut := kpipe(t, "argocd", "manifests", "--no-cache", "argocd/apps/app-"+i+".yaml")
		file, _ := os.ReadFile(filepath.Join(out, "bench-"+i+".yaml"))
		if code != 0 || m != string(file) || !strings.Contains(m, "argocd.argoproj.io/tracking-id: bench-"+i+":") {
			t.Errorf("manifests of bench-%s: exit %d (%s), equal to build-all's: %v\n%s", i, code, errOut, m == string(file), m)
		}
	}
	// bench-002 has Kustomize options: its root edited, its base shared.
	if b, _ := os.ReadFile(filepath.Join(out, "bench-002.yaml")); !strings.Contains(string(b), "name: b2-app001") || !strings.Contains(string(b), `bench: "2"`) {
		t.Errorf("bench-002 lacks its name prefix or label:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "root.yaml")); strings.Count(string(b), "kind: Application\n") != 6 {
		t.Errorf("the app of apps renders the 6 Applications:\n%s", b)
	}
	// The ApplicationSet's Applications: each environment directory.
	if b, _ := os.ReadFile(filepath.Join(out, "set-staging.yaml")); !strings.Contains(string(b), "namespace: app000-staging") {
		t.Errorf("set-staging:\n%s", b)
	}

	// Nothing changed: nothing rendered.
	code, _, errOut = kpipe(t, "argocd", "build-all", "--cache-dir", cacheDir, "--out-dir", out)
	if code != 0 || !strings.Contains(errOut, "0 changed, 9 up to date") {
		t.Errorf("second run: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := kpipe(t, "argocd", "build-all", "--cache-dir", cacheDir, "--out-dir", out, "--check"); code != 0 {
		t.Errorf("--check of fresh outputs: exit %d\n%s", code, errOut)
	}
	// A base changes: --check names the Applications over it.
	f := filepath.Join(dir, "apps/app001/base/deployment.yaml")
	data, _ := os.ReadFile(f)
	if err := os.WriteFile(f, []byte(strings.Replace(string(data), "cpu: 100m", "cpu: 200m", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = kpipe(t, "argocd", "build-all", "--cache-dir", cacheDir, "--out-dir", out, "--check")
	if code != 1 || !strings.Contains(errOut, "out of date: ") || !strings.Contains(errOut, "(the output of Application bench-002)") || !strings.Contains(errOut, "(the output of Application bench-003)") || strings.Contains(errOut, "bench-000)") {
		t.Errorf("--check after a change: exit %d\n%s", code, errOut)
	}
	// Shards: each Application in one shard, the reports merge.
	var reps []string
	seen := map[string]int{}
	for _, s := range []string{"1/2", "2/2"} {
		rp := filepath.Join(t.TempDir(), "r.json")
		if code, _, errOut := kpipe(t, "argocd", "build-all", "--no-cache", "--shard", s, "--report", rp); code != 0 {
			t.Fatalf("--shard %s: exit %d\n%s", s, code, errOut)
		}
		var rep struct {
			Roots []struct{ Path string } `json:"roots"`
		}
		b, _ := os.ReadFile(rp)
		json.Unmarshal(b, &rep)
		for _, r := range rep.Roots {
			seen[r.Path]++
		}
		reps = append(reps, rp)
	}
	if len(seen) != 11 {
		t.Errorf("shards covered %d Applications, want 11: %v", len(seen), seen)
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("%s in %d shards", n, c)
		}
	}
	if code, _, errOut := kpipe(t, append([]string{"report", "merge", "-o", filepath.Join(t.TempDir(), "m.json")}, reps...)...); code != 0 {
		t.Errorf("report merge: exit %d\n%s", code, errOut)
	}
}

func argoOutputs(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".yaml") {
			out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
		}
	}
	sort.Strings(out)
	return out
}

// TestArgocdDiff: a change to one app's base shows in the Applications
// over it, object by object; an ApplicationSet change adds an
// Application; affected lists them; paths names what an Application reads.
func TestArgocdDiff(t *testing.T) {
	dir := argoRepo(t)
	cacheDir := t.TempDir()
	if code, out, errOut := kpipe(t, "diff", "--argocd", "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("no change: exit %d\n%s%s", code, out, errOut)
	}
	f := filepath.Join(dir, "apps/app001/base/deployment.yaml")
	data, _ := os.ReadFile(f)
	if err := os.WriteFile(f, []byte(strings.Replace(string(data), "cpu: 100m", "cpu: 200m", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := kpipe(t, "diff", "--argocd", "--cache-dir", cacheDir, "--name-only")
	// bench-002 and bench-003 render app001's roots (bench-002 with a
	// name prefix of its own).
	wantOut := "changed bench-002\n  ~ apps/Deployment app001-dev/b2-app001\nchanged bench-003\n  ~ apps/Deployment app001-staging/staging-app001\n"
	if code != 1 || out != wantOut {
		t.Errorf("diff --argocd --name-only: exit %d:\n%s\nwant:\n%s%s", code, out, wantOut, errOut)
	}
	code, out, _ = kpipe(t, "diff", "--argocd", "--cache-dir", cacheDir, "--format", "markdown")
	if code != 1 || !strings.Contains(out, "| application | status |") || !strings.Contains(out, "| `bench-002` | changed | 0 | 0 | 1 |") || !strings.Contains(out, "+            cpu: 200m") || strings.Contains(out, "bench-000") {
		t.Errorf("--format markdown: exit %d:\n%s", code, out)
	}
	code, out, errOut = kpipe(t, "affected", "--argocd", "--since", "HEAD", "--cache-dir", cacheDir)
	if code != 0 || out != "bench-002\nbench-003\n" {
		t.Errorf("affected --argocd: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, _ = kpipe(t, "affected", "--argocd", "--since", "HEAD", "--cache-dir", cacheDir, "--inputs-only", "--format", "json")
	if code != 0 || !strings.Contains(out, `"because": [
        "apps/app001/base/deployment.yaml"`) {
		t.Errorf("affected --argocd --inputs-only: exit %d:\n%s", code, out)
	}
	// A new environment directory: the ApplicationSet generates one more
	// Application.
	genrepo.Git(dir, "checkout", "-q", "--", ".")
	nd := filepath.Join(dir, "apps/app000/qa")
	os.MkdirAll(nd, 0o755)
	os.WriteFile(filepath.Join(nd, "kustomization.yaml"), []byte("resources:\n- ../base\nnamePrefix: qa-\n"), 0o644)
	code, out, errOut = kpipe(t, "diff", "--argocd", "--cache-dir", cacheDir, "--name-only")
	if code != 1 || !strings.HasPrefix(out, "added set-qa\n") || !strings.Contains(out, "  + apps/Deployment qa/qa-app000\n") || strings.Count(out, "\nadded") != 0 {
		t.Errorf("a new directory: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = kpipe(t, "argocd", "paths", "--no-cache", "argocd/apps/app-000.yaml")
	if code != 0 || out != ".;/apps/app000/base;/common;/components/monitoring\n" {
		t.Errorf("paths: exit %d: %q%s", code, out, errOut)
	}
}

// TestArgocdManifestsAgainstArgoCD renders kept reference cases with the
// CLI and compares with what Argo CD v3.6.1 generated for them (objects
// parsed, in order), settings passed as flags.
func TestArgocdManifestsAgainstArgoCD(t *testing.T) {
	td, _ := filepath.Abs("../../internal/argocd/testdata")
	repo := filepath.Join(td, "synthetic")
	helm := filepath.Join(os.Getenv("HOME"), ".cache/kpipe-ci/helm-v3.10.2/helm")
	if _, err := os.Stat(helm); err != nil {
		t.Skipf("%s missing: run .ci/run once (it installs helm v3.10.2 under ~/.cache/kpipe-ci)", helm)
	}
	for _, id := range []string{"0007-synthetic-kustomize-rand", "0011-synthetic-kustomize-rand", "0016-synthetic-helm-rand", "0035-synthetic-directory-rand",
		"0416-hand-kust-all-edits", "0438-hand-helm-cluster-info", "0445-hand-multi-two-paths"} {
		caseDir := filepath.Join(td, "apps", id)
		var c struct {
			Args []string `json:"args"`
		}
		b, err := os.ReadFile(filepath.Join(caseDir, "case.json"))
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(b, &c)
		var r struct {
			Manifests []any  `json:"manifests"`
			Error     string `json:"error"`
			Settings  struct {
				Revision string `json:"revision"`
			} `json:"settings"`
		}
		b, _ = os.ReadFile(filepath.Join(caseDir, "result.json"))
		json.Unmarshal(b, &r)
		args := []string{"argocd", "manifests", "--no-cache", "--repo-root", repo, "-o", "json", "--helm-command", helm, "--enable-helm", "--revision", r.Settings.Revision, filepath.Join(caseDir, "app.yaml")}
		for i := 0; i+1 < len(c.Args); i += 2 {
			switch name := strings.TrimPrefix(c.Args[i], "-"); name {
			case "build-options":
				args = append(args, "--kustomize-build-options", c.Args[i+1])
			case "tracking-method", "kube-version", "app-label-key", "installation-id", "controller-namespace":
				args = append(args, "--"+name, c.Args[i+1])
			case "api-versions":
				for _, v := range strings.Split(c.Args[i+1], ",") {
					args = append(args, "--api-versions", v)
				}
			}
		}
		code, out, errOut := kpipe(t, args...)
		if r.Error != "" {
			if code != 1 {
				t.Errorf("%s: exit %d, want 1 (%s)", id, code, r.Error)
			}
			continue
		}
		var got []any
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l == "" {
				continue
			}
			var v any
			json.Unmarshal([]byte(l), &v)
			got = append(got, v)
		}
		if code != 0 || !reflect.DeepEqual(got, r.Manifests) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(r.Manifests)
			t.Errorf("%s: exit %d %s\ngot:  %.1500s\nwant: %.1500s", id, code, errOut, g, w)
		}
	}
}
