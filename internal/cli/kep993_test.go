package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A KEP-993 plugin on PATH, end to end: `kpipe build` runs `team.example.com
// generate` for a generators: entry and `team.example.com transform` for a
// transformers: entry; the transformer exits 127 (not supported), which
// leaves the objects as they are.
func TestBuildKEP993Plugin(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	files := map[string]string{
		"bin/team.example.com": `#!/bin/sh
case "$1" in
generate)
  replicas=$(sed -n 's/^replicas: //p')
  printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  replicas: %s\n' "$replicas"
  ;;
*) cat >/dev/null; exit 127 ;;
esac
`,
		"k/kustomization.yaml": "namePrefix: p-\ngenerators:\n- app.yaml\ntransformers:\n- app.yaml\n",
		"k/app.yaml":           "apiVersion: team.example.com/v1\nkind: App\nmetadata:\n  name: app\nreplicas: 3\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	// Found on PATH, it runs only with --enable-exec.
	code, _, errOut := kpipe(t, "build", filepath.Join(dir, "k"), "--enable-alpha-plugins")
	if code == 0 || !strings.Contains(errOut, "found on PATH; running an executable found on PATH needs --enable-exec") {
		t.Errorf("without --enable-exec: exit %d, stderr %s", code, errOut)
	}
	code, out, errOut := kpipe(t, "build", filepath.Join(dir, "k"), "--enable-alpha-plugins", "--enable-exec")
	want := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: p-app\nspec:\n  replicas: 3\n"
	if code != 0 || out != want {
		t.Errorf("exit %d, stdout\n%s\nstderr %s", code, out, errOut)
	}
}

// writeFiles writes files (relative path to content) under dir, executable.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// A generator config with `apiVersion: sh/v1` (or python3/v1, bash/v1)
// must not make kpipe find `sh` on PATH and run `sh generate`, which would
// execute the repository's own `generate` script: a group without a dot is
// not an API group, and is never looked up, whatever the flags.
func TestDotlessGroupNeverRunsAnInterpreterFromPATH(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	for _, group := range []string{"sh", "bash", "python3"} {
		writeFiles(t, dir, map[string]string{
			"k/kustomization.yaml": "generators:\n- gen.yaml\n",
			"k/gen.yaml":           "apiVersion: " + group + "/v1\nkind: Gen\nmetadata:\n  name: g\n",
			"k/generate":           "touch " + marker + "\nprint('x')\n",
		})
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
		code, _, errOut := kpipe(t, "build", filepath.Join(dir, "k"), "--enable-alpha-plugins", "--enable-exec")
		if code == 0 || !strings.Contains(errOut, "no plugin found") || !strings.Contains(errOut, "not an API group") {
			t.Errorf("%s/v1: exit %d, stderr %s", group, code, errOut)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s/v1: the repository's generate script ran", group)
		}
	}
}

// A plugin kind (or group, or version) with `../` or a path separator never
// selects an executable: kustomize joins it into the plugin path, so that
// `kind: ../../(...)/bin/sh` runs /bin/sh with the config file as script.
func TestPluginKindWithDotDotNeverSelectsAnExecutable(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	up := strings.Repeat("../", 40)
	for _, cfg := range []string{
		"apiVersion: v1\nkind: " + up + "bin/sh\nmetadata:\n  name: g\nx: y; touch " + marker + "\n",
		"apiVersion: " + strings.TrimSuffix(up, "/") + "/v1\nkind: sh\nmetadata:\n  name: g\nx: y; touch " + marker + "\n",
		"apiVersion: v1\nkind: ..\\..\\sh\nmetadata:\n  name: g\n",
	} {
		writeFiles(t, dir, map[string]string{
			"k/kustomization.yaml": "generators:\n- gen.yaml\n",
			"k/gen.yaml":           cfg,
		})
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
		code, _, errOut := kpipe(t, "build", filepath.Join(dir, "k"), "--enable-alpha-plugins", "--enable-exec")
		if code == 0 || !strings.Contains(errOut, "cannot name a plugin") {
			t.Errorf("%q: exit %d, stderr %s", cfg, code, errOut)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%q: an executable outside the plugin home ran", cfg)
		}
	}
}
