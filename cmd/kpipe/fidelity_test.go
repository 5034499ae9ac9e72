package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fidelityDir holds small kustomization roots that exercise null, `~`,
// bare (`x:`) and empty values through every transformer, and scalar
// shapes through the output emitter; see its README.
const fidelityDir = "testdata/fidelity"

// fidelityCases lists the roots under testdata/fidelity.
func fidelityCases(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(fidelityDir)
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), "_") {
			roots = append(roots, e.Name())
		}
	}
	if len(roots) < 100 {
		t.Fatalf("only %d roots in %s", len(roots), fidelityDir)
	}
	return roots
}

// TestFidelityCases builds every root under testdata/fidelity and compares
// the output with kustomize v5.8.2's, recorded beside it (want.yaml), or
// requires the failure kustomize reports (want.err). It needs no
// kustomize; TestFidelityDifferential checks the recordings.
func TestFidelityCases(t *testing.T) {
	for _, name := range fidelityCases(t) {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(fidelityDir, name)
			code, got, stderr := kpipe(t, "build", root, "--no-cache")
			if want, err := os.ReadFile(filepath.Join(root, "want.yaml")); err == nil {
				if code != 0 {
					t.Fatalf("exit %d, kustomize builds it:\n%s", code, stderr)
				}
				if got != string(want) {
					t.Errorf("output differs from kustomize's (want.yaml)\n--- kpipe\n%s\n--- kustomize\n%s", got, want)
				}
				return
			}
			want, err := os.ReadFile(filepath.Join(root, "want.err"))
			if err != nil {
				t.Fatal(err)
			}
			msg := strings.TrimSpace(string(want))
			if code == 0 {
				t.Fatalf("kpipe built it; kustomize fails with %q; kpipe printed:\n%s", msg, got)
			}
			if !strings.Contains(stderr, msg) {
				t.Errorf("error message %q does not contain kustomize's %q", stderr, msg)
			}
		})
	}
}

// kustomize582 finds kustomize v5.8.2, the version kpipe matches: where CI
// installs it, on PATH or in ~/go/bin. Other versions do not count.
func kustomize582(t *testing.T) string {
	t.Helper()
	var candidates []string
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates,
			filepath.Join(home, ".cache", "kpipe-ci", "kustomize-v5.8.2", "kustomize"),
			filepath.Join(home, "go", "bin", "kustomize"))
	}
	if p, err := exec.LookPath("kustomize"); err == nil {
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		out, err := exec.Command(p, "version").Output()
		if err == nil && strings.TrimSpace(string(out)) == "v5.8.2" {
			return p
		}
	}
	t.Skip("kustomize v5.8.2 not installed (go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.2): differential test skipped")
	return ""
}

// TestFidelityDifferential runs kustomize v5.8.2 and kpipe on every root
// under testdata/fidelity and requires the same bytes, or both to fail
// with kpipe's message containing kustomize's; it also requires the
// recordings TestFidelityCases uses to be what kustomize prints today.
func TestFidelityDifferential(t *testing.T) {
	kz := kustomize582(t)
	for _, name := range fidelityCases(t) {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(fidelityDir, name)
			cmd := exec.Command(kz, "build", root)
			var kerr bytes.Buffer
			cmd.Stderr = &kerr
			want, err := cmd.Output()
			code, got, stderr := kpipe(t, "build", root, "--no-cache")
			var exitErr *exec.ExitError
			switch {
			case err == nil:
				if code != 0 {
					t.Fatalf("kpipe: exit %d, kustomize builds it:\n%s", code, stderr)
				}
				if got != string(want) {
					t.Errorf("output differs\n--- kpipe\n%s\n--- kustomize\n%s", got, want)
				}
				if rec, _ := os.ReadFile(filepath.Join(root, "want.yaml")); !bytes.Equal(rec, want) {
					t.Errorf("want.yaml is stale: kustomize now prints\n%s", want)
				}
			case errors.As(err, &exitErr):
				msg := ""
				for _, line := range strings.Split(kerr.String(), "\n") {
					if m, ok := strings.CutPrefix(line, "Error: "); ok {
						msg = m
					}
				}
				if code == 0 {
					t.Fatalf("kpipe built it; kustomize fails with %q", msg)
				}
				if !strings.Contains(stderr, msg) {
					t.Errorf("kpipe's error %q does not contain kustomize's %q", stderr, msg)
				}
				if rec, _ := os.ReadFile(filepath.Join(root, "want.err")); strings.TrimSpace(string(rec)) != msg {
					t.Errorf("want.err is stale: kustomize now fails with %q", msg)
				}
			default:
				t.Fatalf("running kustomize: %v", err)
			}
		})
	}
}
