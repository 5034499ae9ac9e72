package main

import (
	"os"
	"path/filepath"
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
	code, out, errOut := kpipe(t, "build", filepath.Join(dir, "k"), "--enable-alpha-plugins")
	want := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: p-app\nspec:\n  replicas: 3\n"
	if code != 0 || out != want {
		t.Errorf("exit %d, stdout\n%s\nstderr %s", code, out, errOut)
	}
}
