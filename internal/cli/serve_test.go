package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/kpipe/kpipe/cache/server/servertest"
	"github.com/kpipe/kpipe/internal/genrepo"
)

// served is a `kpipe cache serve` process.
type served struct {
	URL  string
	dir  string
	cmd  *exec.Cmd
	log  *servertest.Buffer
	done chan struct{}
}

// serveBinaries builds kpipe, kpipe-full and kpipe-cache-server into one directory,
// as the release archives place them, once per test run, and returns
// kpipe's path. A test of `kpipe cache serve` runs this kpipe, which
// hands over to the server beside it.
var serveBinaries = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "kpipe-serve-bin-")
	if err != nil {
		return "", err
	}
	serveBinDir.Store(dir)
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	for _, b := range []struct{ out, pkg string }{{"kpipe", "../../cmd/kpipe"}, {"kpipe-full", "../../cmd/kpipe-full"}, {"kpipe-cache-server", "../../cmd/kpipe-cache-server"}} {
		// As plain `go build` builds them, reusing what go test compiled.
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b.out+exe), b.pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return filepath.Join(dir, "kpipe"+exe), nil
})

// serveBinDir is serveBinaries' directory, once made; TestMain removes it.
var serveBinDir atomic.Value

// kpipeWithServer returns the kpipe binary that has kpipe-cache-server
// beside it (serveBinaries); it skips the test without a go command.
func kpipeWithServer(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command to build kpipe and kpipe-cache-server (https://go.dev/dl)")
	}
	bin, err := serveBinaries()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startServe runs `kpipe cache serve --dir dir --listen 127.0.0.1:0` and
// the extra flags with a kpipe binary that has the server beside it,
// waits for the server's start-up line and stops it (SIGTERM) when the
// test ends.
func startServe(t *testing.T, dir string, extra ...string) *served {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("stops the server with SIGTERM")
	}
	args := append([]string{"cache", "serve", "--dir", dir, "--listen", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(kpipeWithServer(t), args...)
	s := &served{dir: dir, cmd: cmd, log: &servertest.Buffer{}, done: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(s.log, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); pw.Close(); close(s.done) }()
	t.Cleanup(s.stop)
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), " on http://"); ok {
				addr, _, _ := strings.Cut(rest, ";")
				line <- "http://" + addr
				break
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case s.URL = <-line:
	case <-s.done:
		t.Fatalf("kpipe cache serve exited: %s", s.log)
	case <-time.After(30 * time.Second):
		t.Fatalf("kpipe cache serve did not start: %s", s.log)
	}
	return s
}

// stop sends SIGTERM and waits for a clean exit.
func (s *served) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// metric reads one sample from the server's /metrics.
func (s *served) metric(t *testing.T, name string) float64 {
	t.Helper()
	v, ok := servertest.Metric(t, s.URL, name)
	if !ok {
		t.Fatalf("no %s in /metrics", name)
	}
	return v
}

