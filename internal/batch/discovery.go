package batch

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/rootindex"
	"github.com/kpipe/kpipe/loaders"
	"golang.org/x/sync/errgroup"
)

// loadSettings are how discovery found the roots, for the loads of the
// graphs that build them: a fresh walk resolved every root and listed
// the directories, so a load need not look again; roots from a record or
// a roots file are resolved again.
type loadSettings struct {
	resolved bool
	listed   map[string]string
	since    time.Time
}

// Discover returns the roots build-all would build for o, without building
// them (in a stable order).
func Discover(o Options) ([]string, error) {
	opts := o.Engine
	_, files := o.indexes()
	index := rootindex.Open(opts.Cache.Store, engine.SettingsKey(opts, o.Restriction))
	roots, _, err := findRoots(o, index, cache.NewInputChecker(files))
	return roots, err
}

// findRoots lists the roots to build, as absolute, symlink-free paths in a
// stable order. When it had to load the kustomizations of the trees to
// tell roots from bases, it returns that graph too.
//
// Discovery walks the trees for kustomization files; when they are the
// same files, unchanged, as at the last discovery of the same trees, the
// roots are those found then, and nothing is parsed.
func findRoots(o Options, index *rootindex.Index, checker *cache.InputChecker) ([]string, loadSettings, error) {
	return findRootsContext(context.Background(), o, index, checker)
}

// findRootsContext is findRoots with the context remote bases are fetched
// under (o.Remote).
func findRootsContext(ctx context.Context, o Options, index *rootindex.Index, checker *cache.InputChecker) ([]string, loadSettings, error) {
	fsys := o.fs()
	if f := o.RootsFrom; f != "" {
		roots, err := readRootsFile(fsys, f)
		return roots, loadSettings{}, err
	}
	r := o.Restriction
	paths := o.Trees
	if len(paths) == 0 {
		paths = []string{"."}
	}
	// The record is keyed by where the trees and the output directory are,
	// not by how they were named: "." is another tree in another directory.
	trees := make([]string, len(paths))
	for i, p := range paths {
		t, err := loaders.RealDir(fsys, p)
		if err != nil {
			return nil, loadSettings{}, err
		}
		trees[i] = t
	}
	outDir := o.OutDir
	if outDir != "" {
		if a, err := filepath.Abs(outDir); err == nil {
			outDir = a
		}
	}
	key := fmt.Sprintf("%q all=%v out=%q", trees, o.AllKustomizations, outDir)
	// (Checked as one record: in a git revision, a directory unchanged by
	// its tree's name vouches for the files below it.)
	if rec, ok := index.Discovery(key); ok && checker.Unchanged(append(slices.Clip(rec.Dirs), rec.Files...)) {
		// The same directories hold the same kustomization files.
		return rec.Roots, loadSettings{}, nil
	}
	start := time.Now() // before the walk: see LoadOptions.Since
	var all []string
	var files, dirs []cache.Input
	seen := map[string]bool{}
	var fileIndex *cache.FileIndex
	if index.Persistent() {
		fileIndex = checker.Files() // the walk's listings give the directories' digests
	}
	listed := map[string]string{}
	for _, p := range paths {
		found, walked, l, err := findKustomizations(fsys, p, o.OutDir, fileIndex)
		if err != nil {
			return nil, loadSettings{}, err
		}
		maps.Copy(listed, l)
		dirs = append(dirs, walked...)
		for _, f := range found {
			if !seen[f.Real] {
				seen[f.Real] = true
				all = append(all, filepath.Dir(f.Path))
				files = append(files, f)
			}
		}
	}
	// Components are not roots; unless --all-kustomizations, neither is a
	// kustomization another one refers to.
	// (The walk resolved every directory: it starts at a real one and
	// does not follow symlinks.) The kustomizations are loaded
	// RootsPerGraph at a time, each load's graph dropped once its
	// references are noted (a base of several is loaded with each).
	load := loadSettings{resolved: true, listed: listed, since: start}
	refs := map[string][]string{} // the directories each directory's entries name
	component := map[string]bool{}
	for part := range slices.Chunk(all, o.perGraph()) {
		g, _ := engine.LoadContext(ctx, part, engine.LoadOptions{FS: o.FS, Restriction: r, Remote: o.Remote,
			Resolved: load.resolved, Listed: load.listed, Since: load.since})
		for _, n := range g.Nodes {
			for _, e := range n.Children() {
				if !slices.Contains(refs[n.Dir], e.Child.Dir) {
					refs[n.Dir] = append(refs[n.Dir], e.Child.Dir)
				}
			}
		}
		for i, n := range g.Roots {
			if n != nil && n.IsComponent() {
				component[part[i]] = true
			}
		}
		if index.Persistent() {
			// The kustomization files were just read: their digests
			// need no second read.
			g.RememberKustomizations(checker.Files(), runtime.NumCPU())
		}
	}
	roots := rootsOf(all, refs, component, o.AllKustomizations)
	if index.Persistent() {
		// The walk's listings and the graph's reads gave most digests
		// (Known); the others cost a stat or a read each.
		var eg errgroup.Group
		eg.SetLimit(runtime.NumCPU())
		for _, ins := range [][]cache.Input{files, dirs} {
			for i := range ins {
				if d, ok := checker.Files().Known(ins[i].Real, start); ok {
					ins[i].Digest = d
					ins[i] = checker.Files().Stamp(ins[i])
					continue
				}
				eg.Go(func() error {
					ins[i].Digest, _ = checker.Digest(ins[i].Real)
					ins[i] = checker.Files().Stamp(ins[i])
					return nil
				})
			}
		}
		_ = eg.Wait()
		index.SetDiscovery(key, rootindex.DiscoveryRecord{Files: files, Dirs: dirs, Roots: roots})
	}
	return roots, load, nil
}

