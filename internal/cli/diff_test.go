package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/genrepo"
)

// gitRepo writes a small synthetic monorepo, commits it on main, and
// makes it the current directory.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found (apt-get install git)")
	}
	dir := t.TempDir()
	if _, err := genrepo.Write(dir, genrepo.Spec{Apps: 2, Envs: 2, ResourcesPerApp: 1}); err != nil {
		t.Fatal(err)
	}
	if err := genrepo.InitGit(dir); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return dir
}

// TestDiffExitStatus: like git diff --exit-code, 0 with no change, 1 with
// changes, 2 on trouble; the default base is the merge base with main.
func TestDiffExitStatus(t *testing.T) {
	dir := gitRepo(t)
	cacheDir := t.TempDir()
	if code, out, errOut := kpipe(t, "diff", "--cache-dir", cacheDir); code != 0 {
		t.Fatalf("no change: exit %d\n%s%s", code, out, errOut)
	}
	f := filepath.Join(dir, "apps/app001/base/deployment.yaml")
	data, _ := os.ReadFile(f)
	if err := os.WriteFile(f, []byte(strings.Replace(string(data), "cpu: ", "cpu: 9", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := kpipe(t, "diff", "--cache-dir", cacheDir, "--color", "never")
	if code != 1 {
		t.Fatalf("a change: exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"changed apps/app001/dev", "changed apps/app001/staging", "~ apps/Deployment", "+            cpu: 9"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "app000") {
		t.Errorf("an app that did not change is shown:\n%s", out)
	}
	code, out, _ = kpipe(t, "diff", "--cache-dir", cacheDir, "--name-only")
	if code != 1 || out != "changed apps/app001/dev\n  ~ apps/Deployment app001-dev/dev-app001\nchanged apps/app001/staging\n  ~ apps/Deployment app001-staging/staging-app001\n" {
		t.Errorf("--name-only: exit %d:\n%s", code, out)
	}
	code, out, _ = kpipe(t, "diff", "--cache-dir", cacheDir, "--format", "markdown")
	if code != 1 || !strings.Contains(out, "| `apps/app001/dev` | changed | 0 | 0 | 1 |") || !strings.Contains(out, "```diff\n") {
		t.Errorf("--format markdown: exit %d:\n%s", code, out)
	}
	if code, _, errOut := kpipe(t, "diff", "--cache-dir", cacheDir, "--base", "no-such-rev"); code != 2 || !strings.Contains(errOut, "no-such-rev") {
		t.Errorf("a bad --base: exit %d, want 2, and the revision named: %s", code, errOut)
	}
	// The working tree, index and stash are untouched by a review.
	st := exec.Command("git", "status", "--porcelain")
	st.Dir = dir
	if out, err := st.Output(); err != nil || string(out) != " M apps/app001/base/deployment.yaml\n" {
		t.Errorf("git status after kpipe diff: %q %v", out, err)
	}

	code, out, errOut = kpipe(t, "affected", "--since", "HEAD", "--cache-dir", cacheDir)
	if code != 0 || out != "apps/app001/dev\napps/app001/staging\n" {
		t.Errorf("affected: exit %d:\n%s%s", code, out, errOut)
	}

	// On a feature branch, the default base is the merge base with main:
	// what the branch committed and what the working tree adds both show.
	git := func(args ...string) {
		t.Helper()
		if _, err := genrepo.Git(dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	git("checkout", "-q", "-b", "feature")
	git("commit", "-q", "-am", "app001 cpu")
	props := filepath.Join(dir, "apps/app000/base/application.properties")
	if err := os.WriteFile(props, []byte("x=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = kpipe(t, "diff", "--cache-dir", cacheDir, "--name-only")
	for _, want := range []string{"changed apps/app000/dev", "changed apps/app001/dev", "(was dev-app000-config-"} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("on a branch: exit %d, want %q in:\n%s", code, want, out)
		}
	}
}

// TestDiffNoIndex compares two directories of rendered output without git.
func TestDiffNoIndex(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: %s\n"
	_ = os.WriteFile(filepath.Join(a, "x.yaml"), []byte(strings.Replace(cm, "%s", "1", 1)), 0o644)
	_ = os.WriteFile(filepath.Join(b, "x.yaml"), []byte(strings.Replace(cm, "%s", "2", 1)), 0o644)
	code, out, errOut := kpipe(t, "diff", "--no-index", "--no-cache", "--format", "json", a, b)
	if code != 1 || !strings.Contains(out, `"path": "x.yaml"`) || !strings.Contains(out, `"change": "changed"`) {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	if code, _, _ := kpipe(t, "diff", "--no-index", "--no-cache", a, a); code != 0 {
		t.Fatalf("a directory against itself: exit %d", code)
	}
	// The same resources in another order: no change, unless --order.
	two := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n"
	c, d := t.TempDir(), t.TempDir()
	_ = os.WriteFile(filepath.Join(c, "x.yaml"), []byte(fmt.Sprintf(two, "a")+"---\n"+fmt.Sprintf(two, "b")), 0o644)
	_ = os.WriteFile(filepath.Join(d, "x.yaml"), []byte(fmt.Sprintf(two, "b")+"---\n"+fmt.Sprintf(two, "a")), 0o644)
	if code, out, _ := kpipe(t, "diff", "--no-index", "--no-cache", c, d); code != 0 {
		t.Fatalf("reordered only: exit %d, want 0:\n%s", code, out)
	}
	if code, out, _ := kpipe(t, "diff", "--no-index", "--no-cache", "--order", "--color", "never", c, d); code != 1 || !strings.Contains(out, "the order of the resources changed") {
		t.Fatalf("reordered only, --order: exit %d, want 1:\n%s", code, out)
	}
}

// TestDiffNamesRootsFailingOnBothSides: a change to a shared base reaches
// a root that fails to build at both revisions (a missing resource). It
// did not change, but a reviewer must see it: diff and affected name it,
// with its error, and exit 1.
func TestDiffNamesRootsFailingOnBothSides(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found (apt-get install git)")
	}
	dir := t.TempDir()
	write := func(rel, s string) { writeFiles(t, dir, map[string]string{rel: s}) }
	write("base/kustomization.yaml", "resources:\n- cm.yaml\n")
	write("base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v1\n")
	write("good/kustomization.yaml", "resources:\n- ../base\nnamePrefix: good-\n")
	write("bad/kustomization.yaml", "resources:\n- ../base\n- missing.yaml\n")
	if err := genrepo.InitGit(dir); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	write("base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v2\n")
	cacheDir := t.TempDir()

	code, out, errOut := kpipe(t, "diff", "--cache-dir", cacheDir, "--base", "HEAD", "--color", "never")
	if code != 1 {
		t.Fatalf("diff: exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"changed good (", "failing bad (", "fails on both sides: ", "missing.yaml",
		"1 of 2 compared roots differ, 1 fail on both sides"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = kpipe(t, "diff", "--cache-dir", cacheDir, "--base", "HEAD", "--format", "json")
	if code != 1 || !strings.Contains(out, `"status": "failing"`) || !strings.Contains(out, "missing.yaml") {
		t.Errorf("diff --format json: exit %d:\n%s", code, out)
	}
	code, out, errOut = kpipe(t, "affected", "--since", "HEAD", "--cache-dir", cacheDir)
	if code != 1 || out != "bad\ngood\n" || !strings.Contains(errOut, "bad does not build: ") || !strings.Contains(errOut, "missing.yaml") {
		t.Errorf("affected: exit %d, want 1, both roots listed and bad's error on stderr:\n%s%s", code, out, errOut)
	}
	code, out, _ = kpipe(t, "affected", "--since", "HEAD", "--cache-dir", cacheDir, "--format", "json")
	var listed struct {
		Since string
		Roots []struct{ Path, Status, Error string }
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || code != 1 || listed.Since != "HEAD" || len(listed.Roots) != 2 ||
		listed.Roots[0].Path != "bad" || !strings.Contains(listed.Roots[0].Error, "missing.yaml") || listed.Roots[1].Path != "good" || listed.Roots[1].Error != "" {
		t.Errorf("affected --format json: exit %d, %v:\n%s", code, err, out)
	}
}