func writeTokens(t *testing.T, tokens ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte(strings.Join(tokens, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	serveReadToken  = "pr-runners-token-0123456789"
	serveWriteToken = "main-branch-token-0123456789"
)

// Runner A (main branch, write token) fills `kpipe cache serve`; runner B
// (a pull request, read token, an empty local cache, its checkout at
// another path) builds the monorepo with no node built, and its outputs
// are byte-identical to a --no-cache build. A read-only token cannot
// write (403), no token reads nothing (401), and no message shows a
// token.
func TestCacheServeTwoRunners(t *testing.T) {
	srv := startServe(t, filepath.Join(t.TempDir(), "store"),
		"--read-token-file", writeTokens(t, serveReadToken), "--write-token-file", writeTokens(t, serveWriteToken))
	if !strings.Contains(srv.log.String(), "tokens needed (1 read, 1 write); only this machine can connect") {
		t.Errorf("start-up line: %s", srv.log)
	}
	first := checkout(t, remoteSpec)
	t.Setenv("KPIPE_REMOTE_CACHE_TOKEN", serveWriteToken)
	code, r1, stderr := runnerBuild(t, first, t.TempDir(), "--remote-cache", srv.URL, "--remote-cache-write")
	if code != 0 || r1.Summary.Remote == nil || r1.Summary.Remote.Uploads == 0 || r1.Summary.Remote.Failed {
		t.Fatalf("runner A: exit %d, remote %+v\n%s", code, r1.Summary.Remote, stderr)
	}
	objects := srv.metric(t, "kpipe_cache_store_objects")

	second := checkout(t, remoteSpec)
	t.Setenv("KPIPE_REMOTE_CACHE_TOKEN", serveReadToken)
	code, r2, stderr := runnerBuild(t, second, t.TempDir(), "--remote-cache", srv.URL)
	if code != 0 {
		t.Fatalf("runner B: exit %d\n%s", code, stderr)
	}
	if n := stagesRan(r2); n != 0 || r2.Summary.NodesBuilt != 0 {
		t.Errorf("runner B ran %d stages, built %d nodes; want none", n, r2.Summary.NodesBuilt)
	}
	if w := remoteWarnings(stderr); len(w) != 0 {
		t.Errorf("runner B's warnings: %q", w)
	}
	noCache := filepath.Join(t.TempDir(), "nocache")
	t.Chdir(second)
	if code, _, stderr := kpipe(t, "build-all", ".", "--out-dir", noCache, "--no-cache"); code != 0 {
		t.Fatalf("--no-cache: exit %d\n%s", code, stderr)
	}
	if o, want := rendered(t, filepath.Join(second, "out")), rendered(t, noCache); len(o) < 18 || !equalMaps(o, want) {
		t.Errorf("runner B's outputs differ from --no-cache's (%d and %d files)", len(o), len(want))
	}

	// A read token that tries to write: one warning naming 403, nothing
	// stored, the build fine.
	third := checkout(t, genrepo2())
	code, _, stderr = runnerBuild(t, third, t.TempDir(), "--remote-cache", srv.URL, "--remote-cache-write")
	if w := remoteWarnings(stderr); code != 0 || len(w) != 1 || !strings.Contains(w[0], "403") {
		t.Errorf("a read token writing: exit %d, warnings %q", code, w)
	}
	if got := srv.metric(t, "kpipe_cache_store_objects"); got != objects {
		t.Errorf("a read token changed the store: %v objects, had %v", got, objects)
	}
	// No token: 401, one warning, the build fine.
	t.Setenv("KPIPE_REMOTE_CACHE_TOKEN", "")
	code, _, stderr = runnerBuild(t, checkout(t, remoteSpec), t.TempDir(), "--remote-cache", srv.URL)
	if w := remoteWarnings(stderr); code != 0 || len(w) != 1 || !strings.Contains(w[0], "401") {
		t.Errorf("no token: exit %d, warnings %q", code, w)
	}
	// The token in the URL's user name works as the variable does.
	withUser := strings.Replace(srv.URL, "http://", "http://"+serveReadToken+"@", 1)
	code, r5, stderr := runnerBuild(t, checkout(t, remoteSpec), t.TempDir(), "--remote-cache", withUser)
	if code != 0 || r5.Summary.NodesBuilt != 0 {
		t.Errorf("a token in the URL: exit %d, %d nodes built\n%s", code, r5.Summary.NodesBuilt, stderr)
	}
	if strings.Contains(stderr, serveReadToken) {
		t.Errorf("kpipe printed the token:\n%s", stderr)
	}
	if l := srv.log.String(); strings.Contains(l, serveReadToken) || strings.Contains(l, serveWriteToken) {
		t.Errorf("the server logged a token:\n%s", l)
	}
}

// genrepo2 is remoteSpec with one more app: roots runner A never built.
func genrepo2() genrepo.Spec { s := remoteSpec; s.Apps++; return s }

// An entry damaged in the server's store (its bytes changed on disk) is
// a miss for the client: the node is built again and the output is
// correct; the server counts it.
func TestCacheServePoisonedEntryIsRebuilt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	srv := startServe(t, dir)
	first := checkout(t, remoteSpec)
	if code, _, stderr := runnerBuild(t, first, t.TempDir(), "--remote-cache", srv.URL, "--remote-cache-write"); code != 0 {
		t.Fatalf("runner A: exit %d\n%s", code, stderr)
	}
	srv.stop()
	if code := srv.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("kpipe cache serve exited %d after SIGTERM:\n%s", code, srv.log)
	}
	// Change every stored object that renders app001, in Badger itself
	// (objects are the keys "o" + kind letter + name; see cache/badger).
	db, err := badger.Open(badger.DefaultOptions(filepath.Join(dir, "badger")).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	poisoned := 0
	err = db.Update(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte("o"), PrefetchValues: true})
		var keys, values [][]byte
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			if bytes.Contains(v, []byte("app001")) {
				keys = append(keys, it.Item().KeyCopy(nil))
				values = append(values, bytes.ReplaceAll(v, []byte("app001"), []byte("evil01")))
			}
		}
		it.Close()
		for i := range keys {
			if err := txn.Set(keys[i], values[i]); err != nil {
				return err
			}
			poisoned++
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil || poisoned == 0 {
		t.Fatalf("poisoning: %v (%d objects)", err, poisoned)
	}
	srv = startServe(t, dir)
	second := checkout(t, remoteSpec)
	code, r2, stderr := runnerBuild(t, second, t.TempDir(), "--remote-cache", srv.URL)
	if code != 0 {
		t.Fatalf("runner B: exit %d\n%s", code, stderr)
	}
	o1, o2 := rendered(t, filepath.Join(first, "out")), rendered(t, filepath.Join(second, "out"))
	if !equalMaps(o1, o2) {
		t.Error("runner B's outputs differ from runner A's")
	}
	for name, out := range o2 {
		if strings.Contains(out, "evil01") {
			t.Errorf("%s holds poisoned content", name)
		}
	}
	for _, rr := range r2.Roots {
		rebuilt := rr.NodesBuilt > 0 || rr.StageMisses > 0
		if app001 := strings.Contains(rr.Path, "/app001/"); rebuilt != app001 {
			t.Errorf("%s: rebuilt=%v (nodes built %d, stages ran %d)", rr.Path, rebuilt, rr.NodesBuilt, rr.StageMisses)
		}
	}
	if n := srv.metric(t, "kpipe_cache_damaged_objects_total"); n == 0 {
		t.Error("the server counted no damaged object")
	}
	t.Logf("%d objects poisoned; %v found damaged by the server", poisoned, srv.metric(t, "kpipe_cache_damaged_objects_total"))
}

