package kpipe_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"testing/fstest"

	"github.com/kpipe/kpipe"
)

// Build one overlay from disk, as `kustomize build testdata/examples/prod`.
func ExampleRenderer_Build() {
	r := kpipe.New(kpipe.Options{})
	out, err := r.Build(context.Background(), "testdata/examples/prod")
	if err != nil {
		log.Fatal(err)
	}
	want, err := os.ReadFile("testdata/examples/prod.expected.yaml")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out) == string(want))
	// Output: true
}

// Render a tree held in memory (here a testing/fstest.MapFS; any fs.FS
// works).
func ExampleRenderer_BuildFS() {
	tree := fstest.MapFS{
		"app/kustomization.yaml": {Data: []byte("namePrefix: prod-\nresources:\n- cm.yaml\n")},
		"app/cm.yaml":            {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n")},
	}
	out, err := kpipe.New(kpipe.Options{}).BuildFS(context.Background(), tree, "app")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(out))
	// Output:
	// apiVersion: v1
	// data:
	//   mode: fast
	// kind: ConfigMap
	// metadata:
	//   name: prod-settings
}

// Build several overlays at once with a shared cache: a second call finds
// their outputs in the cache.
func ExampleRenderer_BuildAll() {
	dir, err := os.MkdirTemp("", "kpipe-example-cache-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	c, err := kpipe.OpenCache(context.Background(), dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	r := kpipe.New(kpipe.Options{Cache: c})
	roots := []string{"testdata/examples/base", "testdata/examples/prod"}
	for run := 1; run <= 2; run++ {
		for _, res := range r.BuildAll(context.Background(), roots) {
			if res.Err != nil {
				log.Fatal(res.Err)
			}
			fmt.Printf("run %d: %s: %d bytes, from the cache: %v\n", run, res.Dir, len(res.YAML), res.Cached)
		}
	}
	// Output:
	// run 1: testdata/examples/base: 484 bytes, from the cache: false
	// run 1: testdata/examples/prod: 640 bytes, from the cache: false
	// run 2: testdata/examples/base: 484 bytes, from the cache: true
	// run 2: testdata/examples/prod: 640 bytes, from the cache: true
}
