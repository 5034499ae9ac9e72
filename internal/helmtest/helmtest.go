// Package helmtest is for tests that run kpipe's reference helm (v3.10.2,
// where .ci/run installs it): where it is, and a run of it that reads
// nothing of the user's helm configuration.
//
// It imports only the standard library.
package helmtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// V3 is kpipe's reference helm (v3.10.2, where .ci/run installs it, or
// $KPIPE_HELM), or the test is skipped naming the install command.
func V3(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("KPIPE_HELM"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	p := filepath.Join(home, ".cache", "kpipe-ci", "helm-v3.10.2", "helm")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("helm v3.10.2 missing at %s: install it with `GOBIN=%s go install helm.sh/helm/v3/cmd/helm@v3.10.2` (.ci/run does)", p, filepath.Dir(p))
	}
	return p
}

// Run runs args (helm and its arguments) in dir, with helm's homes in a
// temporary directory, and returns its stdout; it fails t, with helm's
// stderr, when helm fails.
func Run(t testing.TB, dir string, args ...string) []byte {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home+"/cache", "HELM_DATA_HOME="+home+"/data")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}