// Without TLS and tokens the server listens on 127.0.0.1 unless --listen
// says otherwise, and its one start-up line says who can connect.
func TestCacheServeSaysWhoCanConnect(t *testing.T) {
	srv := startServe(t, filepath.Join(t.TempDir(), "store"))
	if l := srv.log.String(); !strings.Contains(l, "no tokens: only this machine can connect") || strings.Count(l, "\n") != 1 {
		t.Errorf("start-up: %q", l)
	}
	// The arguments reach the server untouched, and its exit status is
	// kpipe's: a usage error is 2.
	bin := kpipeWithServer(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dir", t.TempDir(), "--tls-cert", "x.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-cert", "x.pem"}, "--dir is required"},
		{[]string{"--dir", t.TempDir(), "--no-such-flag"}, "unknown flag: --no-such-flag"},
	} {
		out, err := exec.Command(bin, append([]string{"cache", "serve"}, tc.args...)...).CombinedOutput()
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("kpipe cache serve %q: exit %d, %s", tc.args, code, out)
		}
	}
	out, err := exec.Command(bin, "cache", "serve", "--dir", t.TempDir(), "--read-token-file", writeTokens(t, "short")).CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "at least 16 characters") || strings.Contains(string(out), "short\n") {
		t.Errorf("a short token: exit %d, %s", code, out)
	}
}
