package cli

import (
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// switchableGitHost serves the bare repositories under root over git's
// smart HTTP protocol on one 127.0.0.1 address that can go down (nothing
// listens: connections are refused), answer every request with a status,
// or come back up, as a real git host does.
type switchableGitHost struct {
	t      *testing.T
	addr   string
	root   string
	mu     sync.Mutex
	srv    *http.Server
	status int // 0: serve git; else answer every request with it
}

func newSwitchableGitHost(t *testing.T, root string) *switchableGitHost {
	h := &switchableGitHost{t: t, root: root}
	h.up()
	t.Cleanup(h.down)
	return h
}

func (h *switchableGitHost) URL() string { return "http://" + h.addr }

func (h *switchableGitHost) up() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	addr := h.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		h.t.Fatalf("listening on %s again: %v", addr, err)
	}
	h.addr = l.Addr().String()
	git := gitHTTPServer(h.t, h.root) // the cgi handler, behind our listener
	git.Close()
	handler := git.Config.Handler
	h.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		status := h.status
		h.mu.Unlock()
		if status != 0 {
			http.Error(w, http.StatusText(status), status)
			return
		}
		handler.ServeHTTP(w, r)
	})}
	go func() { _ = h.srv.Serve(l) }()
}

func (h *switchableGitHost) down() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.srv != nil {
		if err := h.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.t.Logf("closing the git host: %v", err)
		}
		h.srv = nil
	}
}

func (h *switchableGitHost) answer(status int) {
	h.mu.Lock()
	h.status = status
	h.mu.Unlock()
}

// TestRemoteHostDown: a root with a remote base at a tag builds once; when
// the git host then cannot be reached (nothing listens, or it answers
// 503), the next build uses the kept checkout of the commit the tag
// resolved to, with one warning naming the URL, the ref, the commit and
// when it was resolved, and prints the same bytes. A ref pinned to a full
// commit needs no network at all. A host that answers that the repository
// is not there (404) is a repository that cannot be read: the kept
// checkout again, with a warning that says so. A host that answers that
// the ref is gone fails the build, as kustomize does; so does a URL whose
// checkout was never kept.
func TestRemoteHostDown(t *testing.T) {
	f := newRemoteFixture(t)
	host := newSwitchableGitHost(t, f.served)
	cache := t.TempDir()
	repoURL := host.URL() + "/repo.git"
	tagged := overlay(t, "resources:\n- "+repoURL+"//base?ref=v1\n")
	pinned := overlay(t, "resources:\n- "+repoURL+"//base?ref="+f.v1+"\n")
	want := mustBuild(t, tagged, "--cache-dir", cache)
	rootURL := repoURL + "//base?ref=v1" // a root that is itself a git URL
	wantRoot := mustBuild(t, rootURL, "--cache-dir", cache)
	if got := mustBuild(t, pinned, "--cache-dir", cache); got != want {
		t.Fatalf("the pinned base differs from the tagged one:\n%s\nwant:\n%s", got, want)
	}

	check := func(what string) {
		t.Helper()
		code, out, errOut := kpipe(t, "build", tagged, "--cache-dir", cache)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", what, code, errOut)
		}
		if out != want {
			t.Errorf("%s: output differs from the first build's:\n%s", what, out)
		}
		if n := strings.Count(errOut, "cannot be reached"); n != 1 {
			t.Errorf("%s: %d warnings, want one:\n%s", what, n, errOut)
		}
		for _, part := range []string{repoURL, "ref v1", "commit " + f.v1, "resolved to at 20"} {
			if !strings.Contains(errOut, part) {
				t.Errorf("%s: the warning does not name %q:\n%s", what, part, errOut)
			}
		}
		code, out, errOut = kpipe(t, "build", rootURL, "--cache-dir", cache)
		if code != 0 || out != wantRoot || strings.Count(errOut, "cannot be reached") != 1 {
			t.Errorf("%s: a root at a git URL: exit %d, output differs: %v, stderr:\n%s", what, code, out != wantRoot, errOut)
		}
		code, out, errOut = kpipe(t, "build", pinned, "--cache-dir", cache)
		if code != 0 || out != want || strings.Contains(errOut, "cannot be reached") {
			t.Errorf("%s: a pinned commit: exit %d, stderr %q, output differs: %v", what, code, errOut, out != want)
		}
	}

	host.down()
	check("host down")
	host.up()
	host.answer(http.StatusServiceUnavailable)
	check("host answering 503")

	// A 404 (the repository moved or is gone): git cannot read it, which
	// says nothing of the ref: the kept checkout, with one warning.
	host.answer(http.StatusNotFound)
	if code, out, errOut := kpipe(t, "build", tagged, "--cache-dir", cache); code != 0 || out != want ||
		strings.Count(errOut, "cannot be read") != 1 || !strings.Contains(errOut, repoURL) || !strings.Contains(errOut, "commit "+f.v1) {
		t.Errorf("repository gone: exit %d, output differs: %v, stderr %s", code, out != want, errOut)
	}
	// The tag deleted at the host: kustomize fails, and so does kpipe,
	// although the tag's old checkout is kept.
	host.answer(0)
	runGit(t, f.bare, "tag", "-d", "v1")
	code, out, errOut := kpipe(t, "build", tagged, "--cache-dir", cache)
	if code == 0 || out != "" || !strings.Contains(errOut, "v1") {
		t.Errorf("tag gone: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if strings.Contains(errOut, "cannot be reached") || strings.Contains(errOut, "cannot be read") {
		t.Errorf("tag gone: warned of an unreadable repository instead of failing:\n%s", errOut)
	}

	// Nothing kept for a URL: an unreachable host fails, naming it.
	host.down()
	other := overlay(t, "resources:\n- "+repoURL+"//base?ref=main\n")
	if code, out, errOut := kpipe(t, "build", other, "--cache-dir", t.TempDir()); code == 0 || out != "" || !strings.Contains(errOut, repoURL) {
		t.Errorf("never kept, host down: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
}

// TestRemoteRepositoryMoved: a remote base at a tag of a file:// repository
// builds once; the repository then moves (git: "does not appear to be a
// git repository"), and the next build uses the kept checkout of the
// commit the tag resolved to, with one warning, and prints the same bytes.
func TestRemoteRepositoryMoved(t *testing.T) {
	f := newRemoteFixture(t)
	cache := t.TempDir()
	url := "file://" + filepath.ToSlash(f.bare)
	tagged := overlay(t, "resources:\n- "+url+"//base?ref=v1\n")
	want := mustBuild(t, tagged, "--cache-dir", cache)
	if err := os.Rename(f.bare, f.bare+".moved"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := kpipe(t, "build", tagged, "--cache-dir", cache)
	if code != 0 || out != want {
		t.Fatalf("moved repository: exit %d, output differs: %v\n%s", code, out != want, errOut)
	}
	if n := strings.Count(errOut, "cannot be read"); n != 1 || !strings.Contains(errOut, "ref v1") || !strings.Contains(errOut, "commit "+f.v1) {
		t.Errorf("moved repository: %d warnings, want one naming the ref and the commit:\n%s", n, errOut)
	}
}