// rootsOf returns the directories of all (in its order) that are roots,
// given the directories each directory's entries name (refs) and which
// are components: every one that is not a component, unless all is
// false, and then those no other kustomization names. A kustomization
// named only within a cycle of references (which the build refuses)
// would then be built by no root, and its error never said: the first of
// such a cycle, in path order, is a root too, as it was when one graph
// held every kustomization (it was loaded first, and the entry that
// closed the cycle failed).
func rootsOf(dirs []string, refs map[string][]string, component map[string]bool, all bool) []string {
	referenced := map[string]bool{}
	for _, children := range refs {
		for _, c := range children {
			referenced[c] = true
		}
	}
	root := map[string]bool{}
	reached := map[string]bool{}
	var reach func(d string)
	reach = func(d string) {
		if reached[d] {
			return
		}
		reached[d] = true
		for _, c := range refs[d] {
			reach(c)
		}
	}
	for _, d := range dirs {
		if !component[d] && (all || !referenced[d]) {
			root[d] = true
			reach(d)
		}
	}
	for _, d := range dirs {
		if !component[d] && !reached[d] {
			root[d] = true
			reach(d)
		}
	}
	out := []string{}
	for _, d := range dirs {
		if root[d] {
			out = append(out, d)
		}
	}
	return out
}

// findKustomizations walks a tree for directories holding a kustomization
// file, skipping hidden directories and outDir, and returns each
// directory's kustomization file (the first of loaders.FileNames there),
// in the order of the directories' paths, and the directories it walked,
// in the same order; and, for each directory whose kustomization file is
// the only one there (soleKustomization), that file's name
// (engine.LoadOptions.Listed). With files, it records each directory's
// digest there from the listing it read (cache.FileIndex.RememberDir).
//
// Directories are read on several goroutines (a tree of 10,000 roots has
// 12,500 of them, and the walk came before any other work could start);
// when one cannot be read, the walk is done again on one goroutine, depth
// first, so the error is the first in that order whatever the goroutines
// met first.
func findKustomizations(fsys loaders.FS, tree, outDir string, files *cache.FileIndex) (found, walked []cache.Input, listed map[string]string, err error) {
	found, walked, listed, err = walkKustomizations(fsys, tree, outDir, files, runtime.NumCPU())
	if err != nil {
		return walkKustomizations(fsys, tree, outDir, files, 1)
	}
	return found, walked, listed, nil
}

