package fnrun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/plugins"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fnConfig(name, script string) string {
	return "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: " + name + "\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + script + "\n"
}

var opts = Options{Plugins: plugins.Options{EnableExec: true}}

// Functions run deepest first, each over its own directory only; a changed
// file is rewritten, an untouched one keeps its bytes, a file whose
// objects a function dropped is removed.
func TestRunScopeOrderAndWriteBack(t *testing.T) {
	dir := t.TempDir()
	// label.sh appends its config's name and $SUFFIX to the "seen"
	// annotation of every object it gets.
	label := `#!/bin/sh
in=$(cat)
name=$(printf '%s\n' "$in" | sed -n '/^functionConfig:/,/^items:/s/^    name: //p')
printf '%s\n' "$in" | sed "s/^\(      seen: .*\)$/\1-$name$SUFFIX/"
`
	writeFiles(t, dir, map[string]string{
		"label.sh":       label,
		"fn.yaml":        fnConfig("top", "./label.sh") + "  # SUFFIX comes from --env\n",
		"sub/fn.yaml":    fnConfig("deep", "../label.sh"),
		"top.yaml":       "# a comment that stays\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: top\n  annotations:\n    seen: x\n",
		"sub/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\n  annotations:\n    seen: x\n",
		".hidden/x.yaml": "not: [valid",
		"notes.txt":      "ignored",
		"other/keep.yml": "# untouched\napiVersion: v1\nkind: Secret\nmetadata:\n  name: keep\n",
	})
	o := opts
	o.Plugins.Env = []string{"SUFFIX=!"}
	res, err := Run(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "sub/cm.yaml")); !strings.Contains(got, `seen: x-deep!-top!`) {
		t.Errorf("sub/cm.yaml: the deep and the top function should both have run, deep first:\n%s", got)
	}
	if got := readFile(t, filepath.Join(dir, "top.yaml")); !strings.Contains(got, `seen: x-top!`) || strings.Contains(got, "deep") || strings.Contains(got, "comment") {
		t.Errorf("top.yaml: only the top function should have run (and the file be rewritten):\n%s", got)
	}
	if got := readFile(t, filepath.Join(dir, "other/keep.yml")); !strings.HasPrefix(got, "# untouched") {
		t.Errorf("an unchanged file was rewritten:\n%s", got)
	}
	if got := readFile(t, filepath.Join(dir, "fn.yaml")); !strings.Contains(got, "# SUFFIX comes from --env") {
		t.Errorf("the function config was rewritten:\n%s", got)
	}
	for _, w := range res.Written {
		if w != "top.yaml" && w != "sub/cm.yaml" {
			t.Errorf("wrote %s", w)
		}
	}
}

// A function that drops objects removes their files; one that names a
// path outside the directory fails the run, and nothing is written.
func TestRunRemovesAndRefusesEscapes(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"fn.yaml":   fnConfig("f", "./f.sh"),
		"f.sh":      "#!/bin/sh\nsed -n '/^- apiVersion: example.com/,/^- /p' | sed '$d' >/tmp/ignored.$$; cat <<END\napiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: example.com/v1\n  kind: Fn\n  metadata:\n    name: f\n    annotations:\n      config.kubernetes.io/path: fn.yaml\n      config.kubernetes.io/function: |\n        exec:\n          path: ./f.sh\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: new\n    annotations:\n      config.kubernetes.io/path: $TARGET\nEND\nrm -f /tmp/ignored.$$\n",
		"gone.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: gone\n",
	})
	o := opts
	o.Plugins.Env = []string{"TARGET=../outside.yaml"}
	if _, err := Run(context.Background(), dir, o); err == nil || !strings.Contains(err.Error(), "leaves the directory") {
		t.Fatalf("escaping path: error = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone.yaml")); err != nil {
		t.Errorf("a failed run removed a file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "outside.yaml")); err == nil {
		t.Error("wrote outside the directory")
	}

	o.Plugins.Env = []string{"TARGET=made/new.yaml"}
	res, err := Run(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone.yaml")); err == nil {
		t.Error("gone.yaml should have been removed")
	}
	if got := readFile(t, filepath.Join(dir, "made/new.yaml")); got != "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n" {
		t.Errorf("made/new.yaml:\n%s", got)
	}
	if len(res.Removed) != 1 || res.Removed[0] != "gone.yaml" {
		t.Errorf("removed %v", res.Removed)
	}
}

