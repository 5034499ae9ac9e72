// Package action holds the shell steps of kpipe's GitHub Action
// (action.yml at the repository root): install.sh, run.sh and
// comment.sh. This test runs them as the Action does, on this machine,
// against a throwaway git repository, a release served from 127.0.0.1,
// and a stand-in for the three GitHub REST calls comment.sh makes (the
// real API cannot be reached from a test).
package action

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// need skips the test when a program the steps use is missing.
func need(t *testing.T, progs ...string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the Action's steps are bash scripts; tested on unix")
	}
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s not installed (apt-get install %s): the Action's steps are not tested", p, p)
		}
	}
}

// kpipeBin is kpipe built once from this module for the tests (TestMain).
var kpipeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kpipe-action-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kpipeBin = filepath.Join(dir, "kpipe")
	// As plain `go build` builds it: the packages go test compiled are
	// reused (another configuration, CGO_ENABLED=0, compiled every package
	// that reaches net again: half a minute of a fresh clone's go test).
	// (kpipe-full beside it, as the release archives place it.)
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "../cmd/kpipe", "../cmd/kpipe-full")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ../cmd/kpipe ../cmd/kpipe-full: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binDir is a directory holding kpipe, for PATH.
func binDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(kpipeBin, filepath.Join(dir, "kpipe")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// release serves, under /<version>/, a kpipe archive for this machine named
// as goreleaser names it and a checksums.txt listing it (tamper changes the
// archive after its checksum was taken).
func release(t *testing.T, bin, version string, tamper bool) *httptest.Server {
	t.Helper()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var archive bytes.Buffer
	gz := gzip.NewWriter(&archive)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: "kpipe", Mode: 0o755, Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("kpipe_%s_%s_%s.tar.gz", version, runtime.GOOS, runtime.GOARCH)
	sum := sha256.Sum256(archive.Bytes())
	checksums := fmt.Sprintf("%x  kpipe_%s_windows_amd64.zip\n%s  %s\n", sha256.Sum256(nil), version, hex.EncodeToString(sum[:]), name)
	body := archive.Bytes()
	if tamper {
		body = append(append([]byte(nil), body...), 0)
	}
	files := map[string][]byte{"/" + version + "/" + name: body, "/" + version + "/checksums.txt": []byte(checksums)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// step runs one of the Action's scripts with env added to this process's
// environment, and returns its exit code and combined output.
func step(t *testing.T, dir, script string, env ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(mustAbs(t, "."), script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return code, string(out)
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInstallVerifiesTheRelease: install.sh installs the archive for this
// platform when it matches checksums.txt, and refuses a tampered one.
func TestInstallVerifiesTheRelease(t *testing.T) {
	need(t, "bash", "curl", "tar")
	bin := kpipeBin
	for _, tamper := range []bool{false, true} {
		srv := release(t, bin, "v9.8.7", tamper)
		dest, ghPath := t.TempDir(), filepath.Join(t.TempDir(), "path")
		code, out := step(t, t.TempDir(), "install.sh", "KPIPE_VERSION=v9.8.7", "KPIPE_RELEASE_URL="+srv.URL,
			"KPIPE_INSTALL_DIR="+dest, "GITHUB_PATH="+ghPath)
		installed := filepath.Join(dest, "kpipe")
		if tamper {
			if code == 0 || !strings.Contains(out, "does not match checksums.txt") {
				t.Errorf("a tampered archive: exit %d\n%s", code, out)
			}
			if _, err := os.Stat(installed); err == nil {
				t.Error("a tampered archive was installed")
			}
			continue
		}
		if code != 0 {
			t.Fatalf("install.sh: exit %d\n%s", code, out)
		}
		if p, _ := os.ReadFile(ghPath); strings.TrimSpace(string(p)) != dest {
			t.Errorf("GITHUB_PATH holds %q, want %q", p, dest)
		}
		v, err := exec.Command(installed, "version").Output()
		if err != nil || !strings.Contains(string(v), "+kpipe.") {
			t.Errorf("the installed kpipe: %q, %v", v, err)
		}
	}
}

// fakeGitHub answers the three calls comment.sh makes: list, create and
// update an issue's comments; it requires the bearer token.
type fakeGitHub struct {
	mu       sync.Mutex
	comments []map[string]any
	next     int
	token    string
}

func (g *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+g.token {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/repos/o/r/issues/7/comments":
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		lo := min((page-1)*per, len(g.comments))
		hi := min(lo+per, len(g.comments))
		_ = json.NewEncoder(w).Encode(g.comments[lo:hi])
	case r.Method == http.MethodPost && r.URL.Path == "/repos/o/r/issues/7/comments":
		var c map[string]any
		_ = json.NewDecoder(r.Body).Decode(&c)
		g.next++
		c["id"] = g.next
		g.comments = append(g.comments, c)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(c)
	case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/repos/o/r/issues/comments/"):
		id, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/repos/o/r/issues/comments/"))
		var c map[string]any
		_ = json.NewDecoder(r.Body).Decode(&c)
		for _, old := range g.comments {
			if old["id"] == float64(id) || old["id"] == id {
				old["body"] = c["body"]
				_ = json.NewEncoder(w).Encode(old)
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

// TestDiffOnAPullRequest: on a throwaway repository with a pull request
// that changes a base, run.sh writes kpipe's markdown diff (with the
// marker) to the job summary and the body file and says changed=true;
// comment.sh creates the comment once and then updates it (other
// people's comments, more than a page of them, untouched).
func TestDiffOnAPullRequest(t *testing.T) {
	need(t, "bash", "curl", "git", "python3")
	binDir := binDir(t)
	repo := t.TempDir()
	write(t, repo, map[string]string{
		"base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  color: blue\n",
		"prod/kustomization.yaml": "resources:\n- ../base\nnamePrefix: prod-\n",
	})
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "base")
	base := git(t, repo, "rev-parse", "HEAD")
	write(t, repo, map[string]string{"base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  color: green\n"})
	git(t, repo, "commit", "-q", "-am", "green")

	tmp := t.TempDir()
	event := filepath.Join(tmp, "event.json")
	write(t, tmp, map[string]string{"event.json": fmt.Sprintf(`{"pull_request":{"number":7,"base":{"sha":%q}}}`, base)})
	summary, outputs, body := filepath.Join(tmp, "summary.md"), filepath.Join(tmp, "outputs"), filepath.Join(tmp, "body.md")
	env := []string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH=" + event, "GITHUB_STEP_SUMMARY=" + summary,
		"GITHUB_OUTPUT=" + outputs, "KPIPE_BODY_FILE=" + body, "XDG_CACHE_HOME=" + filepath.Join(tmp, "cache")}
	code, out := step(t, repo, "run.sh", env...)
	if code != 0 {
		t.Fatalf("run.sh: exit %d\n%s", code, out)
	}
	md, _ := os.ReadFile(body)
	for _, want := range []string{"<!-- kpipe-diff -->", "### kpipe diff: 1 of", "`prod`", "-  color: blue", "+  color: green"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the body lacks %q:\n%s", want, md)
		}
	}
	if s, _ := os.ReadFile(summary); string(s) != string(md) {
		t.Errorf("the job summary is not the body:\n%s", s)
	}
	if o, _ := os.ReadFile(outputs); !strings.Contains(string(o), "changed=true") || !strings.Contains(string(o), "body-file="+body) {
		t.Errorf("outputs: %s", o)
	}

	gh := &fakeGitHub{token: "t0ken"}
	for i := 0; i < 101; i++ { // more than a page of others' comments
		gh.next++
		gh.comments = append(gh.comments, map[string]any{"id": gh.next, "body": fmt.Sprintf("comment %d", i)})
	}
	api := httptest.NewServer(gh)
	defer api.Close()
	cenv := []string{"GITHUB_TOKEN=t0ken", "GITHUB_API_URL=" + api.URL, "GITHUB_REPOSITORY=o/r",
		"GITHUB_EVENT_PATH=" + event, "KPIPE_BODY_FILE=" + body}
	for i := 0; i < 2; i++ {
		if code, out := step(t, repo, "comment.sh", cenv...); code != 0 {
			t.Fatalf("comment.sh (%d): exit %d\n%s", i, code, out)
		}
		if i == 0 {
			// The next push: another body, the same comment.
			write(t, tmp, map[string]string{"body.md": "<!-- kpipe-diff -->\nsecond\n"})
		}
	}
	var ours []map[string]any
	for _, c := range gh.comments {
		if strings.Contains(c["body"].(string), "<!-- kpipe-diff -->") {
			ours = append(ours, c)
		}
	}
	if len(ours) != 1 || ours[0]["body"] != "<!-- kpipe-diff -->\nsecond\n" || len(gh.comments) != 102 {
		t.Errorf("want one kpipe comment, updated, among 102; got %d of %d: %v", len(ours), len(gh.comments), ours)
	}
	if code, out := step(t, repo, "comment.sh", append(cenv, "GITHUB_TOKEN=wrong")...); code == 0 {
		t.Errorf("a wrong token: exit 0\n%s", out)
	}

	// No change: changed=false, and the body says so.
	git(t, repo, "checkout", "-q", base)
	if err := os.Remove(outputs); err != nil {
		t.Fatal(err)
	}
	if code, out := step(t, repo, "run.sh", env...); code != 0 {
		t.Fatalf("run.sh without a change: exit %d\n%s", code, out)
	}
	if o, _ := os.ReadFile(outputs); !strings.Contains(string(o), "changed=false") {
		t.Errorf("outputs without a change: %s", o)
	}
}

// TestBuildAllOnPush: on a push, run.sh checks that every root builds, and
// fails naming a root that does not.
func TestBuildAllOnPush(t *testing.T) {
	need(t, "bash")
	binDir := binDir(t)
	repo := t.TempDir()
	write(t, repo, map[string]string{
		"ok/kustomization.yaml":     "resources:\n- cm.yaml\n",
		"ok/cm.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
		"broken/kustomization.yaml": "resources:\n- missing.yaml\n",
	})
	env := []string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"), "GITHUB_EVENT_NAME=push",
		"XDG_CACHE_HOME=" + filepath.Join(t.TempDir(), "cache")}
	code, out := step(t, repo, "run.sh", env...)
	if code == 0 || !strings.Contains(out, "broken") {
		t.Errorf("a broken root: exit %d\n%s", code, out)
	}
	if err := os.RemoveAll(filepath.Join(repo, "broken")); err != nil {
		t.Fatal(err)
	}
	if code, out := step(t, repo, "run.sh", env...); code != 0 {
		t.Errorf("every root builds: exit %d\n%s", code, out)
	}
}
