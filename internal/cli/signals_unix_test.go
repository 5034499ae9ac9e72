//go:build unix

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processAlive reports whether pid is a live process (not a zombie).
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc (darwin): kill(0) said it exists
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}

// until polls cond (up to a generous bound: a wait, not a timing
// assertion) and says whether it came true.
func until(cond func() bool) bool {
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// SIGTERM (timeout, CI cancellation, Kubernetes) and SIGHUP stop kpipe as
// SIGINT does: a real kpipe process, running a real slow plugin script (or
// helm, here a slow stand-in: helm itself is too quick to catch), gets the
// signal; the plugin and the child it waits for are killed with their
// process group, the temporary files (kust-plugin-config-*, kpipe-helm-*)
// are removed, no -o file is written, and kpipe exits 128+signal after
// cleaning up. So too a build that no flag lets run anything, fetching a
// remote base with a slow git stand-in: it listens from its first fetch
// on (newFetcher), and its fetch directory (kpipe-remote-*) is removed.
func TestStopSignalsCleanUp(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const slow = `#!/bin/sh
echo $$ > "$PIDDIR/parent.pid"
sleep 300 &
echo $! > "$PIDDIR/child.pid"
wait
`
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
		for _, what := range []string{"plugin", "helm", "remote"} {
			t.Run(sig.String()+"/"+what, func(t *testing.T) {
				dir := t.TempDir()
				tmp := filepath.Join(dir, "tmp")
				writeFiles(t, dir, map[string]string{
					"xdg/kustomize/plugin/example.com/v1/slow/Slow": slow,
					"k/kustomization.yaml":                          "generators:\n- gen.yaml\n",
					"k/gen.yaml":                                    "apiVersion: example.com/v1\nkind: Slow\nmetadata:\n  name: s\n",
					"h/kustomization.yaml":                          "helmCharts:\n- name: c\n  releaseName: r\n",
					"h/charts/c/Chart.yaml":                         "apiVersion: v2\nname: c\nversion: 0.1.0\n",
					"h/charts/c/values.yaml":                        "",
					"h/charts/c/templates/cm.yaml":                  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
					"bin/slowhelm":                                  "#!/bin/sh\nif [ \"$1\" = version ]; then echo v3.10.2; exit 0; fi\n" + strings.TrimPrefix(slow, "#!/bin/sh\n"),
					"r/kustomization.yaml":                          "resources:\n- https://github.com/example/repo//base?ref=v1\n",
					"git/git":                                       "#!/bin/sh\necho $$ > \"$PIDDIR/parent.pid\"\necho $$ > \"$PIDDIR/child.pid\"\nexec sleep 300\n",
					"tmp/.keep":                                     "",
				})
				out := filepath.Join(dir, "out.yaml")
				args := []string{"--", "build", filepath.Join(dir, "k"), "--enable-alpha-plugins", "--no-cache", "-o", out}
				env := append(os.Environ(), "KPIPE_TEST_AS_KPIPE=1", "TMPDIR="+tmp, "PIDDIR="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "xdg"))
				switch what {
				case "helm":
					args = []string{"--", "build", filepath.Join(dir, "h"), "--enable-helm", "--helm-command", filepath.Join(dir, "bin", "slowhelm"), "--no-cache", "-o", out}
				case "remote":
					// No flag that runs anything, no -o: stdout.
					args = []string{"--", "build", filepath.Join(dir, "r"), "--no-cache"}
					env = append(env, "PATH="+filepath.Join(dir, "git")+string(os.PathListSeparator)+os.Getenv("PATH"))
				}
				cmd := exec.Command(exe, args...)
				cmd.Env = env
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				childPID := filepath.Join(dir, "child.pid")
				exited := false
				if !until(func() bool {
					select {
					case <-done:
						exited = true
						return true
					default:
					}
					b, _ := os.ReadFile(childPID)
					return len(b) > 0 && b[len(b)-1] == '\n'
				}) || exited {
					cmd.Process.Kill()
					t.Fatalf("the slow %s never started; stderr %s", what, stderr.String())
				}
				var pids []int
				for _, f := range []string{"parent.pid", "child.pid"} {
					b, _ := os.ReadFile(filepath.Join(dir, f))
					pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
					pids = append(pids, pid)
					t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
				}
				if entries, _ := os.ReadDir(tmp); len(entries) < 2 {
					t.Fatalf("no temporary file while the %s runs (the test would prove nothing)", what)
				}
				cmd.Process.Signal(sig)
				var werr error
				select {
				case werr = <-done:
				case <-time.After(2 * time.Minute):
					cmd.Process.Kill()
					t.Fatal("kpipe did not exit after the signal")
				}
				code := -1
				if ee, ok := werr.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				if code != 128+int(sig) {
					t.Errorf("exit status %d (%v), want %d", code, werr, 128+int(sig))
				}
				if !strings.Contains(stderr.String(), "stopped by signal SIG") {
					t.Errorf("stderr %q does not name the signal", stderr.String())
				}
				if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
					var names []string
					for _, e := range entries {
						names = append(names, e.Name())
					}
					t.Errorf("temporary files left behind: %v", names)
				}
				if _, err := os.Stat(out); err == nil {
					t.Error("an -o file was written")
				}
				for _, pid := range pids {
					if !until(func() bool { return !processAlive(pid) }) {
						t.Errorf("process %d of the %s outlived kpipe", pid, what)
					}
				}
			})
		}
	}
}