// A failing function, or one reporting an error result, writes nothing;
// --dry-run prints instead of writing.
func TestRunFailuresAndDryRun(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"fn.yaml": fnConfig("f", "./f.sh"),
		"f.sh":    "#!/bin/sh\ncat >/dev/null\necho 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults:\n- message: replicas must be set\n  severity: error'\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
	})
	_, err := Run(context.Background(), dir, opts)
	if err == nil || !strings.Contains(err.Error(), "replicas must be set") || !strings.Contains(err.Error(), "fn.yaml") {
		t.Errorf("error result: %v", err)
	}
	if got := readFile(t, filepath.Join(dir, "cm.yaml")); !strings.Contains(got, "name: cm") {
		t.Errorf("cm.yaml changed: %s", got)
	}

	writeFiles(t, dir, map[string]string{"f.sh": "#!/bin/sh\nsed 's/name: cm/name: renamed/'\n"})
	var buf bytes.Buffer
	o := opts
	o.DryRun = &buf
	if _, err := Run(context.Background(), dir, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "name: renamed") || !strings.Contains(buf.String(), "config.kubernetes.io/path: cm.yaml") {
		t.Errorf("dry run printed:\n%s", buf.String())
	}
	if got := readFile(t, filepath.Join(dir, "cm.yaml")); !strings.Contains(got, "name: cm") {
		t.Errorf("a dry run wrote cm.yaml: %s", got)
	}

	// A function that returns nothing stops the run: nothing is written.
	writeFiles(t, dir, map[string]string{"f.sh": "#!/bin/sh\ncat >/dev/null\n"})
	res, err := Run(context.Background(), dir, opts)
	if err != nil || res.Stopped == "" || len(res.Written)+len(res.Removed) != 0 {
		t.Errorf("empty output: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cm.yaml")); err != nil {
		t.Errorf("empty output removed cm.yaml: %v", err)
	}

	writeFiles(t, dir, map[string]string{"bad.yaml": "- a list\n"})
	if _, err := Run(context.Background(), dir, opts); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("a file that is not objects: error = %v", err)
	}
}

// A path annotation through a symlinked subdirectory that points outside
// the directory leaves it as much as `../` does: refused, nothing written,
// resolved before the containment check.
func TestRunRefusesWritesThroughSymlinkedDirectories(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"fn.yaml": fnConfig("f", "./f.sh"),
		"f.sh":    "#!/bin/sh\ncat >/dev/null; cat <<END\napiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: example.com/v1\n  kind: Fn\n  metadata:\n    name: f\n    annotations:\n      config.kubernetes.io/path: fn.yaml\n      config.kubernetes.io/function: |\n        exec:\n          path: ./f.sh\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: new\n    annotations:\n      config.kubernetes.io/path: $TARGET\nEND\n",
	})
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Skip("no symlinks:", err)
	}
	for _, target := range []string{"link/x.yaml", "link/deeper/x.yaml"} {
		o := opts
		o.Plugins.Env = []string{"TARGET=" + target}
		_, err := Run(context.Background(), dir, o)
		if err == nil || !strings.Contains(err.Error(), "leaves the directory") || !strings.Contains(err.Error(), "through a symlink") {
			t.Errorf("%s: error = %v", target, err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Fatalf("%s: wrote outside the directory: %v", target, entries)
		}
	}
	// A symlink to a directory inside is fine.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "inner")); err != nil {
		t.Fatal(err)
	}
	o := opts
	o.Plugins.Env = []string{"TARGET=inner/x.yaml"}
	if _, err := Run(context.Background(), dir, o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "x.yaml")); err != nil {
		t.Error("a write through a symlink inside the directory did not happen")
	}
}
