// Package procstat reads what a finished child process used, for the
// benchmarks that compare kpipe with kustomize. It imports only the
// standard library; the platform-specific parts sit in _unix.go and
// _windows.go files.
package procstat

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Usage is what a finished command used.
type Usage struct {
	Wall   time.Duration
	CPU    time.Duration // user and system time
	MaxRSS int64         // peak resident set size in bytes (0 where unknown)
}

// Run runs cmd (its Dir, Env and context as the caller set them) and
// returns its standard output and what it used; an error carries its
// standard error.
func Run(cmd *exec.Cmd) ([]byte, Usage, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	u := Usage{Wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		u.CPU = ps.UserTime() + ps.SystemTime()
		u.MaxRSS = MaxRSS(ps)
	}
	if err != nil {
		return nil, u, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	return stdout.Bytes(), u, nil
}
