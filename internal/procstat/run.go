package procstat

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Stats is what a finished child process cost.
type Stats struct {
	Wall   time.Duration // from its start to its reaping
	CPU    time.Duration // user plus system time
	MaxRSS int64         // peak resident set size in bytes, 0 where unknown
}

// Run runs name with args in dir, with the environment env (nil: this
// process's), and returns its standard output and what it cost. A
// non-zero exit is an error that holds its standard error.
func Run(dir string, env []string, name string, args ...string) ([]byte, Stats, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	start := time.Now()
	err := cmd.Run()
	st := Stats{Wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		st.CPU, st.MaxRSS = ps.UserTime()+ps.SystemTime(), MaxRSS(ps)
	}
	if err != nil {
		return nil, st, fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, se.String())
	}
	return so.Bytes(), st, nil
}

// Kustomize returns the kustomize binary the benchmarks compare kpipe
// with: v5.8.2 where .ci/run installs it
// ($HOME/.cache/kpipe-ci/kustomize-v5.8.2), else the first on PATH, else
// "".
func Kustomize() string {
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "kpipe-ci", "kustomize-v5.8.2", "kustomize")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("kustomize"); err == nil {
		return p
	}
	return ""
}
