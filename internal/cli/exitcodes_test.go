package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodes: one rule for every command. 0: success, or nothing
// differs; 1: a build failed, or something differs (diff, build-all
// --check); 2: a usage error, or trouble (not a git repository). Outside
// a repository, diff and affected say how to compare two directories.
func TestExitCodes(t *testing.T) {
	gitBinary(t)
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{
		"ok/kustomization.yaml": "resources:\n- cm.yaml\n",
		"ok/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\ndata:\n  a: \"1\"\n",
	})
	runGit(t, repo, "init", "--quiet", "-b", "main")
	runGit(t, repo, "add", ".")
	runGit(t, repo, "commit", "--quiet", "-m", "one")
	outside := t.TempDir()
	t.Chdir(repo)
	cache := []string{"--cache-dir", filepath.Join(t.TempDir(), "cache")}
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		name   string
		dir    string
		args   []string
		code   int
		stderr string
		setup  func()
	}{
		{name: "build", args: []string{"build", "ok"}, code: 0},
		{name: "build-all", args: []string{"build-all", ".", "--out-dir", out}, code: 0},
		{name: "build-all --check, matching", args: []string{"build-all", ".", "--out-dir", out, "--check"}, code: 0},
		{name: "diff, no change", args: []string{"diff", "--base", "HEAD"}, code: 0},
		{name: "affected, none", args: []string{"affected", "--since", "HEAD"}, code: 0},
		{name: "usage: unknown flag", args: []string{"build", "ok", "--nope"}, code: 2, stderr: "unknown flag: --nope"},
		{name: "usage: affected without --since", args: []string{"affected"}, code: 2, stderr: "--since is required"},
		{name: "usage: diff --no-index with one directory", args: []string{"diff", "--no-index", "ok"}, code: 2, stderr: "--no-index needs two directories"},
		{name: "trouble: an unknown revision", args: []string{"diff", "--base", "no-such-rev"}, code: 2},
		{name: "diff outside a repository", dir: outside, args: []string{"diff"}, code: 2,
			stderr: "to compare two directories, run kpipe diff --no-index DIR_A DIR_B"},
		{name: "affected outside a repository", dir: outside, args: []string{"affected", "--since", "HEAD"}, code: 2,
			stderr: "kpipe diff --no-index DIR_A DIR_B"},
		{name: "a change", setup: func() {
			writeFiles(t, repo, map[string]string{"ok/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\ndata:\n  a: \"2\"\n"})
		}, args: []string{"diff", "--base", "HEAD"}, code: 1},
		{name: "affected, one", args: []string{"affected", "--since", "HEAD"}, code: 0},
		{name: "build-all --check, stale", args: []string{"build-all", ".", "--out-dir", out, "--check"}, code: 1, stderr: "out of date: "},
		{name: "a broken root", setup: func() {
			writeFiles(t, repo, map[string]string{"bad/kustomization.yaml": "resources:\n- missing.yaml\n"})
		}, args: []string{"build", "bad"}, code: 1},
		{name: "build-all with a broken root", args: []string{"build-all", "."}, code: 1},
		{name: "affected, a root that does not build", args: []string{"affected", "--since", "HEAD"}, code: 1},
	} {
		if tc.setup != nil {
			tc.setup()
		}
		if tc.dir != "" {
			t.Chdir(tc.dir)
		}
		code, _, stderr := kpipe(t, append(tc.args, cache...)...)
		if code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%s: exit %d (want %d), stderr %q (want it to hold %q)", tc.name, code, tc.code, stderr, tc.stderr)
		}
		if tc.dir != "" {
			t.Chdir(repo)
		}
	}
}

// TestBuildAllErrorsLikeBuild: build-all's list of failing roots gives
// each root's plain line for a person (file:line, what is wrong), as
// kpipe build prints it first, then kustomize's wording; roots, outputs
// and the plain line name paths relative to the current directory, in
// the list and in the report.
func TestBuildAllErrorsLikeBuild(t *testing.T) {
	tree := t.TempDir()
	writeFiles(t, tree, map[string]string{
		"apps/ok/kustomization.yaml":  "resources:\n- cm.yaml\n",
		"apps/ok/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
		"apps/bad/kustomization.yaml": "resources: [cm.yml]\n",
		"apps/bad/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n",
	})
	t.Chdir(tree)
	report := filepath.Join(t.TempDir(), "report.json")
	code, _, stderr := kpipe(t, "build-all", ".", "--out-dir", "out", "--report", report, "--no-cache")
	hint := "apps/bad/kustomization.yaml:1: resources entry 'cm.yml' is neither a file nor a directory; did you mean 'cm.yaml'?"
	if code != 1 || !strings.Contains(stderr, "  * apps/bad: "+hint+"\n    accumulating resources") {
		t.Errorf("exit %d; the list lacks the plain line, relative, before kustomize's:\n%s", code, stderr)
	}
	_, _, buildErr := kpipe(t, "build", "apps/bad")
	if !strings.HasPrefix(buildErr, "Error: "+hint+"\n") {
		t.Errorf("kpipe build's plain line differs:\n%s", buildErr)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Roots []struct{ Path, Output, Status, Hint string }
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, rr := range r.Roots {
		got[rr.Path] = rr.Status + " " + rr.Output + " " + rr.Hint
	}
	if got["apps/ok"] != "ok "+filepath.Join("out", "apps", "ok.yaml")+" " || got["apps/bad"] != "error  "+hint {
		t.Errorf("report roots: %q", got)
	}
}

// TestStackTraceFlagAccepted: kustomize's global --stack-trace is accepted
// before or after the command, as scripts written for kustomize pass it.
func TestStackTraceFlagAccepted(t *testing.T) {
	want, _ := os.ReadFile("../../testdata/examples/prod.expected.yaml")
	for _, args := range [][]string{
		{"build", "--stack-trace", "../../testdata/examples/prod"},
		{"--stack-trace", "build", "../../testdata/examples/prod"},
		{"build", "../../testdata/examples/prod", "--stack-trace"},
	} {
		if code, out, errOut := kpipe(t, args...); code != 0 || out != string(want) {
			t.Errorf("kpipe %v: exit %d\n%s", args, code, errOut)
		}
	}
}
