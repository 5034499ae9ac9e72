package batch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/loaders"
)

// writeTree writes files (slash paths relative to dir).
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func app(name string) map[string]string {
	return map[string]string{
		name + "/kustomization.yaml": "resources:\n- cm.yaml\n",
		name + "/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + filepath.Base(name) + "\n",
	}
}

// run runs build-all over tree into out, with the working directory set
// to tree, and returns the report.
func run(t *testing.T, tree, out string, prune bool) *Report {
	t.Helper()
	t.Chdir(tree)
	rep, err := Run(context.Background(), Options{Trees: []string{"."}, OutDir: out, Prune: prune, Restriction: loaders.RootOnly})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestPruneRemovesOnlyWhatKpipeWrote: after a root is deleted, --prune
// deletes its output; a file of the user's in the output directory, and
// an output the user changed, stay.
func TestPruneRemovesOnlyWhatKpipeWrote(t *testing.T) {
	tree, out := t.TempDir(), t.TempDir()
	files := app("apps/a")
	for k, v := range app("apps/b") {
		files[k] = v
	}
	for k, v := range app("apps/c") {
		files[k] = v
	}
	writeTree(t, tree, files)
	rep := run(t, tree, out, true)
	if len(rep.Errors()) > 0 {
		t.Fatal(rep.Errors())
	}
	for _, r := range []string{"a", "b", "c"} {
		if !exists(filepath.Join(out, "apps", r+".yaml")) {
			t.Fatalf("no output for apps/%s", r)
		}
	}
	user := filepath.Join(out, "apps", "notes.txt")
	writeTree(t, out, map[string]string{"apps/notes.txt": "mine\n", "README": "mine too\n"})
	// The user edits c's output by hand, then both b and c go.
	if err := os.WriteFile(filepath.Join(out, "apps", "c.yaml"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"b", "c"} {
		if err := os.RemoveAll(filepath.Join(tree, "apps", r)); err != nil {
			t.Fatal(err)
		}
	}
	rep = run(t, tree, out, true)
	if got := strings.Join(rep.Pruned, ","); got != "apps/b.yaml" {
		t.Errorf("pruned %q, want apps/b.yaml", got)
	}
	if got := strings.Join(rep.Kept, ","); got != "apps/c.yaml" {
		t.Errorf("kept %q, want apps/c.yaml (changed by the user)", got)
	}
	if exists(filepath.Join(out, "apps", "b.yaml")) {
		t.Error("the removed root's output is still there")
	}
	for _, p := range []string{user, filepath.Join(out, "README"), filepath.Join(out, "apps", "c.yaml"), filepath.Join(out, "apps", "a.yaml")} {
		if !exists(p) {
			t.Errorf("%s was deleted", p)
		}
	}
}

// TestNoPruneWithoutTheFlag: without Prune, a removed root's output stays
// (and a later run with Prune still knows it wrote it).
func TestNoPruneWithoutTheFlag(t *testing.T) {
	tree, out := t.TempDir(), t.TempDir()
	files := app("a")
	for k, v := range app("b") {
		files[k] = v
	}
	writeTree(t, tree, files)
	run(t, tree, out, false)
	os.RemoveAll(filepath.Join(tree, "b"))
	run(t, tree, out, false)
	if !exists(filepath.Join(out, "b.yaml")) {
		t.Fatal("output deleted without --prune")
	}
	if rep := run(t, tree, out, true); strings.Join(rep.Pruned, ",") != "b.yaml" {
		t.Errorf("pruned %v, want [b.yaml]", rep.Pruned)
	}
}

// TestOutputCollisionIsAnError: the current directory's root and a root
// directory named _root would both write _root.yaml: the run fails naming
// both, and writes nothing.
func TestOutputCollisionIsAnError(t *testing.T) {
	tree, out := t.TempDir(), t.TempDir()
	files := app("_root")
	files["kustomization.yaml"] = "resources:\n- cm.yaml\n"
	files["cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: top\n"
	writeTree(t, tree, files)
	t.Chdir(tree)
	_, err := Run(context.Background(), Options{Trees: []string{"."}, OutDir: out, AllKustomizations: true})
	if err == nil || !strings.Contains(err.Error(), "_root.yaml") || !strings.Contains(err.Error(), filepath.Join(tree, "_root")) {
		t.Fatalf("err = %v, want a collision naming both roots and _root.yaml", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("the out dir holds %d entries after a refused run", len(entries))
	}
}

// TestRootListedTwiceIsBuiltOnce: a roots file naming one root relative
// and absolute builds and writes it once.
func TestRootListedTwiceIsBuiltOnce(t *testing.T) {
	tree, out := t.TempDir(), t.TempDir()
	writeTree(t, tree, app("a"))
	list := filepath.Join(t.TempDir(), "roots")
	os.WriteFile(list, []byte("a\n"+filepath.Join(tree, "a")+"\n"), 0o644)
	t.Chdir(tree)
	rep, err := Run(context.Background(), Options{RootsFrom: list, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Roots) != 1 {
		t.Errorf("%d roots in the report, want 1", len(rep.Roots))
	}
}

// TestFailingRootLosesItsOldOutput: a root that fails after a successful
// run no longer has an output file (kpipe wrote the old one), and the
// report says so.
func TestFailingRootLosesItsOldOutput(t *testing.T) {
	tree, out := t.TempDir(), t.TempDir()
	writeTree(t, tree, app("a"))
	run(t, tree, out, false)
	old := filepath.Join(out, "a.yaml")
	if !exists(old) {
		t.Fatal("no output after the first run")
	}
	writeTree(t, tree, map[string]string{"a/kustomization.yaml": "resources:\n- missing.yaml\n"})
	rep := run(t, tree, out, false)
	if len(rep.Errors()) != 1 || !rep.Roots[0].RemovedOutput {
		t.Fatalf("errors %v, removedOutput %v; want one error and the old output removed", rep.Errors(), rep.Roots[0].RemovedOutput)
	}
	if exists(old) {
		t.Error("the failing root's previous output is still there")
	}
}

// TestTamperedOutputIsRewrittenAndChanged: an output someone edited is
// rewritten with the build's output, and the report calls it changed.
func TestTamperedOutputIsRewrittenAndChanged(t *testing.T) {
	tree, out := t.TempDir(), t.TempDir()
	writeTree(t, tree, app("a"))
	cacheDir := t.TempDir()
	withCache := func() *Report {
		store := cache.Open(context.Background(), cache.Options{Dir: cacheDir, Warn: func(m string) { t.Error(m) }})
		defer store.Close()
		t.Chdir(tree)
		o := Options{Trees: []string{"."}, OutDir: out}
		o.Engine.Cache = engine.Cache{Store: store, Files: store.FileIndex(), Version: "test"}
		rep, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	first := withCache()
	want, _ := os.ReadFile(filepath.Join(out, "a.yaml"))
	if !first.Roots[0].Changed {
		t.Fatal("a first output is not reported as changed")
	}
	if again := withCache(); again.Roots[0].Changed {
		t.Fatal("an unchanged output is reported as changed")
	}
	os.WriteFile(filepath.Join(out, "a.yaml"), []byte("tampered\n"), 0o644)
	rep := withCache()
	got, _ := os.ReadFile(filepath.Join(out, "a.yaml"))
	if string(got) != string(want) || !rep.Roots[0].Changed {
		t.Errorf("after tampering: output restored %v, changed %v; want both", string(got) == string(want), rep.Roots[0].Changed)
	}
}

// TestConcurrentRunsIntoOneOutDir: two runs into one output directory at
// once (two CI jobs, or two shards given one directory) leave a manifest
// that lists every file both wrote, each with its content's digest; a
// pruning run beside a building one deletes only the output of the root
// that is gone.
func TestConcurrentRunsIntoOneOutDir(t *testing.T) {
	tree := t.TempDir()
	files := map[string]string{}
	const n = 12
	for i := 0; i < n; i++ {
		for _, g := range []string{"x", "y"} {
			for k, v := range app(fmt.Sprintf("%s/app%02d", g, i)) {
				files[k] = v
			}
		}
	}
	writeTree(t, tree, files)
	t.Chdir(tree)
	both := func(out string, prune bool) {
		t.Helper()
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, g := range []string{"x", "y"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				rep, err := Run(context.Background(), Options{Trees: []string{g}, OutDir: out, Prune: prune && g == "x", Restriction: loaders.RootOnly})
				if err != nil {
					t.Errorf("run over %s: %v", g, err)
					return
				}
				if errs := rep.Errors(); len(errs) > 0 {
					t.Errorf("run over %s: %v", g, errs)
				}
			}()
		}
		close(start)
		wg.Wait()
	}
	checkListed := func(out string, want int) {
		t.Helper()
		m := readManifest(out)
		if len(m.Outputs) != want {
			t.Errorf("the manifest lists %d outputs, want %d", len(m.Outputs), want)
		}
		for r, e := range m.Outputs {
			data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(r)))
			if err != nil {
				t.Errorf("listed output %s: %v", r, err)
				continue
			}
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != e.Digest {
				t.Errorf("listed output %s: digest differs", r)
			}
		}
	}
	for round := 0; round < 3; round++ {
		out := t.TempDir()
		both(out, false)
		checkListed(out, 2*n)
	}

	out := t.TempDir()
	both(out, false)
	if err := os.RemoveAll(filepath.Join(tree, "x", "app00")); err != nil {
		t.Fatal(err)
	}
	both(out, true)
	checkListed(out, 2*n-1)
	if exists(filepath.Join(out, "x", "app00.yaml")) {
		t.Error("the removed root's output was not pruned")
	}
	for i := 0; i < n; i++ {
		for _, g := range []string{"x", "y"} {
			if p := filepath.Join(out, g, fmt.Sprintf("app%02d.yaml", i)); (g != "x" || i != 0) && !exists(p) {
				t.Errorf("%s is gone", p)
			}
		}
	}
}
