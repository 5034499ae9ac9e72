// Package benchmarks holds kpipe's Go benchmarks (go test -bench . ./benchmarks)
// and, in compare/ and scaling/, the programs that measure kpipe against
// kustomize (a monorepo of roots; one root as it grows).
package benchmarks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/genrepo"
	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/loaders"
)

// tree writes a monorepo of apps x envs roots and returns their paths.
func tree(b *testing.B, apps, envs int) (string, []string) {
	b.Helper()
	dir := b.TempDir()
	roots, err := genrepo.Write(dir, genrepo.Spec{Apps: apps, Envs: envs, ResourcesPerApp: 3})
	if err != nil {
		b.Fatal(err)
	}
	for i := range roots {
		roots[i] = filepath.Join(dir, roots[i])
	}
	return dir, roots
}

// buildOnce builds every root in one run, rendering each output.
func buildOnce(b *testing.B, roots []string, store *cache.Store) {
	g, errs := engine.Load(roots, loaders.RootOnly)
	opts := engine.Options{}
	if store != nil {
		files, _ := cache.LoadFileIndex(store.Dir())
		opts.Cache = engine.Cache{Store: store, Files: files, Version: "bench"}
	}
	for _, r := range engine.NewBuilder(g, opts).Run(context.Background(), errs) {
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		if _, err := output.Marshal(r.Resources); err != nil {
			b.Fatal(err)
		}
	}
	if opts.Cache.Files != nil {
		_ = opts.Cache.Files.Save(store.Dir())
	}
	store.Flush()
}

func openStore(b *testing.B, dir string) *cache.Store {
	s := cache.Open(context.Background(), cache.Options{Dir: dir})
	if s == nil {
		b.Fatal("cache did not open")
	}
	return s
}

func BenchmarkBuildAllNoCache(b *testing.B) {
	_, roots := tree(b, 25, 4)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buildOnce(b, roots, nil)
	}
}

func BenchmarkBuildAllCold(b *testing.B) {
	_, roots := tree(b, 25, 4)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		s := openStore(b, dir)
		b.StartTimer()
		buildOnce(b, roots, s)
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

func BenchmarkBuildAllWarm(b *testing.B) {
	_, roots := tree(b, 25, 4)
	s := openStore(b, b.TempDir())
	defer s.Close()
	buildOnce(b, roots, s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buildOnce(b, roots, s)
	}
}

func BenchmarkBuildAllOneBaseChanged(b *testing.B) {
	dir, roots := tree(b, 25, 4)
	s := openStore(b, b.TempDir())
	defer s.Close()
	buildOnce(b, roots, s)
	file := filepath.Join(dir, genrepo.SharedBaseFile)
	orig, _ := os.ReadFile(file)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		edited := append(append([]byte(nil), orig...), []byte("\n# edit "+string(rune('a'+i%26))+"\n")...)
		if err := os.WriteFile(file, edited, 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		buildOnce(b, roots, s)
	}
}

// BenchmarkLargeRootNoCache builds one root of 1500 resources: its time per
// resource must stay flat as roots grow (kustomize took 45 s on 4000
// resources, kustomize#5084, from per-resource scans of the whole list).
func BenchmarkLargeRootNoCache(b *testing.B) {
	for _, n := range []int{500, 1500} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			roots, err := genrepo.Write(dir, genrepo.Spec{Apps: 1, Envs: 1, ResourcesPerApp: n})
			if err != nil {
				b.Fatal(err)
			}
			root := filepath.Join(dir, roots[0])
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				buildOnce(b, []string{root}, nil)
			}
		})
	}
}

// BenchmarkBigRootNoCache builds genrepo's big root (objects referring
// to each other by name, an overlay with patches by target and
// replacements) of 1,000 and 4,000 resources without a cache: its time per
// resource must stay flat (issue 49). benchmarks/scaling measures it
// against kustomize up to 8,000.
func BenchmarkBigRootNoCache(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			if err := genrepo.WriteBigRoot(dir, n); err != nil {
				b.Fatal(err)
			}
			root := filepath.Join(dir, genrepo.BigRoot)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				buildOnce(b, []string{root}, nil)
			}
		})
	}
}

// BenchmarkRootNoCache builds the root named by KPIPE_BENCH_ROOT (a real
// tree, such as a kubeflow/manifests checkout's
// applications/training-operator/upstream/base, 3.5 MB of CRDs) without a
// cache, rendering its output; skipped when the variable is unset.
func BenchmarkRootNoCache(b *testing.B) {
	root := os.Getenv("KPIPE_BENCH_ROOT")
	if root == "" {
		b.Skip("KPIPE_BENCH_ROOT names no root")
	}
	for i := 0; i < b.N; i++ {
		buildOnce(b, []string{root}, nil)
	}
}
