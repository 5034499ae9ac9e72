package kpipe_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/kpipe/kpipe"
	"github.com/kpipe/kpipe/internal/genrepo"
)

// TestConcurrentCallsShareOneCache calls the API from 16 goroutines at once,
// on different and shared roots of a synthetic monorepo, with one cache
// (twice: cold, then warm), and requires every output to equal the one a
// sequential build without a cache gives, with the file store and with
// the Badger store. Run it under -race.
func TestConcurrentCallsShareOneCache(t *testing.T) {
	t.Run("files", func(t *testing.T) { testConcurrentCalls(t) })
	t.Run("badger", func(t *testing.T) { testConcurrentCalls(t, kpipe.BadgerStore()) })
}

func testConcurrentCalls(t *testing.T, opts ...kpipe.CacheOption) {
	repo := t.TempDir()
	rels, err := genrepo.Write(repo, genrepo.Spec{Apps: 6, Envs: 3, ResourcesPerApp: 2})
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, r := range rels {
		roots = append(roots, filepath.Join(repo, r))
	}
	ctx := context.Background()

	want := map[string][]byte{}
	plain := kpipe.New(kpipe.Options{Jobs: 1})
	for _, root := range roots {
		out, err := plain.Build(ctx, root)
		if err != nil {
			t.Fatalf("sequential build of %s: %v", root, err)
		}
		want[root] = out
	}

	c, err := kpipe.OpenCache(ctx, t.TempDir(), func(msg string) { t.Errorf("cache warning: %s", msg) }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := kpipe.New(kpipe.Options{Cache: c, Jobs: 2})
	for pass := range 2 {
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Goroutine g builds its own root alone, then a group
				// of roots that other goroutines build too.
				own := roots[g%len(roots)]
				out, err := r.Build(ctx, own)
				if err != nil {
					errs <- fmt.Errorf("pass %d, goroutine %d, %s: %v", pass, g, own, err)
					return
				}
				if !bytes.Equal(out, want[own]) {
					errs <- fmt.Errorf("pass %d, goroutine %d: %s differs from the sequential build", pass, g, own)
				}
				shared := roots[:len(roots)/2]
				for _, res := range r.BuildAll(ctx, shared) {
					if res.Err != nil {
						errs <- fmt.Errorf("pass %d, goroutine %d, %s: %v", pass, g, res.Dir, res.Err)
					} else if !bytes.Equal(res.YAML, want[res.Dir]) {
						errs <- fmt.Errorf("pass %d, goroutine %d: %s (BuildAll) differs from the sequential build", pass, g, res.Dir)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

// TestBuildFSNamesFilesInTheTree: an error in a tree held in memory names
// the file by its path in the tree, and nothing of the temporary copy.
func TestBuildFSNamesFilesInTheTree(t *testing.T) {
	tree := fstest.MapFS{
		"app/kustomization.yaml": {Data: []byte("resources:\n- missing.yaml\n")},
	}
	_, err := kpipe.New(kpipe.Options{}).BuildFS(context.Background(), tree, "app")
	if err == nil {
		t.Fatal("BuildFS of a kustomization naming a missing file succeeded")
	}
	if !strings.Contains(err.Error(), "app/missing.yaml") || strings.Contains(err.Error(), "kpipe-fs-") {
		t.Errorf("error = %q, want it to name app/missing.yaml and not the temporary copy", err)
	}
}

// TestBuildAllKeepsGoingPastAFailingRoot: one failing root gives an error
// in its own Result; the others build.
func TestBuildAllKeepsGoingPastAFailingRoot(t *testing.T) {
	res := kpipe.New(kpipe.Options{}).BuildAll(context.Background(),
		[]string{"testdata/bad/missing-file", "testdata/examples/prod"})
	if res[0].Err == nil || res[0].YAML != nil {
		t.Errorf("failing root: err=%v, %d bytes; want an error and no output", res[0].Err, len(res[0].YAML))
	}
	if res[1].Err != nil || len(res[1].YAML) == 0 {
		t.Errorf("good root: err=%v, %d bytes", res[1].Err, len(res[1].YAML))
	}
}

// TestBadgerStoreIsOneProcess: a Badger cache is held by one process (here,
// one OpenCache) at a time; a second one warns once and builds without a
// cache, with the same output.
func TestBadgerStoreIsOneProcess(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, err := kpipe.OpenCache(ctx, dir, func(msg string) { t.Errorf("first cache: %s", msg) }, kpipe.BadgerStore())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	want, err := kpipe.New(kpipe.Options{Cache: first}).Build(ctx, "testdata/examples/prod")
	if err != nil {
		t.Fatal(err)
	}
	var warns []string
	second, err := kpipe.OpenCache(ctx, dir, func(msg string) { warns = append(warns, msg) }, kpipe.BadgerStore())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if len(warns) != 1 || !strings.Contains(warns[0], dir) {
		t.Fatalf("second OpenCache warned %q; want one warning naming %s", warns, dir)
	}
	got, err := kpipe.New(kpipe.Options{Cache: second}).Build(ctx, "testdata/examples/prod")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("build without the locked cache: %v (%d bytes, want %d)", err, len(got), len(want))
	}
	// Closed, the first one's entries serve a new process.
	first.Close()
	third, err := kpipe.OpenCache(ctx, dir, func(msg string) { t.Errorf("third cache: %s", msg) }, kpipe.BadgerStore())
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	res := kpipe.New(kpipe.Options{Cache: third}).BuildAll(ctx, []string{"testdata/examples/prod"})
	if res[0].Err != nil || !bytes.Equal(res[0].YAML, want) || !res[0].Cached {
		t.Fatalf("after reopening: err %v, cached %v, same output %v", res[0].Err, res[0].Cached, bytes.Equal(res[0].YAML, want))
	}
}
