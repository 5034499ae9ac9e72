// Package oracleproc builds and runs an oracle program of tools/ (a module
// of its own that links a library kpipe ports, for differential tests) as
// one long-lived process speaking JSON lines: a request a line in, an
// answer a line out.
//
// Only tests import it (through the oracles of internal/flux). It imports
// only the standard library.
package oracleproc

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Process is a running oracle program.
type Process struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
}

// BuildCommand is the command that builds tools/<name>, for skip messages.
func BuildCommand(name string) string {
	return "go build -C tools/" + name + " -o " + name + " ."
}

// Start builds tools/<name> and starts it for the rest of the test, or
// skips the test naming the command that failed (the libraries come from
// the module proxy or the module cache: an offline machine without them
// cannot build it). what names the libraries, for the skip message.
func Start(tb testing.TB, name, what string) *Process {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "../../../../tools", name)
	bin := filepath.Join(tb.TempDir(), name)
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		tb.Skipf("the oracle of %s does not build (%v); run %q from the repository root to see why:\n%s", what, err, BuildCommand(name), out)
	}
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return &Process{in: in, out: bufio.NewReader(out)}
}

// Ask sends req and decodes the answer into res; any failure ends the test.
func (p *Process) Ask(tb testing.TB, req, res any) {
	tb.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		tb.Fatalf("oracle: %v", err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		tb.Fatalf("oracle: %v", err)
	}
	if err := json.Unmarshal(line, res); err != nil {
		tb.Fatalf("oracle answered %q: %v", line, err)
	}
}
