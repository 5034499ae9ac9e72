package main

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// gitBinary returns the git executable, or skips the test naming how to
// install it.
func gitBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed (apt-get install git): remote base test skipped")
	}
	return p
}

// runGit runs git in dir with a fixed identity and dates, failing the test
// on error; it returns stdout.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE=2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2020-01-01T00:00:00Z",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The repository the remote tests fetch: a base, a component, a base
// that reads a file outside its directory, at tag v1 (annotated), then a
// second commit on main that changes the base.
var remoteRepoV1 = map[string]string{
	"base/kustomization.yaml": "resources:\n- deploy.yaml\n- ../common\nnamePrefix: remote-\ncommonLabels:\n  from: git\n",
	"base/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.25
`,
	"common/kustomization.yaml": "resources:\n- svc.yaml\n",
	"common/svc.yaml":           "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n",
	"comp/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
labels:
- pairs:
    component: remote
`,
	"escape/kustomization.yaml": "resources:\n- ../common/svc.yaml\n",
	"kustomization.yaml":        "resources:\n- common\n",
}

// remoteFixture is a bare repository made by the test, with its commits.
type remoteFixture struct {
	work, bare  string // the working clone and the bare repository (repo.git)
	v1, main    string // the commits of tag v1 and of main
	served      string // the directory served over HTTP (holds repo.git)
}

func newRemoteFixture(t *testing.T) *remoteFixture {
	gitBinary(t)
	root := t.TempDir()
	f := &remoteFixture{work: filepath.Join(root, "work"), served: filepath.Join(root, "srv")}
	f.bare = filepath.Join(f.served, "repo.git")
	writeFiles(t, f.work, remoteRepoV1)
	runGit(t, f.work, "init", "--quiet", "-b", "main")
	runGit(t, f.work, "add", ".")
	runGit(t, f.work, "commit", "--quiet", "-m", "v1")
	runGit(t, f.work, "tag", "-a", "v1", "-m", "v1")
	f.v1 = runGit(t, f.work, "rev-parse", "HEAD")
	writeFiles(t, f.work, map[string]string{"base/kustomization.yaml": "resources:\n- deploy.yaml\n- ../common\nnamePrefix: main-\n"})
	runGit(t, f.work, "commit", "--quiet", "-am", "main")
	f.main = runGit(t, f.work, "rev-parse", "HEAD")
	if err := os.MkdirAll(f.served, 0o755); err != nil {
		t.Fatal(err)
	}
	runGit(t, root, "clone", "--quiet", "--bare", f.work, f.bare)
	return f
}

// checkoutAt writes the tree of commit into a new directory and returns it.
func (f *remoteFixture) checkoutAt(t *testing.T, commit string) string {
	dir := t.TempDir()
	runGit(t, f.work, "--work-tree="+dir, "checkout", commit, "--", ".")
	runGit(t, f.work, "reset", "--quiet")
	return dir
}

// countingServer serves h on 127.0.0.1 and counts its requests.
type countingServer struct {
	*httptest.Server
	n atomic.Int64
}

func newCountingServer(t *testing.T, h http.Handler) *countingServer {
	s := &countingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.n.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// gitHTTPServer serves the bare repositories under root over git's smart
// HTTP protocol: `git http-backend` behind net/http/cgi.
func gitHTTPServer(t *testing.T, root string) *countingServer {
	git := gitBinary(t)
	return newCountingServer(t, &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	})
}

func overlay(t *testing.T, kustomization string) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"kustomization.yaml": kustomization})
	return dir
}

func mustBuild(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := kpipe(t, append([]string{"build"}, args...)...)
	if code != 0 {
		t.Fatalf("kpipe build %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// TestRemoteBaseBuildsLikeLocalCopy: a remote base (file:// and smart
// HTTP, by tag, branch, commit and HEAD) builds exactly as the same
// directory checked out locally at that commit.
func TestRemoteBaseBuildsLikeLocalCopy(t *testing.T) {
	f := newRemoteFixture(t)
	srv := gitHTTPServer(t, f.served)
	v1Tree, mainTree := f.checkoutAt(t, f.v1), f.checkoutAt(t, f.main)
	local := func(tree string) string {
		return mustBuild(t, overlay(t, "resources:\n- "+filepath.Join(tree, "base")+"\n"), "--no-cache", "--load-restrictor", "LoadRestrictionsNone")
	}
	wantV1, wantMain := local(v1Tree), local(mainTree)
	if wantV1 == wantMain || !strings.Contains(wantV1, "name: remote-web") {
		t.Fatalf("fixture: v1 and main should differ:\n%s\n%s", wantV1, wantMain)
	}
	for _, tc := range []struct{ url, want string }{
		{"file://" + f.bare + "//base?ref=v1", wantV1},
		{"file://" + f.bare + "//base?version=v1", wantV1},
		{"file://" + f.bare + "//base?ref=" + f.v1, wantV1},
		{"file://" + f.bare + "//base?ref=main", wantMain},
		{"file://" + f.bare + "//base", wantMain},
		{"file://" + f.bare + "/base?ref=v1&timeout=61&submodules=false", wantV1},
		{"git::file://" + f.bare + "//base?ref=v1", wantV1},
		{srv.URL + "/repo.git//base?ref=v1", wantV1},
		{srv.URL + "/repo.git/base?ref=main", wantMain},
		{srv.URL + "/repo.git//base?ref=" + f.v1, wantV1},
	} {
		cache := t.TempDir()
		dir := overlay(t, "resources:\n- "+tc.url+"\n")
		if got := mustBuild(t, dir, "--cache-dir", cache); got != tc.want {
			t.Errorf("%s: output differs from the local checkout's:\n%s\nwant:\n%s", tc.url, got, tc.want)
		}
		// And again from the cache, and offline.
		if got := mustBuild(t, dir, "--cache-dir", cache); got != tc.want {
			t.Errorf("%s: second build differs:\n%s", tc.url, got)
		}
		if got := mustBuild(t, dir, "--cache-dir", cache, "--offline"); got != tc.want {
			t.Errorf("%s: offline build differs:\n%s", tc.url, got)
		}
	}
}
