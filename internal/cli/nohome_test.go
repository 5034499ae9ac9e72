package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// withoutHome is the test's environment less every variable a cache
// directory could come from (os.UserHomeDir reads HOME on Unix,
// USERPROFILE on Windows, home on Plan 9), running the test binary as
// kpipe.
func withoutHome() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.ToUpper(kv[:strings.IndexByte(kv+"=", '=')]) {
		case "HOME", "XDG_CACHE_HOME", "USERPROFILE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "KPIPE_TEST_AS_KPIPE=1")
}

// kpipeWithoutHome runs a kpipe process in dir (the test's directory when
// "") with withoutHome's environment.
func kpipeWithoutHome(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--"}, args...)...)
	cmd.Env = withoutHome()
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return code, stdout.String(), stderr.String()
}

// oneCacheWarning checks that stderr holds one warning, that no cache
// directory was found (and, for build, nothing else).
func oneCacheWarning(t *testing.T, what, stderr string) {
	t.Helper()
	var warnings []string
	for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if strings.Contains(l, "Warning: cache") || what == "build" {
			warnings = append(warnings, l)
		}
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "Warning: cache: finding the cache directory: ") ||
		!strings.HasSuffix(warnings[0], "; building without a cache") {
		t.Errorf("%s: stderr does not hold exactly one warning, that the cache directory was not found:\n%s", what, stderr)
	}
}

// TestNoHomeBuildsWithoutCache: with neither HOME nor XDG_CACHE_HOME (a
// systemd unit, some CI containers), the commands that use the cache run
// without one, as kustomize builds: exit 0, kustomize's bytes, one
// warning; a remote base is fetched into a temporary directory, removed
// after. `kpipe cache` has nothing to manage and fails, naming why.
func TestNoHomeBuildsWithoutCache(t *testing.T) {
	want, err := os.ReadFile("../../testdata/examples/prod.expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	example, err := filepath.Abs("../../testdata/examples")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where a fetch without a cache goes

	code, out, errOut := kpipeWithoutHome(t, "", "build", filepath.Join(example, "prod"))
	if code != 0 || out != string(want) {
		t.Fatalf("build: exit %d, output differs from kustomize's: %v\n%s%s", code, out != string(want), errOut, out)
	}
	oneCacheWarning(t, "build", errOut)

	outDir := filepath.Join(t.TempDir(), "out")
	code, _, errOut = kpipeWithoutHome(t, example, "build-all", "--out-dir", outDir)
	if code != 0 {
		t.Fatalf("build-all: exit %d: %s", code, errOut)
	}
	oneCacheWarning(t, "build-all", errOut)
	if got, err := os.ReadFile(filepath.Join(outDir, "prod.yaml")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("build-all: prod.yaml differs from kustomize's output (%v):\n%s", err, got)
	}

	// A remote base: fetched with git into a directory of its own.
	f := newRemoteFixture(t)
	dir := overlay(t, "resources:\n- file://"+f.bare+"//base?ref=v1\n")
	code, wantOut, wantErr := kpipe(t, "build", dir, "--no-cache")
	if code != 0 {
		t.Fatalf("build --no-cache with a remote base: exit %d: %s", code, wantErr)
	}
	code, out, errOut = kpipeWithoutHome(t, "", "build", dir)
	warning, rest, _ := strings.Cut(errOut, "\n")
	if code != 0 || out != wantOut || rest != wantErr {
		t.Fatalf("build with a remote base: exit %d, output or warnings differ from --no-cache's:\n%s%s", code, errOut, out)
	}
	oneCacheWarning(t, "build", warning+"\n")
	if left, _ := filepath.Glob(filepath.Join(tmp, "kpipe-remote-*")); len(left) != 0 {
		t.Errorf("fetched remote base left behind: %v", left)
	}

	// diff and affected, in a repository with one change.
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{
		"app/kustomization.yaml": "resources:\n- cm.yaml\n",
		"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n",
	})
	runGit(t, repo, "init", "--quiet", "-b", "main")
	runGit(t, repo, "add", ".")
	runGit(t, repo, "commit", "--quiet", "-m", "one")
	writeFiles(t, repo, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"2\"\n"})
	code, out, errOut = kpipeWithoutHome(t, repo, "affected", "--since", "HEAD")
	if code != 0 || out != "app\n" {
		t.Errorf("affected: exit %d, want app:\n%s%s", code, errOut, out)
	}
	oneCacheWarning(t, "affected", errOut)
	code, out, errOut = kpipeWithoutHome(t, repo, "diff", "--base", "HEAD", "--name-only", "--color", "never")
	if code != 1 || !strings.Contains(out, "app") {
		t.Errorf("diff: exit %d (want 1, a difference), want app named:\n%s%s", code, errOut, out)
	}
	oneCacheWarning(t, "diff", errOut)

	for _, args := range [][]string{{"cache", "stats"}, {"cache", "clear"}, {"cache", "verify"}, {"cache", "prune", "--max-size", "1MB"}} {
		code, out, errOut := kpipeWithoutHome(t, "", args...)
		if code == 0 || !strings.Contains(errOut, "finding the cache directory") || !strings.Contains(errOut, "--cache-dir") {
			t.Errorf("%s: exit %d, want a failure naming the missing cache directory and --cache-dir:\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// TestUnusableCacheDirRemoteBase: a --cache-dir that cannot be created
// (under a file) is one warning, and a remote base is fetched as with
// --no-cache, not into that directory.
func TestUnusableCacheDirRemoteBase(t *testing.T) {
	f := newRemoteFixture(t)
	dir := overlay(t, "resources:\n- file://"+f.bare+"//base?ref=v1\n")
	code, wantOut, wantErr := kpipe(t, "build", dir, "--no-cache")
	if code != 0 {
		t.Fatalf("build --no-cache: exit %d: %s", code, wantErr)
	}
	file := filepath.Join(t.TempDir(), "file")
	writeFiles(t, filepath.Dir(file), map[string]string{"file": ""})
	code, out, errOut := kpipe(t, "build", dir, "--cache-dir", filepath.Join(file, "cache"))
	warning, rest, _ := strings.Cut(errOut, "\n")
	if code != 0 || out != wantOut || rest != wantErr || !strings.HasPrefix(warning, "Warning: cache: not using ") {
		t.Fatalf("build with a --cache-dir under a file: exit %d, output or warnings differ from --no-cache's:\n%s%s", code, errOut, out)
	}
}
