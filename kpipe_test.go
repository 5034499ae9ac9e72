package kpipe_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
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

// countingFS is a tree in memory that counts the files opened.
type countingFS struct {
	fstest.MapFS
	mu     sync.Mutex
	opened map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.count(name)
	return c.MapFS.Open(name)
}

func (c *countingFS) ReadFile(name string) ([]byte, error) {
	c.count(name)
	return c.MapFS.ReadFile(name)
}

func (c *countingFS) count(name string) {
	if f := c.MapFS[name]; f != nil && f.Mode.IsRegular() {
		c.mu.Lock()
		c.opened[name]++
		c.mu.Unlock()
	}
}

// TestBuildFSReadsWhatTheBuildReads: BuildFS reads the files the build
// needs from the tree, once each, and nothing else: a tree of 3,000 other
// files costs what one without them costs (no copy of the tree).
func TestBuildFSReadsWhatTheBuildReads(t *testing.T) {
	tree := &countingFS{opened: map[string]int{}, MapFS: fstest.MapFS{
		"app/kustomization.yaml":  {Data: []byte("namePrefix: p-\nresources:\n- ../base\npatches:\n- path: patch.yaml\n")},
		"app/patch.yaml":          {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  b: \"2\"\n")},
		"base/kustomization.yaml": {Data: []byte("resources:\n- cm.yaml\n")},
		"base/cm.yaml":            {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n")},
	}}
	for i := range 3000 {
		tree.MapFS[fmt.Sprintf("docs/d%02d/f%04d.md", i%50, i)] = &fstest.MapFile{Data: []byte("unrelated\n")}
	}
	out, err := kpipe.New(kpipe.Options{}).BuildFS(context.Background(), tree, "app")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "name: p-cm") || !strings.Contains(string(out), "b: \"2\"") {
		t.Errorf("output:\n%s", out)
	}
	want := map[string]int{"app/kustomization.yaml": 1, "app/patch.yaml": 1, "base/kustomization.yaml": 1, "base/cm.yaml": 1}
	if fmt.Sprint(tree.opened) != fmt.Sprint(want) {
		t.Errorf("files opened: %v, want %v", tree.opened, want)
	}
}

// TestBuildFSFollowsSymlinksUnderTheRestrictor: a tree in memory with
// symlinks (fs.ReadLinkFS) builds as on disk: a link inside the root is
// followed, one leading outside it is refused, naming both paths as the
// tree has them, unless LoadRestrictionsNone.
func TestBuildFSFollowsSymlinksUnderTheRestrictor(t *testing.T) {
	cm := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
	tree := fstest.MapFS{
		"app/kustomization.yaml": {Data: []byte("resources:\n- in.yaml\n")},
		"app/real.yaml":          {Data: cm},
		"app/in.yaml":            {Data: []byte("real.yaml"), Mode: fs.ModeSymlink},
		"out/kustomization.yaml": {Data: []byte("resources:\n- away.yaml\n")},
		"out/away.yaml":          {Data: []byte("../shared/cm.yaml"), Mode: fs.ModeSymlink},
		"shared/cm.yaml":         {Data: cm},
	}
	if out, err := kpipe.New(kpipe.Options{}).BuildFS(context.Background(), tree, "app"); err != nil || !bytes.Equal(out, cm) {
		t.Errorf("a link inside the root: %q, %v", out, err)
	}
	_, err := kpipe.New(kpipe.Options{}).BuildFS(context.Background(), tree, "out")
	if err == nil || !strings.Contains(err.Error(), "security; file 'shared/cm.yaml' is not in or below 'out'") {
		t.Errorf("a link leaving the root: %v", err)
	}
	if out, err := kpipe.New(kpipe.Options{LoadRestrictionsNone: true}).BuildFS(context.Background(), tree, "out"); err != nil || !bytes.Equal(out, cm) {
		t.Errorf("a link leaving the root, LoadRestrictionsNone: %q, %v", out, err)
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
