package plugins

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/resource"
)

// A KEP-993 plugin is an executable named after the config's group, in
// $XDG_CONFIG_HOME/kustomize/plugins or on PATH, run as `generate` or
// `transform` with the config (and the objects) on stdin; exit status 127
// declines without failing.
func TestKEP993Plugin(t *testing.T) {
	dir := t.TempDir()
	xdg := filepath.Join(dir, "xdg")
	writeExec(t, filepath.Join(xdg, "kustomize", "plugins", "team.example.com"), `#!/bin/sh
case "$1" in
generate)
  name=$(sed -n 's/^  name: //p' | head -n 1)
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n' "$name"
  ;;
transform)
  # pass everything through (the config included), renaming x to y
  sed 's/^  name: x$/  name: z/'
  ;;
*) exit 127 ;;
esac
`)
	env := "XDG_CONFIG_HOME=" + xdg
	gen, err := load(t, dir, "apiVersion: team.example.com/v1\nkind: App\nmetadata:\n  name: made\n", Generator, env)
	if err != nil {
		t.Fatal(err)
	}
	if gen.Kind() != "KEP993Plugin" {
		t.Errorf("kind %s", gen.Kind())
	}
	rs := resource.NewList(decodeOne(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n"))
	if err := gen.Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	tr, err := load(t, dir, "apiVersion: team.example.com/v1\nkind: App\nmetadata:\n  name: t\n", Transformer, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	// The renamed Secret is a new object, so it comes last.
	want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: made\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: z\n"
	if got := render(t, rs); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// On PATH; 127 for both subcommands: nothing generated, nothing changed.
	bin := filepath.Join(dir, "bin")
	writeExec(t, filepath.Join(bin, "other.example.com"), "#!/bin/sh\ncat >/dev/null\nexit 127\n")
	path := "PATH=" + bin + ":/usr/bin:/bin"
	for _, role := range []Role{Generator, Transformer} {
		s, err := load(t, dir, "apiVersion: other.example.com/v1\nkind: App\nmetadata:\n  name: n\n", role, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(context.Background(), rs); err != nil {
			t.Errorf("%s exiting 127: %v", role, err)
		}
		if got := render(t, rs); got != want {
			t.Errorf("%s exiting 127 changed the objects:\n%s", role, got)
		}
	}

	// Any other failure is an error; a missing plugin names every place.
	writeExec(t, filepath.Join(bin, "fail.example.com"), "#!/bin/sh\necho broken >&2\nexit 3\n")
	s, err := load(t, dir, "apiVersion: fail.example.com/v1\nkind: App\nmetadata:\n  name: n\n", Generator, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background(), rs); err == nil || !strings.Contains(err.Error(), "exited with status 3") || !strings.Contains(err.Error(), "broken") {
		t.Errorf("failing plugin: error = %v", err)
	}
	_, err = load(t, dir, "apiVersion: none.example.com/v1\nkind: App\nmetadata:\n  name: n\n", Generator, path, env)
	if err == nil || !strings.Contains(err.Error(), "KEP-993 plugin named 'none.example.com' in "+filepath.Join(xdg, "kustomize", "plugins")+" or on PATH") {
		t.Errorf("missing plugin: error = %v", err)
	}
}