// walkKustomizations is findKustomizations on at most jobs goroutines;
// with one, it walks depth first and stops at the first directory it
// cannot read.
func walkKustomizations(fsys loaders.FS, tree, outDir string, files *cache.FileIndex, jobs int) (found, walked []cache.Input, listed map[string]string, err error) {
	start := time.Now()
	tree, err = loaders.RealDir(fsys, tree)
	if err != nil {
		return nil, nil, nil, err
	}
	listed = map[string]string{}
	skip := ""
	if outDir != "" {
		if a, err := filepath.Abs(outDir); err == nil {
			skip = a
		}
	}
	var (
		mu       sync.Mutex
		firstErr error
		g        errgroup.Group
	)
	g.SetLimit(jobs)
	var visit func(dir string)
	visit = func(dir string) {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			return
		}
		// The directory's stat comes before its listing, as RememberDir
		// needs, from the descriptor the listing is read through.
		fi, entries, err := fsys.ReadDir(dir)
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			return
		}
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		files.RememberDir(dir, fi, entries, start)
		k, ok := kustomizationIn(fsys, dir, entries)
		sole := ok && soleKustomization(entries, filepath.Base(k.Path))
		mu.Lock()
		walked = append(walked, cache.Input{Path: dir, Real: dir})
		if ok {
			found = append(found, k)
		}
		if sole {
			listed[dir] = filepath.Base(k.Path)
		}
		mu.Unlock()
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && p != skip {
				if jobs == 1 || !g.TryGo(func() error { visit(p); return nil }) {
					visit(p) // depth first, or every goroutine is busy
				}
			}
		}
	}
	visit(tree)
	_ = g.Wait()
	sort.Slice(walked, func(i, j int) bool { return walked[i].Path < walked[j].Path })
	sort.Slice(found, func(i, j int) bool { return filepath.Dir(found[i].Path) < filepath.Dir(found[j].Path) })
	return found, walked, listed, firstErr
}

// soleKustomization reports whether name, the kustomization file among
// entries, is a regular file and the only entry whose name is one of
// loaders.FileNames in any case (a case-insensitive file system finds
// "Kustomization" by another spelling).
func soleKustomization(entries []fs.DirEntry, name string) bool {
	for _, e := range entries {
		for _, n := range loaders.FileNames {
			if strings.EqualFold(e.Name(), n) && (e.Name() != name || !e.Type().IsRegular()) {
				return false
			}
		}
	}
	return true
}

// kustomizationIn returns the kustomization file among dir's entries
// (sorted by name): the first of loaders.FileNames that is a regular file
// or a symlink to one.
func kustomizationIn(fsys loaders.FS, dir string, entries []fs.DirEntry) (cache.Input, bool) {
	for _, name := range loaders.FileNames {
		i, ok := slices.BinarySearchFunc(entries, name, func(e fs.DirEntry, name string) int { return strings.Compare(e.Name(), name) })
		if !ok {
			continue
		}
		p := filepath.Join(dir, name)
		if entries[i].Type().IsRegular() {
			return cache.Input{Path: p, Real: p}, true
		}
		if real, err := fsys.EvalSymlinks(p); err == nil {
			if st, err := fsys.Stat(real); err == nil && st.Mode().IsRegular() {
				return cache.Input{Path: p, Real: real}, true
			}
		}
	}
	return cache.Input{}, false
}

// readRootsFile reads --roots-from, whose roots are directories of fsys.
func readRootsFile(fsys loaders.FS, path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--roots-from: %w", err)
	}
	defer f.Close()
	var roots []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		d, err := loaders.RealDir(fsys, s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		// A root named twice (relative and absolute, or through a
		// symlink) is one root: built once, written once.
		if !seen[d] {
			seen[d] = true
			roots = append(roots, d)
		}
	}
	return roots, sc.Err()
}
