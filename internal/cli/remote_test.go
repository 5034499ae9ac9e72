package cli

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
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
	work, bare string // the working clone and the bare repository (repo.git)
	v1, main   string // the commits of tag v1 and of main
	served     string // the directory served over HTTP (holds repo.git)
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
		Path:   git,
		Args:   []string{"http-backend"},
		Env:    []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
		Stderr: io.Discard, // "Request not supported" for kustomize's GET of a repository URL
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
	var dirs, urls []string
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
		urls = append(urls, tc.url)
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
		dirs = append(dirs, dir)
	}
	// The same URLs with kustomize (which clones each).
	kz := kustomizeBinary(t)
	for i, dir := range dirs {
		want, err := exec.Command(kz, "build", dir).Output()
		if err != nil {
			t.Errorf("kustomize build (%s): %v", urls[i], err)
			continue
		}
		if got := mustBuild(t, dir, "--no-cache"); got != string(want) {
			t.Errorf("%s: kpipe's output differs from kustomize's\n--- kpipe\n%s\n--- kustomize\n%s", urls[i], got, want)
		}
	}
}

// TestRemoteBaseRequests counts the requests at the git server: a second
// build of a commit-pinned URL asks nothing, a tag is resolved with one
// ls-remote and not fetched again, and --offline asks nothing and fails,
// naming the URL, for what the cache lacks.
func TestRemoteBaseRequests(t *testing.T) {
	f := newRemoteFixture(t)
	srv := gitHTTPServer(t, f.served)
	cache := t.TempDir()
	pinned := overlay(t, "resources:\n- "+srv.URL+"/repo.git//base?ref="+f.v1+"\n")
	tagged := overlay(t, "resources:\n- "+srv.URL+"/repo.git//base?ref=v1\n")

	first := mustBuild(t, pinned, "--cache-dir", cache)
	if srv.n.Load() == 0 {
		t.Fatal("the first build made no request")
	}
	srv.n.Store(0)
	if got := mustBuild(t, pinned, "--cache-dir", cache); got != first {
		t.Errorf("second build differs:\n%s", got)
	}
	if n := srv.n.Load(); n != 0 {
		t.Errorf("the second build of a pinned commit made %d requests, want 0", n)
	}

	// The tag names the commit already kept: only the ls-remote.
	if got := mustBuild(t, tagged, "--cache-dir", cache); got != first {
		t.Errorf("tag build differs:\n%s", got)
	}
	lsRemote := srv.n.Load()
	srv.n.Store(0)
	if got := mustBuild(t, tagged, "--cache-dir", cache); got != first {
		t.Errorf("tag build differs:\n%s", got)
	}
	if n := srv.n.Load(); n != lsRemote || n > 2 {
		t.Errorf("a kept tag made %d requests (first time %d), want those of one ls-remote (at most 2)", n, lsRemote)
	}
	srv.n.Store(0)
	if got := mustBuild(t, tagged, "--cache-dir", cache, "--offline"); got != first {
		t.Errorf("offline build differs:\n%s", got)
	}
	if n := srv.n.Load(); n != 0 {
		t.Errorf("--offline made %d requests", n)
	}

	// Offline with an empty cache: the error names the URL; nothing asked.
	main := srv.URL + "/repo.git//base?ref=main"
	code, out, errOut := kpipe(t, "build", overlay(t, "resources:\n- "+main+"\n"), "--cache-dir", t.TempDir(), "--offline")
	if code == 0 || out != "" || !strings.Contains(errOut, srv.URL+"/repo.git") || !strings.Contains(errOut, "--offline") {
		t.Errorf("offline build of an uncached URL: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if n := srv.n.Load(); n != 0 {
		t.Errorf("--offline made %d requests", n)
	}

	// One URL named by two kustomizations is resolved and fetched once.
	srv.n.Store(0)
	twice := overlay(t, "resources:\n- a\n- b\n")
	writeFiles(t, twice, map[string]string{
		"a/kustomization.yaml": "resources:\n- " + main + "\nnameSuffix: -a\n",
		"b/kustomization.yaml": "resources:\n- " + main + "\nnameSuffix: -b\n",
	})
	mustBuild(t, twice, "--cache-dir", t.TempDir())
	once := srv.n.Load()
	srv.n.Store(0)
	mustBuild(t, overlay(t, "resources:\n- "+main+"\n"), "--cache-dir", t.TempDir())
	if n := srv.n.Load(); once != n {
		t.Errorf("a URL named twice made %d requests, once %d", once, n)
	}
}

// TestRemoteBaseErrors: failures name the URL and carry git's message; a
// remote base reads nothing outside its directory, whatever the load
// restrictor; a missing directory in the repository is named.
func TestRemoteBaseErrors(t *testing.T) {
	f := newRemoteFixture(t)
	for _, tc := range []struct {
		entry string
		flags []string
		want  []string
	}{
		{"file://" + f.bare + "//base?ref=nosuchref", nil, []string{"file://" + f.bare, "nosuchref", "couldn't find remote ref"}},
		{"file://" + f.bare + "x//base?ref=v1", nil, []string{"file://" + f.bare + "x", "does not appear to be a git repository"}},
		{"file://" + f.bare + "//escape?ref=v1", []string{"--load-restrictor", "LoadRestrictionsNone"}, []string{"security; file", "is not in or below"}},
		{"file://" + f.bare + "//nodir?ref=v1", nil, []string{"nodir", f.v1}},
		{"file://" + f.bare + "//base?ref=--upload-pack=touch%20pwned", nil, []string{"may start with '-'"}},
	} {
		code, out, errOut := kpipe(t, append([]string{"build", overlay(t, "resources:\n- "+tc.entry+"\n"), "--cache-dir", t.TempDir()}, tc.flags...)...)
		if code == 0 || out != "" {
			t.Errorf("%s: exit %d, output %q", tc.entry, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: error lacks %q:\n%s", tc.entry, w, errOut)
			}
		}
	}
}

// TestRemoteComponentAndMetadata: a remote component, and the origin
// annotations of remote objects, as kustomize writes them (compared with
// kustomize's output when it is installed).
func TestRemoteComponentAndMetadata(t *testing.T) {
	f := newRemoteFixture(t)
	srv := gitHTTPServer(t, f.served)
	dirs := map[string]string{
		"component": "resources:\n- file://" + f.bare + "//base?ref=v1\ncomponents:\n- " + srv.URL + "/repo.git//comp?ref=v1\n",
		"origin": "buildMetadata: [originAnnotations, transformerAnnotations]\nresources:\n- file://" + f.bare + "//base?ref=v1\n- " +
			srv.URL + "/repo.git?ref=" + f.v1 + "\nnamespace: x\n",
	}
	got := map[string]string{}
	for name, k := range dirs {
		dir := overlay(t, k)
		dirs[name] = dir
		got[name] = mustBuild(t, dir, "--cache-dir", t.TempDir())
	}
	if !strings.Contains(got["component"], "component: remote") {
		t.Errorf("the remote component was not applied:\n%s", got["component"])
	}
	for _, w := range []string{"repo: file://" + f.bare, "ref: v1", "path: base/deploy.yaml", "path: common/svc.yaml", "repo: " + srv.URL + "/repo.git", "ref: " + f.v1} {
		if !strings.Contains(got["origin"], w) {
			t.Errorf("origin annotations lack %q:\n%s", w, got["origin"])
		}
	}
	kz := kustomizeBinary(t)
	for name, dir := range dirs {
		want, err := exec.Command(kz, "build", dir).Output()
		if err != nil {
			t.Fatalf("kustomize build %s: %v", name, err)
		}
		if got[name] != string(want) {
			t.Errorf("%s: kpipe's output differs from kustomize's\n--- kpipe\n%s\n--- kustomize\n%s", name, got[name], want)
		}
	}
}

// TestRemoteFile: an http(s) URL in `resources` is loaded with a GET, as
// kustomize does: the output equals kustomize's, a status other than 2xx
// fails naming the URL and the status, and --offline reads the body the
// last online build kept, asking nothing.
func TestRemoteFile(t *testing.T) {
	files := t.TempDir()
	writeFiles(t, files, map[string]string{"app/deploy.yaml": remoteRepoV1["base/deploy.yaml"]})
	srv := newCountingServer(t, http.FileServer(http.Dir(files)))
	url := srv.URL + "/app/deploy.yaml"
	dir := overlay(t, "resources:\n- "+url+"\nnamePrefix: http-\n")
	localDir := overlay(t, "resources:\n- deploy.yaml\nnamePrefix: http-\n")
	writeFiles(t, localDir, map[string]string{"deploy.yaml": remoteRepoV1["base/deploy.yaml"]})
	want := mustBuild(t, localDir, "--no-cache")
	cache := t.TempDir()
	if got := mustBuild(t, dir, "--cache-dir", cache); got != want {
		t.Errorf("output differs from the local file's:\n%s\nwant:\n%s", got, want)
	}
	if n := srv.n.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	srv.n.Store(0)
	if got := mustBuild(t, dir, "--cache-dir", cache, "--offline"); got != want {
		t.Errorf("offline output differs:\n%s", got)
	}
	if n := srv.n.Load(); n != 0 {
		t.Errorf("--offline made %d requests", n)
	}
	code, _, errOut := kpipe(t, "build", dir, "--cache-dir", t.TempDir(), "--offline")
	if code == 0 || !strings.Contains(errOut, url) || !strings.Contains(errOut, "--offline") {
		t.Errorf("offline build with an empty cache: exit %d: %s", code, errOut)
	}

	missing := overlay(t, "resources:\n- "+srv.URL+"/missing.yaml\n")
	code, out, errOut := kpipe(t, "build", missing, "--no-cache")
	wantErr := "accumulating resources from '" + srv.URL + "/missing.yaml': HTTP Error: status code 404 (Not Found)"
	if code == 0 || out != "" || !strings.Contains(errOut, wantErr) {
		t.Errorf("404: exit %d, stdout %q, stderr %s", code, out, errOut)
	}

	kz := kustomizeBinary(t)
	kout, err := exec.Command(kz, "build", dir).Output()
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	if string(kout) != want {
		t.Errorf("kustomize's output differs:\n%s", kout)
	}
	// Origin annotations of files by URL, with kustomize's reading of a
	// URL with two path segments as a repository.
	writeFiles(t, files, map[string]string{"top.yaml": remoteRepoV1["common/svc.yaml"]})
	meta := overlay(t, "buildMetadata: [originAnnotations]\nresources:\n- "+url+"\n- "+srv.URL+"/top.yaml\n")
	kmeta, err := exec.Command(kz, "build", meta).Output()
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	if got := mustBuild(t, meta, "--no-cache"); got != string(kmeta) {
		t.Errorf("origin annotations differ from kustomize's\n--- kpipe\n%s\n--- kustomize\n%s", got, kmeta)
	}
	kerr, err := exec.Command(kz, "build", missing).CombinedOutput()
	if err == nil || strings.TrimSpace(string(kerr)) != strings.TrimSpace(errOut) {
		t.Errorf("404: kustomize says %q, kpipe %q", kerr, errOut)
	}
}

// helmBinary finds helm v3 (where .ci/run installs it, or on PATH), or
// skips the test naming how to install it.
func helmBinary(t *testing.T) string {
	t.Helper()
	if home, err := os.UserHomeDir(); err == nil {
		if p := filepath.Join(home, ".cache", "kpipe-ci", "helm-v3.10.2", "helm"); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	t.Skip("helm not installed (.ci/run installs v3.10.2 under ~/.cache/kpipe-ci): chart repository test skipped")
	return ""
}

// chartRepo packages a small chart with `helm package`, indexes it with
// `helm repo index` and serves the directory on loopback.
func chartRepo(t *testing.T, helm string) (*countingServer, string) {
	src, repo := t.TempDir(), t.TempDir()
	writeFiles(t, src, map[string]string{
		"hello/Chart.yaml":            "apiVersion: v2\nname: hello\nversion: 0.1.0\n",
		"hello/values.yaml":           "greeting: hi\n",
		"hello/templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-hello\ndata:\n  greeting: {{ .Values.greeting }}\n",
	})
	for _, args := range [][]string{{"package", filepath.Join(src, "hello"), "--destination", repo}, {"repo", "index", repo}} {
		if out, err := exec.Command(helm, args...).CombinedOutput(); err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return newCountingServer(t, http.FileServer(http.Dir(repo))), repo
}

// TestHelmChartFromRepository: a chart named by repo and version is pulled
// into kpipe's cache (never into the kustomization's directory) and
// inflated as kustomize inflates it; a second build asks the repository
// nothing; --offline fails naming the chart when the cache lacks it; a
// kept chart whose files changed is pulled again; an archive whose digest
// is not the index's is refused.
func TestHelmChartFromRepository(t *testing.T) {
	helm := helmBinary(t)
	srv, repoDir := chartRepo(t, helm)
	k := "helmCharts:\n- name: hello\n  repo: " + srv.URL + "\n  version: 0.1.0\n  releaseName: r\n  valuesInline:\n    greeting: hello\n"
	dir := overlay(t, k)
	cache := t.TempDir()
	flags := []string{"--enable-helm", "--helm-command", helm, "--cache-dir", cache}
	got := mustBuild(t, append([]string{dir}, flags...)...)
	if !strings.Contains(got, "name: r-hello") || !strings.Contains(got, "greeting: hello") {
		t.Fatalf("chart not inflated:\n%s", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("kpipe wrote into the kustomization's directory: %v", entries)
	}
	srv.n.Store(0)
	if again := mustBuild(t, append([]string{dir}, flags...)...); again != got {
		t.Errorf("second build differs:\n%s", again)
	}
	if n := srv.n.Load(); n != 0 {
		t.Errorf("second build made %d requests to the chart repository", n)
	}
	// Another kustomization of the same chart, built from the kept chart.
	other := overlay(t, k+"nameSuffix: -other\n")
	if out := mustBuild(t, append([]string{other, "--offline"}, flags...)...); !strings.Contains(out, "name: r-hello-other") {
		t.Errorf("offline build from the kept chart:\n%s", out)
	}
	code, _, errOut := kpipe(t, "build", dir, "--enable-helm", "--helm-command", helm, "--cache-dir", t.TempDir(), "--offline")
	if code == 0 || !strings.Contains(errOut, "hello") || !strings.Contains(errOut, srv.URL) || !strings.Contains(errOut, "--offline") {
		t.Errorf("offline with an empty cache: exit %d: %s", code, errOut)
	}

	// A kept chart whose files changed is not used: it is pulled again.
	kept, _ := filepath.Glob(filepath.Join(cache, "remote", "charts", "*", "chart", "hello-0.1.0", "hello", "values.yaml"))
	if len(kept) != 1 {
		t.Fatalf("kept chart not found under %s: %v", cache, kept)
	}
	if err := os.WriteFile(kept[0], []byte("greeting: tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.n.Store(0)
	if again := mustBuild(t, append([]string{overlay(t, k+"nameSuffix: -x\n")}, flags...)...); strings.Contains(again, "tampered") {
		t.Errorf("a tampered kept chart was used:\n%s", again)
	}
	if n := srv.n.Load(); n == 0 {
		t.Error("a tampered kept chart was not pulled again")
	}

	// kustomize pulls into the kustomization's charts/ directory: build a
	// copy, then check that kpipe uses such a directory as it is.
	kz := kustomizeBinary(t)
	kdir := overlay(t, k)
	want, err := exec.Command(kz, "build", kdir, "--enable-helm", "--helm-command", helm).Output()
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	if got != string(want) {
		t.Errorf("kpipe's output differs from kustomize's\n--- kpipe\n%s\n--- kustomize\n%s", got, want)
	}
	values := filepath.Join(kdir, "charts", "hello-0.1.0", "hello", "templates", "config.yaml")
	if err := os.WriteFile(values, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local-chart\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustBuild(t, kdir, "--enable-helm", "--helm-command", helm, "--no-cache", "--offline"); !strings.Contains(out, "name: local-chart") {
		t.Errorf("the kustomization's own charts/ directory was not used:\n%s", out)
	}

	// An index whose digest is not the archive's: refused.
	index := filepath.Join(repoDir, "index.yaml")
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`digest: [0-9a-f]{64}`).ReplaceAll(data, []byte("digest: "+strings.Repeat("0", 64)))
	if err := os.WriteFile(index, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = kpipe(t, "build", dir, "--enable-helm", "--helm-command", helm, "--cache-dir", t.TempDir())
	if code == 0 || !strings.Contains(errOut, "digest") || !strings.Contains(errOut, strings.Repeat("0", 64)) {
		t.Errorf("a digest mismatch was not refused: exit %d: %s", code, errOut)
	}
}

// TestBuildRemoteTarget: `kpipe build <git URL>` builds the kustomization
// in the repository, as `kustomize build <git URL>` does.
func TestBuildRemoteTarget(t *testing.T) {
	f := newRemoteFixture(t)
	srv := gitHTTPServer(t, f.served)
	tree := f.checkoutAt(t, f.v1)
	for _, url := range []string{"file://" + f.bare + "//base?ref=v1", srv.URL + "/repo.git//base?ref=" + f.v1} {
		want := mustBuild(t, filepath.Join(tree, "base"), "--no-cache")
		if got := mustBuild(t, url, "--cache-dir", t.TempDir()); got != want {
			t.Errorf("%s: output differs from the local checkout's:\n%s\nwant:\n%s", url, got, want)
		}
	}
	code, out, errOut := kpipe(t, "build", "file://"+f.bare+"//nodir?ref=v1", "--no-cache")
	if code == 0 || out != "" || !strings.Contains(errOut, "nodir") {
		t.Errorf("missing directory: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	kz := kustomizeBinary(t)
	url := "file://" + f.bare + "//base?ref=v1"
	want, err := exec.Command(kz, "build", url).Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v", url, err)
	}
	if got := mustBuild(t, url, "--no-cache"); got != string(want) {
		t.Errorf("kpipe's output differs from kustomize's\n--- kpipe\n%s\n--- kustomize\n%s", got, want)
	}
}

// TestHelmChartFromOCIRegistry: a chart pushed with `helm push` to an OCI
// registry on loopback (go-containerregistry's registry) is pulled into
// kpipe's cache and inflated as kustomize inflates it; a second build asks
// the registry nothing.
func TestHelmChartFromOCIRegistry(t *testing.T) {
	helm := helmBinary(t)
	reg := newCountingServer(t, registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	_, repoDir := chartRepo(t, helm)
	host := strings.TrimPrefix(reg.URL, "http://")
	home := t.TempDir()
	push := exec.Command(helm, "push", filepath.Join(repoDir, "hello-0.1.0.tgz"), "oci://"+host+"/charts")
	push.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home+"/cache", "HELM_DATA_HOME="+home+"/data")
	if out, err := push.CombinedOutput(); err != nil {
		t.Fatalf("helm push: %v\n%s", err, out)
	}
	k := "helmCharts:\n- name: hello\n  repo: oci://" + host + "/charts\n  version: 0.1.0\n  releaseName: r\n"
	dir := overlay(t, k)
	cache := t.TempDir()
	flags := []string{"--enable-helm", "--helm-command", helm, "--cache-dir", cache}
	reg.n.Store(0)
	got := mustBuild(t, append([]string{dir}, flags...)...)
	if !strings.Contains(got, "name: r-hello") || reg.n.Load() == 0 {
		t.Fatalf("chart not pulled (%d requests):\n%s", reg.n.Load(), got)
	}
	reg.n.Store(0)
	if again := mustBuild(t, append([]string{overlay(t, k+"nameSuffix: -x\n")}, flags...)...); !strings.Contains(again, "name: r-hello-x") {
		t.Errorf("second build:\n%s", again)
	}
	if n := reg.n.Load(); n != 0 {
		t.Errorf("second build made %d requests to the registry", n)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("kpipe wrote into the kustomization's directory: %v", entries)
	}
	kz := kustomizeBinary(t)
	kdir := overlay(t, k)
	cmd := exec.Command(kz, "build", kdir, "--enable-helm", "--helm-command", helm)
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	if got != string(want) {
		t.Errorf("kpipe's output differs from kustomize's\n--- kpipe\n%s\n--- kustomize\n%s", got, want)
	}
}

// TestRemoteBaseOverSSHForms: the ssh:// and scp-like forms reach git's
// ssh transport (an ssh stand-in, GIT_SSH_COMMAND, that runs the remote
// command locally, as sshd would), and build as the local checkout does.
func TestRemoteBaseOverSSHForms(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the ssh stand-in is a shell script")
	}
	f := newRemoteFixture(t)
	fakeSSH := filepath.Join(t.TempDir(), "ssh")
	// git runs: ssh [-o ...] [-p port] host 'git-upload-pack '\''/path'\'''
	script := "#!/bin/sh\nfor a; do last=$a; done\nexec sh -c \"$last\"\n"
	if err := os.WriteFile(fakeSSH, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_SSH_COMMAND", fakeSSH)
	t.Setenv("GIT_SSH_VARIANT", "ssh")
	want := mustBuild(t, filepath.Join(f.checkoutAt(t, f.v1), "base"), "--no-cache")
	var dirs []string
	for _, url := range []string{
		"ssh://git@localhost" + f.bare + "//base?ref=v1",
		"ssh://git@localhost:2222" + f.bare + "/base?ref=v1",
		"git@localhost:" + f.bare + "/base?ref=v1",
	} {
		dir := overlay(t, "resources:\n- "+url+"\n")
		if got := mustBuild(t, dir, "--cache-dir", t.TempDir()); got != want {
			t.Errorf("%s: output differs from the local checkout's:\n%s\nwant:\n%s", url, got, want)
		}
		dirs = append(dirs, dir)
	}
	kz := kustomizeBinary(t)
	for _, dir := range dirs {
		if kout, err := exec.Command(kz, "build", dir).Output(); err != nil || string(kout) != want {
			t.Errorf("kustomize build %s: %v\n%s", dir, err, kout)
		}
	}
}

// TestRemoteBaseSubmodules: submodules (with a URL relative to the
// repository's, kustomize#5131) are checked out unless ?submodules=false.
func TestRemoteBaseSubmodules(t *testing.T) {
	f := newRemoteFixture(t)
	sub := filepath.Join(t.TempDir(), "sub")
	writeFiles(t, sub, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-submodule\n"})
	runGit(t, sub, "init", "--quiet", "-b", "main")
	runGit(t, sub, "add", ".")
	runGit(t, sub, "commit", "--quiet", "-m", "sub")
	runGit(t, filepath.Dir(sub), "clone", "--quiet", "--bare", sub, filepath.Join(f.served, "sub.git"))
	// The parent: a kustomization whose resource lies in the submodule,
	// mounted below it.
	parent := filepath.Join(t.TempDir(), "parent")
	writeFiles(t, parent, map[string]string{"app/kustomization.yaml": "resources:\n- vendor/cm.yaml\n"})
	runGit(t, parent, "init", "--quiet", "-b", "main")
	runGit(t, parent, "-c", "protocol.file.allow=always", "submodule", "add", "--quiet", filepath.Join(f.served, "sub.git"), "app/vendor")
	runGit(t, parent, "config", "-f", ".gitmodules", "submodule.app/vendor.url", "../sub.git")
	runGit(t, parent, "add", ".")
	runGit(t, parent, "commit", "--quiet", "-m", "parent")
	runGit(t, filepath.Dir(parent), "clone", "--quiet", "--bare", parent, filepath.Join(f.served, "parent.git"))
	srv := gitHTTPServer(t, f.served)

	url := srv.URL + "/parent.git//app?ref=main"
	got := mustBuild(t, overlay(t, "resources:\n- "+url+"\n"), "--cache-dir", t.TempDir())
	if !strings.Contains(got, "name: from-submodule") {
		t.Errorf("the submodule's file was not read:\n%s", got)
	}
	code, out, errOut := kpipe(t, "build", overlay(t, "resources:\n- "+url+"&submodules=false\n"), "--cache-dir", t.TempDir())
	if code == 0 || out != "" || !strings.Contains(errOut, "vendor/cm.yaml") {
		t.Errorf("?submodules=false: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	kz := kustomizeBinary(t)
	want, err := exec.Command(kz, "build", overlay(t, "resources:\n- "+url+"\n")).Output()
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	if got != string(want) {
		t.Errorf("kpipe's output differs from kustomize's\n--- kpipe\n%s\n--- kustomize\n%s", got, want)
	}
}

// TestBuildAllRemoteBase: build-all over overlays of one remote base
// fetches it once, writes what `kpipe build` prints for each root, and a
// second run asks the server nothing (the commit is pinned).
func TestBuildAllRemoteBase(t *testing.T) {
	f := newRemoteFixture(t)
	srv := gitHTTPServer(t, f.served)
	url := srv.URL + "/repo.git//base?ref=" + f.v1
	tree := t.TempDir()
	writeFiles(t, tree, map[string]string{
		"a/kustomization.yaml": "resources:\n- " + url + "\nnameSuffix: -a\n",
		"b/kustomization.yaml": "resources:\n- " + url + "\nnameSuffix: -b\n",
	})
	cache, out := t.TempDir(), t.TempDir()
	code, rep, stderr := buildAll(t, tree, cache, out)
	if code != 0 {
		t.Fatalf("build-all: exit %d: %s", code, stderr)
	}
	first := srv.n.Load()
	srv.n.Store(0)
	single := mustBuild(t, filepath.Join(tree, "a"), "--cache-dir", t.TempDir())
	if srv.n.Load() != first {
		t.Errorf("build-all of two roots over one URL made %d requests, one root %d", first, srv.n.Load())
	}
	if !strings.Contains(single, "name: remote-web-a") {
		t.Errorf("root a:\n%s", single)
	}
	if data, err := os.ReadFile(outputOf(t, rep, "a")); err != nil || string(data) != single {
		t.Errorf("build-all's output of a differs from kpipe build's (%v):\n%s\n%s", err, data, single)
	}
	srv.n.Store(0)
	if code, _, stderr := buildAll(t, tree, cache, out); code != 0 {
		t.Fatalf("second build-all: exit %d: %s", code, stderr)
	}
	if n := srv.n.Load(); n != 0 {
		t.Errorf("second build-all made %d requests", n)
	}
}

// TestRemoteOpenAPISchema: an `openapi: path:` URL is fetched with a GET,
// as kustomize loads it; the build equals the one with the same schema as
// a local file, and kustomize's; --offline uses the kept copy.
func TestRemoteOpenAPISchema(t *testing.T) {
	schema := `{"definitions": {"example.v1.Widget": {"type": "object",
  "properties": {"spec": {"type": "object", "properties": {"parts": {
    "type": "array", "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "id"}}}},
  "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}]}}}`
	files := t.TempDir()
	writeFiles(t, files, map[string]string{"schema.json": schema})
	srv := newCountingServer(t, http.FileServer(http.Dir(files)))
	rest := "resources:\n- widget.yaml\npatches:\n- patch: |-\n    apiVersion: example.com/v1\n    kind: Widget\n    metadata:\n      name: w\n    spec:\n      parts:\n      - id: c\n"
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  parts:\n  - id: a\n  - id: b\n"
	local := overlay(t, "openapi:\n  path: schema.json\n"+rest)
	writeFiles(t, local, map[string]string{"widget.yaml": widget, "schema.json": schema})
	dir := overlay(t, "openapi:\n  path: "+srv.URL+"/schema.json\n"+rest)
	writeFiles(t, dir, map[string]string{"widget.yaml": widget})
	want := mustBuild(t, local, "--no-cache")
	if !strings.Contains(want, "- id: c\n  - id: a\n") {
		t.Fatalf("fixture: the schema's merge key was not used:\n%s", want)
	}
	cache := t.TempDir()
	if got := mustBuild(t, dir, "--cache-dir", cache); got != want {
		t.Errorf("output differs from the local schema's:\n%s\nwant:\n%s", got, want)
	}
	srv.n.Store(0)
	if got := mustBuild(t, dir, "--cache-dir", cache, "--offline"); got != want || srv.n.Load() != 0 {
		t.Errorf("offline (%d requests):\n%s", srv.n.Load(), got)
	}
	kz := kustomizeBinary(t)
	kout, err := exec.Command(kz, "build", dir).Output()
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	if string(kout) != want {
		t.Errorf("kustomize's output differs:\n%s", kout)
	}
}

// TestHelmChartPluginConfigFromRepository: a HelmChartInflationGenerator
// plugin config under `generators:` with a repo pulls its chart too, and
// builds as kustomize does.
func TestHelmChartPluginConfigFromRepository(t *testing.T) {
	helm := helmBinary(t)
	srv, _ := chartRepo(t, helm)
	files := map[string]string{
		"kustomization.yaml": "generators:\n- helm.yaml\n",
		"helm.yaml": "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: hello\nname: hello\nrepo: " + srv.URL +
			"\nversion: 0.1.0\nreleaseName: g\n",
	}
	dir, kdir := t.TempDir(), t.TempDir()
	writeFiles(t, dir, files)
	writeFiles(t, kdir, files)
	cache := t.TempDir()
	got := mustBuild(t, dir, "--enable-helm", "--helm-command", helm, "--cache-dir", cache)
	if !strings.Contains(got, "name: g-hello") {
		t.Fatalf("chart not inflated:\n%s", got)
	}
	srv.n.Store(0)
	if again := mustBuild(t, dir, "--enable-helm", "--helm-command", helm, "--cache-dir", cache, "--offline"); again != got || srv.n.Load() != 0 {
		t.Errorf("offline build (%d requests):\n%s", srv.n.Load(), again)
	}
	kz := kustomizeBinary(t)
	want, err := exec.Command(kz, "build", kdir, "--enable-helm", "--helm-command", helm).Output()
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	if got != string(want) {
		t.Errorf("kpipe's output differs from kustomize's\n--- kpipe\n%s\n--- kustomize\n%s", got, want)
	}
}

// TestRemoteBaseConcurrentBuilds: kpipe processes sharing one cache
// directory fetch the same remote base at once; each gets the whole
// checkout.
func TestRemoteBaseConcurrentBuilds(t *testing.T) {
	f := newRemoteFixture(t)
	cache := t.TempDir()
	url := "file://" + f.bare + "//base?ref=v1"
	want := mustBuild(t, overlay(t, "resources:\n- "+url+"\n"), "--no-cache")
	var wg sync.WaitGroup
	errs := make(chan string, 6)
	for i := 0; i < 6; i++ {
		dir := overlay(t, "resources:\n- "+url+"\n")
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate processes, as concurrent runs are (the CLI
			// library is not safe for concurrent use in one process).
			cmd := exec.Command(os.Args[0], "--", "build", dir, "--cache-dir", cache)
			cmd.Env = append(os.Environ(), "KPIPE_TEST_AS_KPIPE=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || string(out) != want {
				errs <- fmt.Sprintf("%v: %s%s", err, stderr.String(), out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	left, _ := filepath.Glob(filepath.Join(cache, "remote", "git", "*", ".tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary checkouts left: %v", left)
	}
}

// TestRemoteBaseBehindWebPage: an http(s) URL without a repository marker
// whose GET answers a web page (as a forge does for a repository's URL)
// is tried as a repository, as kustomize does.
func TestRemoteBaseBehindWebPage(t *testing.T) {
	f := newRemoteFixture(t)
	root := t.TempDir()
	runGit(t, root, "clone", "--quiet", "--bare", f.bare, filepath.Join(root, "org", "repo"))
	git := gitHTTPServer(t, root)
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/base") {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<!DOCTYPE html>\n<html><body>a: [repository page</body></html>\n")
			return
		}
		git.Config.Handler.ServeHTTP(w, r)
	}))
	dir := overlay(t, "resources:\n- "+srv.URL+"/org/repo/base?ref=v1\n")
	got := mustBuild(t, dir, "--cache-dir", t.TempDir())
	if want := mustBuild(t, filepath.Join(f.checkoutAt(t, f.v1), "base"), "--no-cache"); got != want {
		t.Errorf("output differs from the local checkout's:\n%s\nwant:\n%s", got, want)
	}
	// Pinned to a commit and kept: a second build asks nothing, not even
	// the GET.
	pinned := overlay(t, "resources:\n- "+srv.URL+"/org/repo/base?ref="+f.v1+"\n")
	cache := t.TempDir()
	mustBuild(t, pinned, "--cache-dir", cache)
	srv.n.Store(0)
	if again := mustBuild(t, pinned, "--cache-dir", cache); again != got || srv.n.Load() != 0 {
		t.Errorf("second build of a pinned URL (%d requests):\n%s", srv.n.Load(), again)
	}

	// No repository there: the page's error alone, as kustomize says it.
	none := overlay(t, "resources:\n- "+srv.URL+"/org/none/base?ref=v1\n")
	code, _, errOut := kpipe(t, "build", none, "--cache-dir", t.TempDir())
	if code == 0 || !strings.Contains(errOut, "MalformedYAMLError") || strings.Contains(errOut, "git") {
		t.Errorf("a page that is no repository: exit %d: %s", code, errOut)
	}
	kz := kustomizeBinary(t)
	if kout, err := exec.Command(kz, "build", dir).Output(); err != nil || string(kout) != got {
		t.Errorf("kustomize build: %v\n%s", err, kout)
	}
	kerr, _ := exec.Command(kz, "build", none).CombinedOutput()
	if strings.TrimSpace(string(kerr)) != strings.TrimSpace(errOut) {
		t.Errorf("kustomize says\n%s\nkpipe\n%s", kerr, errOut)
	}
}
