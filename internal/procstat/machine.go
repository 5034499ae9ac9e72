package procstat

import (
	"os"
	"runtime"
	"strings"
)

// KustomizeVersion is what `kustomize version` prints for the binary p
// ("not installed" for "", p itself when it does not say).
func KustomizeVersion(p string) string {
	if p == "" {
		return "not installed"
	}
	out, _, err := Run("", nil, p, "version")
	if err != nil {
		return p
	}
	return strings.TrimSpace(string(out))
}

// CPUModel names the machine's processor (/proc/cpuinfo's model name),
// or "unknown CPU".
func CPUModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU (" + runtime.GOARCH + ")"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU (" + runtime.GOARCH + ")"
}
