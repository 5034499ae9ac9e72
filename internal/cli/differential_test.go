package cli

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/genrepo"
)

// referenceKustomize is the kustomize release the differential tests
// compare with: the newest that builds here (v5.8.3 builds the same output
// but needs Go 1.27; see engine.KustomizeVersion).
const referenceKustomize = "v5.8.2"

// kustomizeBinary finds kustomize v5.8.2 for differential tests: where
// .ci/run installs it, on PATH or in ~/go/bin
// (`go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.2`). Another version
// is not a reference: the test is skipped, naming it.
func kustomizeBinary(t *testing.T) string {
	t.Helper()
	var candidates []string
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".cache", "kpipe-ci", "kustomize-"+referenceKustomize, "kustomize"))
	}
	if p, err := exec.LookPath("kustomize"); err == nil {
		candidates = append(candidates, p)
	}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, "go", "bin", "kustomize"))
	}
	var seen []string
	for _, p := range candidates {
		if !fileExists(p) {
			continue
		}
		out, err := exec.Command(p, "version").Output()
		v := strings.TrimSpace(string(out))
		if err == nil && v == referenceKustomize {
			return p
		}
		seen = append(seen, p+" ("+v+")")
	}
	t.Skipf("kustomize %s not installed (go install sigs.k8s.io/kustomize/kustomize/v5@%s; found %v): differential test skipped",
		referenceKustomize, referenceKustomize, seen)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestDifferentialAgainstKustomize builds the examples in testdata and a
// synthetic monorepo, changed at random a few times (fixed seed), with both
// kustomize and kpipe, and compares the outputs byte for byte.
func TestDifferentialAgainstKustomize(t *testing.T) {
	kz := kustomizeBinary(t)
	same := func(root string) {
		t.Helper()
		want, err := exec.Command(kz, "build", root).Output()
		if err != nil {
			t.Fatalf("kustomize build %s: %v", root, err)
		}
		code, got, stderr := kpipe(t, "build", root, "--no-cache")
		if code != 0 {
			t.Fatalf("kpipe build %s: exit %d: %s", root, code, stderr)
		}
		if got != string(want) {
			t.Errorf("%s: kpipe's output differs from kustomize's\n--- kpipe\n%s\n--- kustomize\n%s", root, got, want)
		}
	}
	same("../../testdata/examples/prod")
	same("../../testdata/plugin-order")

	// One case per rule that changed from v5.8.0 to v5.8.2/v5.8.3.
	cases, err := os.ReadDir("../../testdata/versions")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		root := filepath.Join("../../testdata/versions", c.Name())
		if fileExists(filepath.Join(root, "overlay")) {
			root = filepath.Join(root, "overlay")
		}
		if strings.HasPrefix(c.Name(), "helm") {
			continue // needs --enable-helm; internal/engine's TestKustomizeVersionCases compares it with v5.8.2's recorded output
		}
		if fileExists(filepath.Join("../../testdata/versions", c.Name()+".err")) {
			_, kerr := exec.Command(kz, "build", root).Output()
			code, _, stderr := kpipe(t, "build", root, "--no-cache")
			if kerr == nil || code == 0 {
				t.Errorf("%s: kustomize err %v, kpipe exit %d: both must fail", root, kerr, code)
			}
			want, _ := exec.Command(kz, "build", root).CombinedOutput()
			if stderr != string(want) {
				t.Errorf("%s: kpipe's error differs\n--- kpipe\n%s--- kustomize\n%s", root, stderr, want)
			}
			continue
		}
		same(root)
	}

	tree, roots := newRepo(t)
	rng := rand.New(rand.NewSource(7))
	for step := 0; step < 4; step++ {
		for _, r := range roots {
			same(filepath.Join(tree, r))
		}
		if _, err := genrepo.Mutate(rng, tree); err != nil {
			t.Fatal(err)
		}
	}
}
