package cli

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kpipe/kpipe/internal/depstest"

	"github.com/kpipe/kpipe/cache/server/servertest"
)

// exitCode is the exit status of a command that ran (-1 when it did not).
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// kpipe does not link Badger: its many short processes keep the file
// store, and Badger's package initialisation cost each of them about
// 5 ms (cache/doc.go, benchmarks/RESULTS.md). The cache server, which
// does, is a binary of its own. This fails when a change makes cmd/kpipe
// or cmd/kpipe-full import Badger again, by whatever path.
func TestKpipeDoesNotLinkBadger(t *testing.T) {
	why := "belongs to kpipe-cache-server and embedders (see cache/doc.go)"
	for _, tags := range []string{"", "urfave_cli_no_docs"} {
		for _, cmd := range []string{"../../cmd/kpipe", "../../cmd/kpipe-full"} {
			depstest.Check(t, cmd, tags, map[string]string{"github.com/dgraph-io/": why,
				"github.com/kpipe/kpipe/cache/badger": why, "github.com/kpipe/kpipe/cache/server": why})
		}
	}
}

// `kpipe cache serve` hands over to kpipe-cache-server: on unix in the
// same process (exec), so the pid kpipe was started as is the server's,
// SIGTERM reaches the server, which answers the upload in flight, closes
// its store and exits 0, and kpipe's exit status is the server's.
func TestCacheServeHandsOverAndDrains(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("stops the server with SIGTERM")
	}
	dir := filepath.Join(t.TempDir(), "store")
	srv := startServe(t, dir)
	if l := srv.log.String(); !strings.HasPrefix(l, "kpipe-cache-server: serving "+dir+" on http://127.0.0.1:") {
		t.Errorf("the start-up line is not the server's: %q", l)
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(srv.cmd.Process.Pid) + "/exe")
	if err == nil && filepath.Base(exe) != "kpipe-cache-server" {
		t.Errorf("pid %d runs %s, not the server", srv.cmd.Process.Pid, exe)
	}

	body := bytes.Repeat([]byte("drained upload "), 1<<16)
	code, name := servertest.UploadAcrossSignal(srv.URL, body, func() { srv.cmd.Process.Signal(syscall.SIGTERM) })
	if code/100 != 2 {
		t.Fatalf("the upload in flight at SIGTERM: %d\n%s", code, srv.log)
	}
	select {
	case <-srv.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not exit after SIGTERM:\n%s", srv.log)
	}
	if code := srv.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(srv.log.String(), "stopped; the store is closed") {
		t.Fatalf("exit %d after SIGTERM:\n%s", code, srv.log)
	}
	// Started again on the same store, it serves what it answered.
	srv = startServe(t, dir)
	resp, err := http.Get(srv.URL + "/cas/" + name)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, body) {
		t.Errorf("the drained upload after a restart: %d, %d bytes", resp.StatusCode, len(got))
	}
}

// Without kpipe-cache-server beside kpipe or on PATH, `kpipe cache serve`
// says what is missing and how to install it (exit 1), and its --help
// still says what the command does and where its flags are.
func TestCacheServeWithoutServer(t *testing.T) {
	bin := kpipeWithServer(t)
	alone := filepath.Join(t.TempDir(), filepath.Base(bin))
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+t.TempDir())
	cmd := exec.Command(alone, "cache", "serve", "--dir", t.TempDir())
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 1 ||
		!strings.Contains(string(out), installLine) ||
		!strings.Contains(string(out), cloneInstall) ||
		!strings.Contains(string(out), "release archives") || !strings.Contains(string(out), filepath.Dir(alone)) {
		t.Errorf("without the server: exit %d\n%s", code, out)
	}
	cmd = exec.Command(alone, "cache", "serve", "--help")
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	if code := exitCode(err); code != 0 || !strings.Contains(string(out), "kpipe-cache-server --help") ||
		!strings.Contains(string(out), installLine) {
		t.Errorf("--help without the server: exit %d\n%s", code, out)
	}
	// With the server, --help is the server's, flags and all.
	out, err = exec.Command(bin, "cache", "serve", "--help").CombinedOutput()
	if code := exitCode(err); code != 0 || !strings.Contains(string(out), "--max-size") || !strings.Contains(string(out), "--write-token-file") {
		t.Errorf("--help with the server: exit %d\n%s", code, out)
	}
}

// TestInstallLinesAgree: every place that says how to install kpipe's
// binaries (the errors above and of a kpipe without kpipe-full,
// README.md, docs/install.md, docs/cache-server.md) gives the same lines,
// from the module proxy and from a clone.
func TestInstallLinesAgree(t *testing.T) {
	for _, page := range []string{"../../README.md", "../../docs/install.md", "../../docs/cache-server.md"} {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{installLine, cloneInstall} {
			if !strings.Contains(string(data), line) {
				t.Errorf("%s does not say %q", page, line)
			}
		}
	}
	if installLine != "go install github.com/kpipe/kpipe/cmd/...@latest" || cloneInstall != "go install ./cmd/..." {
		t.Errorf("the errors' install lines %q, %q are not the pages'", installLine, cloneInstall)
	}
}
