package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExplainNamesWhatChanged: --explain names the file after an edit, the
// flag after a flag change, and the plugin (its executable) after its
// binary changes; a build with nothing changed says it is up to date.
func TestExplainNamesWhatChanged(t *testing.T) {
	dir := t.TempDir()
	cacheDir := t.TempDir()
	files := map[string]string{
		"app/kustomization.yaml":  "resources:\n- ../base\ntransformers:\n- fn.yaml\n",
		"app/fn.yaml":             "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./fn.sh\n",
		"app/fn.sh":               "#!/bin/sh\ncat\n",
		"base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v1\n",
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
	app := filepath.Join(dir, "app")
	build := func(extra ...string) string {
		t.Helper()
		args := append([]string{"build", app, "--explain", "--cache-dir", cacheDir, "--enable-alpha-plugins", "--enable-exec"}, extra...)
		code, _, errOut := kpipe(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		return errOut
	}
	if out := build(); !strings.Contains(out, "no earlier build recorded") {
		t.Fatalf("first build:\n%s", out)
	}
	// A root that runs plugins is never up to date as a whole; with
	// nothing changed its plugin stage is a hit. Its base only lists a
	// file (a lazy node, not stored by the first build): the second build
	// builds it for the root and stores it, and the third reads it.
	if out := build(); !strings.Contains(out, "app: built, runs plugins\n") || !strings.Contains(out, "fn.yaml): hit") ||
		!strings.Contains(out, "base: built when a dependent asked (lazy") || strings.Contains(out, " changed") {
		t.Fatalf("nothing changed:\n%s", out)
	}
	if out := build(); !strings.Contains(out, "fn.yaml): hit") || !strings.Contains(out, "base: unchanged (lazy") || strings.Contains(out, " changed") {
		t.Fatalf("nothing changed, third build:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(dir, "base/cm.yaml"), []byte(strings.Replace(files["base/cm.yaml"], "v1", "v2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := build()
	if !strings.Contains(out, "base: built: resource cm.yaml changed") {
		t.Fatalf("after an edit, the file is not named:\n%s", out)
	}
	if !strings.Contains(out, "stage plugin Fn 'fn' (exec ") || !strings.Contains(out, "input resources changed") {
		t.Fatalf("after an edit, the plugin stage's changed input is not named:\n%s", out)
	}
	out = build("--enable-managedby-label")
	if !strings.Contains(out, "setting --enable-managedby-label changed (false -> true)") {
		t.Fatalf("after a flag change, the flag is not named:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(dir, "app/fn.sh"), []byte("#!/bin/sh\n# v2\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out = build("--enable-managedby-label")
	if !strings.Contains(out, "stage plugin Fn 'fn' (exec ") || !strings.Contains(out, "executable changed") {
		t.Fatalf("after the plugin's binary changed, it is not named:\n%s", out)
	}
	build("--enable-managedby-label", "-e", "STAGE=one")
	out = build("--enable-managedby-label", "-e", "STAGE=two")
	if !strings.Contains(out, "env STAGE changed") || strings.Contains(out, "one") || strings.Contains(out, "two") {
		t.Fatalf("after an environment variable changed, it is not named (or its value is printed):\n%s", out)
	}
	// build-all puts the same in its report.
	report := filepath.Join(t.TempDir(), "report.json")
	code, _, errOut := kpipe(t, "build-all", dir, "--explain", "--report", report, "--cache-dir", cacheDir, "--enable-alpha-plugins", "--enable-exec", "--progress=false")
	if code != 0 {
		t.Fatalf("build-all: exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(report)
	if err != nil || !strings.Contains(string(data), `"explain": [`) || !strings.Contains(string(data), `"status": "built, runs plugins"`) {
		t.Fatalf("report without explain: %v\n%s", err, data)
	}
}

// TestExplainRelocatedRoot: a copy of a tree at another path builds from
// the cache, and each root's line says it was a hit and where its output
// came from, never that it was not built ("lazy") as a base's line may:
// a root that is also another root's base included, and with kpipe build.
func TestExplainRelocatedRoot(t *testing.T) {
	cacheDir := t.TempDir()
	files := map[string]string{
		"base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
		"prod/kustomization.yaml": "resources:\n- ../base\nnamePrefix: prod-\n",
	}
	a, b := t.TempDir(), t.TempDir()
	writeFiles(t, a, files)
	writeFiles(t, b, files)
	buildAll := func(tree string) string {
		t.Helper()
		code, _, errOut := kpipe(t, "build-all", tree, "--all-kustomizations", "--explain", "--cache-dir", cacheDir, "--out-dir", t.TempDir())
		if code != 0 {
			t.Fatalf("build-all %s: exit %d: %s", tree, code, errOut)
		}
		return errOut
	}
	if out := buildAll(a); strings.Count(out, ": built: no earlier build recorded") != 2 {
		t.Fatalf("first build:\n%s", out)
	}
	out := buildAll(b)
	for _, root := range []string{"base", "prod"} {
		if !strings.Contains(out, filepath.Join(b, root)+": hit (its output, ") {
			t.Errorf("root %s is not a hit naming where its output came from:\n%s", root, out)
		}
	}
	if strings.Contains(out, "lazy") || !strings.Contains(out, "0 nodes built, 2 from cache") {
		t.Errorf("the relocated tree did not build from the cache, or a root reads as not built:\n%s", out)
	}
	code, _, errOut := kpipe(t, "build", filepath.Join(b, "base"), "--explain", "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(errOut, "base: hit (its output, stored under its key)\n") {
		t.Errorf("kpipe build of the relocated base: exit %d:\n%s", code, errOut)
	}
}

// A node that fails says so, every run (an error is never cached), and a
// node built at a new path says why the cache held nothing for it: never
// built with its kustomization, or never with the current content of the
// files it reads.
func TestExplainFailedAndMissedNodes(t *testing.T) {
	cacheDir := t.TempDir()
	tree := t.TempDir()
	patched := map[string]string{
		"ov/kustomization.yaml": "resources:\n- cm.yaml\npatches:\n- path: p.yaml\n",
		"ov/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\n",
		"ov/p.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\ndata:\n  k: one\n",
	}
	writeFiles(t, tree, map[string]string{
		"bad/kustomization.yaml":  "resources:\n- missing.yaml\n",
		"good/kustomization.yaml": "resources:\n- cm.yaml\n",
		"good/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
	})
	writeFiles(t, tree, patched)
	for run := 0; run < 2; run++ {
		_, _, errOut := kpipe(t, "build-all", tree, "--explain", "--cache-dir", cacheDir)
		if !strings.Contains(errOut, "bad: failed (an error is never cached") {
			t.Errorf("run %d: the failing node does not say it failed:\n%s", run, errOut)
		}
	}
	other := t.TempDir()
	writeFiles(t, other, map[string]string{
		"good/kustomization.yaml": "resources:\n- cm.yaml\n",
		"good/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n",
	})
	patched["ov/p.yaml"] = strings.Replace(patched["ov/p.yaml"], "one", "two", 1)
	writeFiles(t, other, patched)
	_, _, errOut := kpipe(t, "build-all", other, "--explain", "--cache-dir", cacheDir)
	const first = "built: no earlier build recorded (records are kept by runs with --explain); "
	if !strings.Contains(errOut, "good: "+first+"not in the cache: never built with this kustomization, resources, bases and settings\n") {
		t.Errorf("a node new to the cache, at a new path, does not say why:\n%s", errOut)
	}
	if !strings.Contains(errOut, "ov: "+first+"not in the cache: never built with the current content of the files it reads\n") {
		t.Errorf("a node whose patch is new, at a new path, does not say why:\n%s", errOut)
	}
}
