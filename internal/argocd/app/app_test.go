package app_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/argocdtest"
)

func TestNormalizeGitURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/Org/Repo.git":     "https://github.com/org/repo",
		" git@github.com:org/repo.git ":       "git@github.com/org/repo",
		"ssh://git@github.com/org/repo":       "git@github.com/org/repo",
		"https://example.com/kpipe/synthetic": "https://example.com/kpipe/synthetic",
	} {
		if got := app.NormalizeGitURL(in); got != want {
			t.Errorf("NormalizeGitURL(%q) = %q, want %q", in, got, want)
		}
	}
	r := app.NewRepos("git@github.com:org/repo.git")
	if !r.Local("ssh://git@github.com/org/repo") || !r.Local("https://github.com/org/repo") || r.Local("https://github.com/org/other") {
		t.Error("Repos.Local: scp, ssh and https forms of one host and path are one repository (kinder than Argo CD, whose normalized URLs differ)")
	}
	if why := r.Skip(&app.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "x"}); why == "" {
		t.Error("a Helm repository chart is not rendered from the checkout")
	}
}

func TestEnvsubst(t *testing.T) {
	env := app.NewEnv("app", "ns", "default", "0123456789abcdef", &app.ApplicationSource{Path: "p"})
	for in, want := range map[string]string{
		"${ARGOCD_APP_REVISION_SHORT}": "0123456", "$ARGOCD_APP_NAME-x": "app-x",
		"a$HOME": "a", "$$x": "$x", "${ARGOCD_APP_SOURCE_PATH}": "p", "$ARGOCD_APP_REVISION_SHORT_8": "01234567",
	} {
		if got := env.Envsubst(in); got != want {
			t.Errorf("Envsubst(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseKubeVersion(t *testing.T) {
	for in, want := range map[string]string{"v1.31.1+k3s1": "1.31.1", "1.28": "1.28", "": ""} {
		if got, err := app.ParseKubeVersion(in); err != nil || got != want {
			t.Errorf("ParseKubeVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := app.ParseKubeVersion("1"); err == nil {
		t.Error("ParseKubeVersion(\"1\"): want an error (one component)")
	}
}

func TestNormalizeDropsZeroOptions(t *testing.T) {
	a, err := app.ParseApplication([]byte(`
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: x}
spec:
  source:
    repoURL: r
    kustomize: {forceCommonLabels: true}
    directory: {include: '*.yaml'}
    helm: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	a.Spec.Normalize()
	s := a.Spec.Source
	if s.Kustomize != nil || s.Helm != nil || s.Directory == nil || s.Directory.Include != "*.yaml" || a.Spec.Project != "default" {
		t.Errorf("Normalize: %+v", s)
	}
}

func TestFind(t *testing.T) {
	dir := filepath.Join(argocdtest.Testdata(), "apps")
	found, err := app.Find(os.DirFS(dir), ".", app.FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(found) != len(ents) {
		t.Fatalf("found %d Applications, want one per case (%d)", len(found), len(ents))
	}
	for _, f := range found {
		if f.Kind != app.KindApplication || f.Name == "" || filepath.Base(f.Path) != "app.yaml" {
			t.Errorf("found %+v", f)
		}
	}
	as, _ := app.Find(os.DirFS(filepath.Join(argocdtest.Testdata(), "appsets")), ".", app.FindOptions{})
	if len(as) == 0 || as[0].Kind != app.KindApplicationSet {
		t.Errorf("ApplicationSets: found %d", len(as))
	}
}

func TestReposHostPath(t *testing.T) {
	r := app.NewRepos("git@GitHub.com:Org/Repo.git")
	for _, u := range []string{"https://github.com/org/repo.git", "https://github.com/org/repo", "ssh://git@github.com:22/org/repo", "git@github.com:org/repo"} {
		if !r.Local(u) {
			t.Errorf("%s is not git@GitHub.com:Org/Repo.git", u)
		}
	}
	for _, u := range []string{"https://github.com/org/repo2", "https://gitlab.com/org/repo", "org/repo", ""} {
		if r.Local(u) {
			t.Errorf("%s taken for git@GitHub.com:Org/Repo.git", u)
		}
	}
}
