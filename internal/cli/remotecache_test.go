package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kpipe/kpipe/cache/remote"
	"github.com/kpipe/kpipe/cache/remote/backend"
	"github.com/kpipe/kpipe/cache/remote/remotetest"
	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/genrepo"
)

// remoteServers runs f against a fresh nginx (HTTP) and a fresh MinIO (S3).
func remoteServers(t *testing.T, f func(t *testing.T, srv *remotetest.Server)) {
	t.Run("nginx", func(t *testing.T) { f(t, remotetest.StartNginx(t, remotetest.NginxOptions{})) })
	t.Run("minio", func(t *testing.T) { f(t, remotetest.StartMinIO(t)) })
}

// checkout writes the synthetic monorepo into a new directory (a runner's
// checkout) and returns it.
func checkout(t *testing.T, spec genrepo.Spec) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := genrepo.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runnerBuild runs `kpipe build-all .` in tree (as a CI runner does in
// its checkout) with its own cache directory, writing to tree/out.
func runnerBuild(t *testing.T, tree, cacheDir string, extra ...string) (int, batch.Report, string) {
	t.Helper()
	t.Chdir(tree)
	rep := filepath.Join(t.TempDir(), "report.json")
	args := append([]string{"build-all", ".", "--out-dir", "out", "--report", rep, "--cache-dir", cacheDir, "--stats"}, extra...)
	code, _, stderr := kpipe(t, args...)
	var r batch.Report
	data, err := os.ReadFile(rep)
	if err != nil {
		t.Fatalf("no report (exit %d): %v\n%s", code, err, stderr)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return code, r, stderr
}

func stagesRan(r batch.Report) int {
	n := 0
	for _, s := range r.Summary.Stages {
		n += s.Ran
	}
	return n
}

// remoteWarnings are the lines of stderr about the remote cache.
func remoteWarnings(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "Warning: remote cache") {
			out = append(out, l)
		}
	}
	return out
}

var remoteSpec = genrepo.Spec{Apps: 6, Envs: 3, ResourcesPerApp: 3}

// Two runners, each with an empty cache directory and its own checkout at
// its own path, share one server: the first renders the monorepo and
// uploads (--remote-cache-write); the second renders it with no stage run
// and byte-identical outputs. A read-only runner uploads nothing.
func TestRemoteCacheTwoRunners(t *testing.T) {
	remoteServers(t, func(t *testing.T, srv *remotetest.Server) {
		first := checkout(t, remoteSpec)
		code, r1, stderr := runnerBuild(t, first, t.TempDir(), "--remote-cache", srv.URL, "--remote-cache-write")
		if code != 0 || stagesRan(r1) == 0 || r1.Summary.Remote == nil || r1.Summary.Remote.Uploads == 0 {
			t.Fatalf("first runner: exit %d, stages ran %d, remote %+v\n%s", code, stagesRan(r1), r1.Summary.Remote, stderr)
		}
		if !strings.Contains(stderr, "remote cache "+strings.Split(srv.URL, "?")[0]) {
			t.Errorf("--stats names no remote cache:\n%s", stderr)
		}
		objects := len(srv.Objects(t))

		second := checkout(t, remoteSpec)
		code, r2, stderr := runnerBuild(t, second, t.TempDir(), "--remote-cache", srv.URL)
		if code != 0 {
			t.Fatalf("second runner: exit %d\n%s", code, stderr)
		}
		if n := stagesRan(r2); n != 0 || r2.Summary.NodesBuilt != 0 {
			t.Errorf("second runner ran %d stages, built %d nodes; want none (stats %+v)", n, r2.Summary.NodesBuilt, r2.Summary.Stages)
		}
		rs := r2.Summary.Remote
		if rs == nil || rs.Hits == 0 || rs.Refused != 0 || rs.Uploads != 0 || rs.BytesDown == 0 || rs.Failed {
			t.Errorf("second runner's remote stats: %+v", rs)
		}
		if w := remoteWarnings(stderr); len(w) != 0 {
			t.Errorf("warnings: %q", w)
		}
		o1, o2 := rendered(t, filepath.Join(first, "out")), rendered(t, filepath.Join(second, "out"))
		if len(o1) < 18 || !equalMaps(o1, o2) {
			t.Errorf("outputs differ between the runners (%d and %d files)", len(o1), len(o2))
		}
		if got := len(srv.Objects(t)); got != objects {
			t.Errorf("a read-only runner changed the server: %d objects, had %d", got, objects)
		}
	})
}

