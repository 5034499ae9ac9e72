// Package benchtools finds what the benchmarks that compare kpipe with
// kustomize measure against, and says what they ran on: the reference
// kustomize binary, its version and the machine's CPU. It imports only the
// standard library.
package benchtools

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Kustomize returns the reference kustomize (v5.8.2) where the project's
// CI installs it, else kustomize on PATH, else "".
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

// KustomizeVersion is what `kustomize version` prints for the binary p:
// "not installed" for "", "unknown" when it does not say.
func KustomizeVersion(p string) string {
	if p == "" {
		return "not installed"
	}
	out, err := exec.Command(p, "version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// CPUModel names the machine's processor (/proc/cpuinfo's model name),
// or its architecture where that is not known.
func CPUModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
