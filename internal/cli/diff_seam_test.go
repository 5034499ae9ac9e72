package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/genrepo"
)

// TestDiffOfAChartFromRepository: kpipe diff of two commits reads both
// from git's objects; a chart named by repo and version is pulled into
// kpipe's cache (on disk) and inflated for each, and the values that
// changed show as the ConfigMap's change.
func TestDiffOfAChartFromRepository(t *testing.T) {
	helm := helmBinary(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found (apt-get install git)")
	}
	srv, _ := chartRepo(t, helm)
	dir := t.TempDir()
	k := "helmCharts:\n- name: hello\n  repo: " + srv.URL + "\n  version: 0.1.0\n  releaseName: r\n  valuesInline:\n    greeting: GREETING\n"
	writeFiles(t, dir, map[string]string{"app/kustomization.yaml": strings.Replace(k, "GREETING", "hello", 1)})
	if err := genrepo.InitGit(dir); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"app/kustomization.yaml": strings.Replace(k, "GREETING", "bonjour", 1)})
	if _, err := genrepo.Git(dir, "commit", "-q", "-am", "greeting"); err != nil {
		t.Fatal(err)
	}
	// The working tree holds neither revision's file: only git's objects
	// are read.
	if err := os.Remove(filepath.Join(dir, "app/kustomization.yaml")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, out, errOut := kpipe(t, "diff", "--base", "HEAD~1", "--head", "HEAD", "--enable-helm", "--helm-command", helm, "--cache-dir", t.TempDir())
	if code != 1 || !strings.Contains(out, "ConfigMap r-hello") || !strings.Contains(out, "-  greeting: hello") || !strings.Contains(out, "+  greeting: bonjour") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}