// Objects changed on the server are detected, named in a warning, counted
// in the report and rebuilt: the outputs are those of the first runner.
func TestRemoteCachePoisonedObjects(t *testing.T) {
	remoteServers(t, func(t *testing.T, srv *remotetest.Server) {
		first := checkout(t, remoteSpec)
		if code, _, stderr := runnerBuild(t, first, t.TempDir(), "--remote-cache", srv.URL, "--remote-cache-write"); code != 0 {
			t.Fatalf("first runner: exit %d\n%s", code, stderr)
		}
		// Poison every object that renders app001 (records and content).
		b, err := backend.Open(srv.URL, remote.Options{})
		if err != nil {
			t.Fatal(err)
		}
		poisoned := 0
		for name, data := range srv.Objects(t) {
			if bytes.Contains(data, []byte("app001")) {
				kind, hex, _ := strings.Cut(name, "/")
				if err := b.Put(context.Background(), remote.Kind(kind), hex, bytes.ReplaceAll(data, []byte("app001"), []byte("evil01"))); err != nil {
					t.Fatal(err)
				}
				poisoned++
			}
		}
		if poisoned == 0 {
			t.Fatal("no object on the server renders app001")
		}
		second := checkout(t, remoteSpec)
		code, r2, stderr := runnerBuild(t, second, t.TempDir(), "--remote-cache", srv.URL)
		if code != 0 {
			t.Fatalf("second runner: exit %d\n%s", code, stderr)
		}
		o1, o2 := rendered(t, filepath.Join(first, "out")), rendered(t, filepath.Join(second, "out"))
		if !equalMaps(o1, o2) {
			t.Error("outputs differ from the first runner's")
		}
		for name, out := range o2 {
			if strings.Contains(out, "evil01") {
				t.Errorf("%s holds poisoned content", name)
			}
		}
		rs := r2.Summary.Remote
		if rs == nil || rs.Refused == 0 || rs.Hits == 0 {
			t.Fatalf("remote stats %+v: want refused objects and hits", rs)
		}
		w := remoteWarnings(stderr)
		t.Logf("%d objects poisoned; the second runner said:\n%s", poisoned, stderr)
		if len(w) == 0 || !strings.Contains(w[0], "refused ") || !strings.Contains(w[0], "building it here") {
			t.Errorf("no warning names a refused object:\n%s", stderr)
		}
		// Only app001's roots were built again.
		for _, rr := range r2.Roots {
			rebuilt := rr.NodesBuilt > 0 || rr.StageMisses > 0
			if app001 := strings.Contains(rr.Path, "/app001/"); rebuilt != app001 {
				t.Errorf("%s: rebuilt=%v (nodes built %d, stages ran %d)", rr.Path, rebuilt, rr.NodesBuilt, rr.StageMisses)
			}
		}
	})
}

