//go:build unix

package plugins

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kpipe/kpipe/resource"
)

// genPlugin installs script as the exec plugin of example.com/v1 Gen under
// dir (the test's HOME) and loads it as a generator.
func genPlugin(t *testing.T, dir, script string) *plugin {
	t.Helper()
	writeExec(t, filepath.Join(dir, ".config", "kustomize", "plugin", "example.com", "v1", "gen", "Gen"), script)
	s, err := load(t, dir, "apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: g\n", Generator)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*plugin)
}

// A plugin printing without end is stopped at the cap on its standard
// output, with an error saying so, instead of filling kpipe's memory.
func TestPluginStdoutIsCapped(t *testing.T) {
	dir := t.TempDir()
	p := genPlugin(t, dir, "#!/bin/sh\nwhile :; do echo 'a: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'; done\n")
	p.maxOut = 1 << 20
	err := p.Run(context.Background(), resource.NewList())
	if err == nil || !strings.Contains(err.Error(), "its output passed 1 MiB, the most kpipe takes from a plugin; it was stopped") {
		t.Fatalf("Run = %v", err)
	}
}

// A plugin's standard error is kept up to a cap: the error quotes its
// first lines, each line shortened, and says how much was dropped.
func TestPluginStderrIsCappedWithATruncationLine(t *testing.T) {
	dir := t.TempDir()
	p := genPlugin(t, dir, "#!/bin/sh\nhead -c 5000000 /dev/zero | tr '\\\\0' x >&2\nexit 3\n")
	err := p.Run(context.Background(), resource.NewList())
	if err == nil || !strings.Contains(err.Error(), "exited with status 3") {
		t.Fatalf("Run = %v", err)
	}
	msg := err.Error()
	if len(msg) > 4000 || !strings.Contains(msg, "more bytes on this line") || !strings.Contains(msg, "truncated: ") {
		t.Errorf("error of %d bytes, want a short one with its truncation said:\n%.3000s", len(msg), msg)
	}
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc (darwin): kill(0) said it exists
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}

// waitDead waits (up to a generous bound, not a timing assertion) for
// pid to end, and says whether it did.
func waitDead(pid int) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return false
}

// A plugin's children die with it: one left in the background holding the
// plugin's standard output open, and one that let go of it.
func TestPluginOrphansAreKilledWithTheGroup(t *testing.T) {
	for name, bg := range map[string]string{
		"holding stdout": "sleep 300 &",
		"detached":       "sleep 300 >/dev/null 2>&1 </dev/null &",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			p := genPlugin(t, dir, "#!/bin/sh\n"+bg+"\necho $! >"+pidFile+"\nprintf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: made\\n'\n")
			err := p.Run(context.Background(), resource.NewList())
			b, rerr := os.ReadFile(pidFile)
			if rerr != nil {
				t.Fatalf("the plugin did not run: %v (Run: %v)", rerr, err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if pid <= 0 {
				t.Fatalf("bad pid %q", b)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if !waitDead(pid) {
				t.Errorf("the plugin's child %d outlived it (Run: %v)", pid, err)
			}
			if name == "holding stdout" && (err == nil || !strings.Contains(err.Error(), "kept its output open")) {
				t.Errorf("Run = %v, want the held output reported", err)
			}
		})
	}
}
