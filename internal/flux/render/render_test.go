package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/loaders"
)

func object(t *testing.T, name, targetNamespace string) *flux.Kustomization {
	t.Helper()
	data := "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name + "\n  namespace: flux-system\nspec:\n  interval: 1m\n  path: ./app\n  targetNamespace: " + targetNamespace + "\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
	k, err := flux.Find([]byte(data), "ks.yaml", name, "flux-system")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The generated kustomization is served from memory: nothing is written
// into the tree, and builds of one path with different Flux objects at
// once each see their own (flux's default backend writes the file into
// the path, so two such builds corrupt each other).
func TestOverlayWritesNothingAndIsolatesBuilds(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	outs := make([]string, 8)
	errs := make([]error, 8)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns := []string{"a", "b"}[i%2]
			r, err := Kustomization(context.Background(), object(t, "app-"+ns, ns), app, Options{Engine: engine.Options{Jobs: 1}})
			if err == nil {
				var b strings.Builder
				for _, o := range r.Objects {
					md := o["metadata"].(map[string]any)
					b.WriteString(md["namespace"].(string) + "/" + md["labels"].(map[string]any)["kustomize.toolkit.fluxcd.io/name"].(string))
				}
				outs[i] = b.String()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, out := range outs {
		ns := []string{"a", "b"}[i%2]
		if errs[i] != nil || out != ns+"/app-"+ns {
			t.Errorf("build %d: %q, %v", i, out, errs[i])
		}
	}
	entries, err := os.ReadDir(app)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the path holds %d entries after the builds, want its one file", len(entries))
	}
}

// The overlay answers for its file as a file of the tree, in every way
// the engine asks, and leaves the rest to the tree.
func TestOverlayAnswersAsATree(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "kustomization.yaml")
	o := newOverlay(loaders.Disk, map[string][]byte{file: []byte("resources: [a.yaml]\n")})
	if data, fi, err := o.ReadFile(file, false); err != nil || string(data) != "resources: [a.yaml]\n" || fi.Size() != int64(len(data)) || !fi.Mode().IsRegular() {
		t.Errorf("ReadFile: %q %v", data, err)
	}
	if _, entries, err := o.ReadDir(dir); err != nil || len(entries) != 2 {
		t.Errorf("ReadDir: %v %v", entries, err)
	}
	if real, err := o.EvalSymlinks(file); err != nil || real != file {
		t.Errorf("EvalSymlinks: %q %v", real, err)
	}
	if _, err := o.Readlink(file); err == nil {
		t.Error("Readlink of the overlay's file: no error")
	}
	if fi, err := o.Lstat(filepath.Join(dir, "a.yaml")); err != nil || fi.Size() != 1 {
		t.Errorf("Lstat of the tree's file: %v", err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the overlay's file is on disk: %v", err)
	}
}