// The server stopped in the middle of a run changes nothing but the time:
// the outputs are byte-identical, and there is one warning line. The
// second runner reaches the server through a proxy that stops the server
// (and drops every connection from then on, as a dead server does) once it
// has passed 20 requests: mid-run whatever the machine's load, where a
// stop timed by the outputs written could come after the last fetch.
func TestRemoteCacheServerStoppedMidRun(t *testing.T) {
	remoteServers(t, func(t *testing.T, srv *remotetest.Server) {
		spec := genrepo.Spec{Apps: 20, Envs: 3, ResourcesPerApp: 3}
		first := checkout(t, spec)
		if code, _, stderr := runnerBuild(t, first, t.TempDir(), "--remote-cache", srv.URL, "--remote-cache-write"); code != 0 {
			t.Fatalf("first runner: exit %d\n%s", code, stderr)
		}
		second, cacheDir := checkout(t, spec), t.TempDir()
		url, served := stoppingProxy(t, srv, 20)
		code, r2, stderr := runnerBuild(t, second, cacheDir, "--remote-cache", url, "--remote-cache-write")
		if code != 0 {
			t.Fatalf("second runner: exit %d\n%s", code, stderr)
		}
		rs := r2.Summary.Remote
		if rs == nil || !rs.Failed || rs.Hits == 0 {
			t.Fatalf("the server was not stopped mid-run (%d requests served): remote stats %+v", served(), rs)
		}
		if w := remoteWarnings(stderr); len(w) != 1 {
			t.Errorf("want one warning line about the remote cache, got %q", w)
		}
		if !equalMaps(rendered(t, filepath.Join(first, "out")), rendered(t, filepath.Join(second, "out"))) {
			t.Error("outputs differ from the first runner's")
		}
	})
}

// stoppingProxy serves srv's remote cache URL through a reverse proxy on
// 127.0.0.1 that passes n requests, then stops srv and drops every later
// connection. It returns the URL to give kpipe and the number of requests
// passed.
func stoppingProxy(t *testing.T, srv *remotetest.Server, n int64) (string, func() int64) {
	t.Helper()
	m := regexp.MustCompile(`(https?://)(127\.0\.0\.1:[0-9]+)`).FindStringSubmatch(srv.URL)
	if m == nil {
		t.Fatalf("no http://127.0.0.1:PORT in the server's URL %s", srv.URL)
	}
	upstream, err := neturl.Parse(m[1] + m[2])
	if err != nil {
		t.Fatal(err)
	}
	// The Host header is passed on unchanged, so that S3 signatures made
	// for the proxy's address hold.
	fwd := httputil.NewSingleHostReverseProxy(upstream)
	var passed atomic.Int64
	var stop sync.Once
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if passed.Add(1) > n {
			stop.Do(srv.Stop)
			panic(http.ErrAbortHandler) // the connection closes without an answer
		}
		fwd.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return strings.Replace(srv.URL, m[2], strings.TrimPrefix(proxy.URL, "http://"), 1),
		func() int64 { return min(passed.Load(), n) }
}

// outputs counts the files build-all wrote in an out dir.
func outputs(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			n++
		}
		return nil
	})
	return n
}

// Secrets stay on the runner by default: a secretGenerator literal never
// reaches the server, and the reader builds that node itself.
func TestRemoteCacheSecretsStayHome(t *testing.T) {
	srv := remotetest.StartNginx(t, remotetest.NginxOptions{})
	write := func(dir string) {
		files := map[string]string{
			"app/kustomization.yaml": "resources:\n- cm.yaml\nsecretGenerator:\n- name: db\n  literals:\n  - password=Tr0ub4dor-literal\n",
			"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  k: v\n",
		}
		for p, c := range files {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := checkout(t, genrepo.Spec{Apps: 1, Envs: 1})
	write(first)
	if code, _, stderr := runnerBuild(t, first, t.TempDir(), "--remote-cache", srv.URL, "--remote-cache-write"); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	secret := []byte("Tr0ub4dor-literal")
	encoded := []byte("VHIwdWI0ZG9yLWxpdGVyYWw=") // base64, as the Secret's data holds it
	for name, data := range srv.Objects(t) {
		if bytes.Contains(data, secret) || bytes.Contains(data, encoded) {
			t.Errorf("%s on the server holds the secret", name)
		}
	}
	out, _ := os.ReadFile(filepath.Join(first, "out", "app.yaml"))
	if !bytes.Contains(out, []byte("password: ")) {
		t.Fatalf("the Secret is not in the output:\n%s", out)
	}
	// With --remote-cache-sensitive it does travel: the check above can fail.
	if code, _, stderr := runnerBuild(t, first, t.TempDir(), "--remote-cache", srv.URL, "--remote-cache-write", "--remote-cache-sensitive"); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	found := false
	for _, data := range srv.Objects(t) {
		found = found || bytes.Contains(data, secret) || bytes.Contains(data, encoded)
	}
	if !found {
		t.Error("with --remote-cache-sensitive the secret is not on the server: the check above proves nothing")
	}
}

// Flags that need another are errors; a bad URL is an error naming it.
func TestRemoteCacheFlags(t *testing.T) {
	tree := checkout(t, genrepo.Spec{Apps: 1, Envs: 1})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--remote-cache-write"}, "--remote-cache-write needs --remote-cache URL"},
		{[]string{"--remote-cache", "http://127.0.0.1:1/c", "--remote-cache-sensitive"}, "--remote-cache-sensitive needs --remote-cache-write"},
		{[]string{"--remote-cache", "http://127.0.0.1:1/c", "--no-cache"}, "--remote-cache needs the local cache"},
		{[]string{"--remote-cache", "ftp://x/y"}, "scheme must be http, https or s3"},
	} {
		code, _, stderr := kpipe(t, append([]string{"build-all", tree, "--cache-dir", t.TempDir()}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
	// A server that is not there: one warning, and the build goes on.
	code, out, stderr := kpipe(t, "build", filepath.Join(tree, "apps/app000/dev"), "--cache-dir", t.TempDir(), "--remote-cache", "http://127.0.0.1:1/cache")
	if code != 0 || len(remoteWarnings(stderr)) != 1 || !strings.Contains(out, "kind: Deployment") {
		t.Errorf("unreachable server: exit %d, warnings %q", code, remoteWarnings(stderr))
	}
}

// rendered are the outputs under a runner's out dir (not the manifest,
// which names the runner's paths, nor the lock runs take there).
func rendered(t *testing.T, dir string) map[string]string {
	m := outputsUnder(t, dir)
	delete(m, batch.ManifestName)
	delete(m, batch.LockName)
	return m
}

// kpipe build shares through the remote cache too: a second runner with an
// empty cache prints the same bytes, and its cache then holds the entries
// it fetched (a third build with the server gone still hits them).
func TestRemoteCacheBuild(t *testing.T) {
	srv := remotetest.StartNginx(t, remotetest.NginxOptions{})
	first, second := checkout(t, remoteSpec), checkout(t, remoteSpec)
	code, out1, stderr := kpipe(t, "build", filepath.Join(first, "apps/app002/prod"), "--cache-dir", t.TempDir(),
		"--remote-cache", srv.URL, "--remote-cache-write")
	if code != 0 {
		t.Fatalf("first: exit %d\n%s", code, stderr)
	}
	objects := len(srv.Objects(t))
	if objects == 0 {
		t.Fatal("kpipe build --remote-cache-write uploaded nothing")
	}
	before := srv.Requests()
	cacheDir := t.TempDir()
	code, out2, stderr := kpipe(t, "build", filepath.Join(second, "apps/app002/prod"), "--cache-dir", cacheDir, "--remote-cache", srv.URL)
	if code != 0 || out2 != out1 || len(remoteWarnings(stderr)) != 0 {
		t.Fatalf("second: exit %d, same output %v\n%s", code, out2 == out1, stderr)
	}
	if srv.Requests() == before {
		t.Error("the second runner asked the server nothing")
	}
	srv.Stop()
	// The server is gone; what was fetched is local now, so the build asks
	// the server nothing (no warning).
	code, out3, stderr := kpipe(t, "build", filepath.Join(second, "apps/app002/prod"), "--cache-dir", cacheDir, "--remote-cache", srv.URL)
	if code != 0 || out3 != out1 || len(remoteWarnings(stderr)) != 0 {
		t.Errorf("third, server stopped: exit %d, same output %v, warnings %q", code, out3 == out1, remoteWarnings(stderr))
	}
}
