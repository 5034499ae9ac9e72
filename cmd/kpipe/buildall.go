package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/sync/errgroup"
	"golang.org/x/term"

	"github.com/kpipe/kpipe/internal/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/loaders"
	"github.com/kpipe/kpipe/internal/output"
)

func buildAllCommand() *cli.Command {
	return &cli.Command{
		Name:      "build-all",
		Usage:     "build every kustomization root under the given trees in one run",
		ArgsUsage: "[PATH...]",
		Description: `Finds the kustomization roots under each PATH (default: the current
directory) and builds them all over one graph, sharing every base.

By default the roots are the kustomizations no other kustomization in the
trees refers to; --all-kustomizations builds every kustomization (not
components); --roots-from FILE builds the directories listed in FILE, one
per line (blank lines and lines starting with # are skipped).

With --out-dir OUT, each root's output goes to OUT/<root>.yaml, where <root>
is the root's path relative to the current directory (for a root outside
it, its absolute path without the leading slash); the current directory
itself maps to OUT/_root.yaml. A root whose output is unchanged is not
rewritten. Files are written atomically (temporary file and rename).

A failing root does not stop the others: every error is printed at the end
and the exit code is 1.`,
		Flags: append(commonBuildFlags(),
			&cli.StringFlag{Name: "out-dir", Usage: "write each root's output to a file under this directory"},
			&cli.StringFlag{Name: "report", Usage: "write a JSON report of every root to this file"},
			&cli.BoolFlag{Name: "all-kustomizations", Usage: "build every kustomization, not only the top-level roots"},
			&cli.StringFlag{Name: "roots-from", Usage: "build the roots listed in this file, one per line"},
			&cli.BoolFlag{Name: "stats", Usage: "print per-stage counts and times"},
			&cli.BoolFlag{Name: "progress", Value: true, Usage: "show a progress bar when stderr is a terminal"},
		),
		Action: runBuildAll,
	}
}

// rootReport is one root's entry in the --report file.
type rootReport struct {
	Path        string  `json:"path"`
	Output      string  `json:"output,omitempty"`
	Status      string  `json:"status"` // "ok" or "error"
	Error       string  `json:"error,omitempty"`
	Digest      string  `json:"digest,omitempty"` // sha256 of the output
	Changed     bool    `json:"changed"`          // output differs from the last run's
	Seconds     float64 `json:"seconds"`          // this root's own finishing, rendering and writing
	Cached      bool    `json:"cached"`           // final output taken from the cache
	UpToDate    bool    `json:"upToDate"`         // inputs unchanged since the last run: not loaded at all
	NodesBuilt  int     `json:"nodesBuilt"`
	NodesCached int     `json:"nodesCached"`
	StageHits   int     `json:"stageHits"`
	StageMisses int     `json:"stageMisses"`
}

// report is the --report file.
type report struct {
	Version string       `json:"version"`
	Roots   []rootReport `json:"roots"`
	Summary struct {
		Roots       int                          `json:"roots"`
		Failed      int                          `json:"failed"`
		Changed     int                          `json:"changed"`
		UpToDate    int                          `json:"upToDate"`
		Seconds     float64                      `json:"seconds"`
		NodesBuilt  int                          `json:"nodesBuilt"`
		NodesCached int                          `json:"nodesCached"`
		RootsCached int                          `json:"rootsCached"`
		Stages      map[string]engine.StageStats `json:"stages"`
		FilesHashed int                          `json:"filesHashed"`
		FilesStat   int                          `json:"filesFromIndex"`
	} `json:"summary"`
}

// A run of build-all has three steps. First it finds the roots: from the
// root index's discovery record when the trees hold the same, unchanged
// kustomization files as last time, else by loading every kustomization.
// Then it checks each root against the root index: a root whose recorded
// inputs (every file and directory its last build read) and output file
// are unchanged is up to date and is neither loaded nor built. Last, it
// builds the other roots over one graph, with the store open, and records
// their inputs. A run where nothing changed thus costs a walk of the trees
// and a stat of each input, and never opens the store.
func runBuildAll(c *cli.Context) error {
	start := time.Now()
	restriction, opts, err := buildOptions(c)
	if err != nil {
		return err
	}
	store, err := openCache(c)
	if err != nil {
		return err
	}
	prepareCache(&opts, store)
	opts.Cache.Store = store
	defer closeStore(store, &opts)
	index := store.RootIndex(engine.SettingsKey(opts, restriction))
	checker := cache.NewInputChecker(opts.Cache.Files)
	roots, all, err := findRoots(c, restriction, index, checker)
	if err != nil {
		return err
	}
	if len(roots) == 0 {
		return errors.New("no kustomization roots found")
	}
	outDir := c.String("out-dir")
	cwd, _ := os.Getwd()
	outputOf := func(root string) string {
		if outDir == "" {
			return ""
		}
		return filepath.Join(outDir, outputName(cwd, root))
	}

	rep := &report{Version: Version, Roots: make([]rootReport, len(roots))}
	var check errgroup.Group
	check.SetLimit(opts.Jobs)
	for i, root := range roots {
		check.Go(func() error {
			rec, ok := index.Root(root)
			if ok && !opts.VerifyCache && rec.Output == outputOf(root) && checker.Unchanged(rec.Inputs) && outputIntact(opts.Cache.Files, rec) {
				rep.Roots[i] = rootReport{Path: root, Output: rec.Output, Status: "ok", Digest: hex.EncodeToString(rec.OutputDigest[:]),
					Cached: true, UpToDate: true}
			}
			return nil
		})
	}
	_ = check.Wait()
	var todo []int // indexes of the roots to build
	for i := range roots {
		if !rep.Roots[i].UpToDate {
			todo = append(todo, i)
		}
	}

	var st engine.Stats
	if len(todo) > 0 {
		st, err = buildRoots(c, restriction, opts, all, roots, todo, outputOf, index, checker, rep)
		if err != nil {
			return err
		}
	}
	_ = index.Save()
	saveFileIndex(&opts)

	var errs *multierror.Error
	rep.Summary.Roots = len(roots)
	rep.Summary.NodesBuilt, rep.Summary.NodesCached, rep.Summary.RootsCached = st.NodesBuilt, st.NodesCached, st.RootsCached
	rep.Summary.Stages = st.Stages
	rep.Summary.FilesHashed, rep.Summary.FilesStat = opts.Cache.Files.Counts()
	for _, rr := range rep.Roots {
		switch {
		case rr.Status == "error":
			rep.Summary.Failed++
			errs = multierror.Append(errs, fmt.Errorf("%s: %s", rr.Path, rr.Error))
		case rr.Changed:
			rep.Summary.Changed++
		case rr.UpToDate:
			rep.Summary.UpToDate++
		}
	}
	rep.Summary.Seconds = time.Since(start).Seconds()
	if p := c.String("report"); p != "" {
		data, _ := json.MarshalIndent(rep, "", "  ")
		if err := output.WriteFileAtomic(p, append(data, '\n')); err != nil {
			errs = multierror.Append(errs, fmt.Errorf("writing the report: %w", err))
		}
	}
	if c.Bool("stats") {
		printStats(c, rep)
	}
	fmt.Fprintf(c.App.ErrWriter, "built %d roots (%d failed, %d changed, %d up to date) in %.2fs: %d nodes built, %d from cache\n",
		rep.Summary.Roots, rep.Summary.Failed, rep.Summary.Changed, rep.Summary.UpToDate, rep.Summary.Seconds, st.NodesBuilt, st.NodesCached)
	if errs != nil {
		errs.ErrorFormat = func(es []error) string {
			lines := make([]string, len(es))
			for i, e := range es {
				lines[i] = "  * " + e.Error()
			}
			return fmt.Sprintf("%d of %d roots failed:\n%s", len(es), len(roots), strings.Join(lines, "\n"))
		}
		return errs
	}
	return nil
}

// outputIntact reports whether the output file a root record names still
// holds the recorded output.
func outputIntact(files *cache.FileIndex, rec cache.RootRecord) bool {
	if rec.Output == "" {
		return true
	}
	d, ok := files.Digest(rec.Output)
	return ok && d == rec.OutputDigest
}

// buildRoots builds roots[i] for every i in todo over one graph (taken
// from all when discovery loaded one), writes their outputs, fills their
// report entries and records their inputs in index.
func buildRoots(c *cli.Context, restriction loaders.Restriction, opts engine.Options, all *engine.Graph,
	roots []string, todo []int, outputOf func(string) string, index *cache.RootIndex, checker *cache.InputChecker, rep *report) (engine.Stats, error) {
	dirs := make([]string, len(todo))
	for j, i := range todo {
		dirs[j] = roots[i]
	}
	var g *engine.Graph
	var loadErrs []error
	if all != nil {
		g, loadErrs = all.WithRoots(dirs)
	} else {
		g, loadErrs = engine.Load(dirs, restriction)
	}
	for _, w := range g.Warnings {
		opts.Warn(w)
	}
	store := opts.Cache.Store

	var bar *progressbar.ProgressBar
	if f, ok := c.App.ErrWriter.(*os.File); ok && c.Bool("progress") && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions(len(g.Nodes)+len(dirs),
			progressbar.OptionSetWriter(f), progressbar.OptionSetDescription("building"),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		opts.Progress = func() { _ = bar.Add(1) }
	}
	b := engine.NewBuilder(g, opts)
	// Each root's output is written, and its record kept, as soon as the
	// root is finished; nothing of it is kept after that.
	b.RunEach(c.Context, loadErrs, func(j int, res engine.Result) {
		t0 := time.Now()
		i := todo[j]
		root := roots[i]
		rr := rootReport{Path: root, Output: outputOf(root), Cached: res.Cached, NodesBuilt: res.NodesBuilt, NodesCached: res.NodesCached,
			StageHits: res.StagesCached, StageMisses: res.StagesRan}
		err := res.Err
		if err == nil {
			sum := sha256.Sum256(res.YAML)
			rr.Digest = hex.EncodeToString(sum[:])
			prev, known := index.Root(root)
			rr.Changed = !known || prev.OutputDigest != cache.Key(sum)
			if rr.Output != "" {
				err = writeIfChanged(rr.Output, res.YAML)
			}
			if err == nil && store != nil {
				// Record the root only if every input still has the
				// content the build used.
				if inputs, ok := b.Inputs(g.Roots[j]); ok && checker.Unchanged(inputs) {
					index.SetRoot(root, &cache.RootRecord{Inputs: inputs, Output: rr.Output, OutputDigest: sum})
				}
			}
		}
		if err != nil {
			rr.Status, rr.Error, rr.Output = "error", err.Error(), ""
		} else {
			rr.Status = "ok"
		}
		rr.Seconds = time.Since(t0).Seconds()
		rep.Roots[i] = rr
		if bar != nil {
			_ = bar.Add(1)
		}
	})
	if bar != nil {
		_ = bar.Finish()
	}
	return b.Stats(), nil
}

// printStats prints the per-stage table of --stats.
func printStats(c *cli.Context, rep *report) {
	w := c.App.ErrWriter
	kinds := make([]string, 0, len(rep.Summary.Stages))
	for k := range rep.Summary.Stages {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	fmt.Fprintf(w, "%-32s %8s %8s %10s\n", "stage", "ran", "cached", "seconds")
	for _, k := range kinds {
		s := rep.Summary.Stages[k]
		fmt.Fprintf(w, "%-32s %8d %8d %10.3f\n", k, s.Ran, s.Cached, s.Time.Seconds())
	}
	fmt.Fprintf(w, "roots up to date (not loaded): %d; nodes: %d built, %d from cache; roots from cache: %d; files hashed: %d, from index: %d\n",
		rep.Summary.UpToDate, rep.Summary.NodesBuilt, rep.Summary.NodesCached, rep.Summary.RootsCached, rep.Summary.FilesHashed, rep.Summary.FilesStat)
}

// outputName maps a root directory to its output file under --out-dir.
func outputName(cwd, root string) string {
	rel, err := filepath.Rel(cwd, root)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = strings.TrimPrefix(root, string(filepath.Separator))
	}
	if rel == "." {
		return "_root.yaml"
	}
	return rel + ".yaml"
}

// writeIfChanged writes data to path atomically unless the file already
// holds exactly data.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return output.WriteFileAtomic(path, data)
}

// findRoots lists the roots to build, as absolute, symlink-free paths in a
// stable order. When it had to load the kustomizations of the trees to
// tell roots from bases, it returns that graph too.
//
// Discovery walks the trees for kustomization files; when they are the
// same files, unchanged, as at the last discovery of the same trees, the
// roots are those found then, and nothing is parsed.
func findRoots(c *cli.Context, r loaders.Restriction, index *cache.RootIndex, checker *cache.InputChecker) ([]string, *engine.Graph, error) {
	if f := c.String("roots-from"); f != "" {
		roots, err := readRootsFile(f)
		return roots, nil, err
	}
	paths := c.Args().Slice()
	if len(paths) == 0 {
		paths = []string{"."}
	}
	// The record is keyed by where the trees and the output directory are,
	// not by how they were named: "." is another tree in another directory.
	trees := make([]string, len(paths))
	for i, p := range paths {
		t, err := loaders.RealDir(p)
		if err != nil {
			return nil, nil, err
		}
		trees[i] = t
	}
	outDir := c.String("out-dir")
	if outDir != "" {
		if a, err := filepath.Abs(outDir); err == nil {
			outDir = a
		}
	}
	key := fmt.Sprintf("%q all=%v out=%q", trees, c.Bool("all-kustomizations"), outDir)
	if rec, ok := index.Discovery(key); ok && checker.Unchanged(rec.Dirs) && checker.Unchanged(rec.Files) {
		// The same directories hold the same kustomization files.
		return rec.Roots, nil, nil
	}
	var all []string
	var files, dirs []cache.Input
	seen := map[string]bool{}
	for _, p := range paths {
		found, walked, err := findKustomizations(p, c.String("out-dir"))
		if err != nil {
			return nil, nil, err
		}
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
	g, _ := engine.Load(all, r)
	referenced := map[string]bool{}
	for _, n := range g.Nodes {
		for _, e := range n.Children() {
			referenced[e.Child.Dir] = true
		}
	}
	roots := []string{}
	for i, d := range all {
		n := g.Roots[i]
		if n != nil && n.IsComponent() {
			continue
		}
		if !c.Bool("all-kustomizations") && referenced[d] {
			continue
		}
		roots = append(roots, d)
	}
	if index.Persistent() {
		var eg errgroup.Group
		eg.SetLimit(runtime.NumCPU())
		for _, ins := range [][]cache.Input{files, dirs} {
			for i := range ins {
				eg.Go(func() error {
					ins[i].Digest, _ = checker.Digest(ins[i].Real)
					return nil
				})
			}
		}
		_ = eg.Wait()
		index.SetDiscovery(key, cache.DiscoveryRecord{Files: files, Dirs: dirs, Roots: roots})
	}
	return roots, g, nil
}

// findKustomizations walks a tree for directories holding a kustomization
// file, skipping hidden directories and outDir, and returns each
// directory's kustomization file (the first of loaders.FileNames there),
// in the order of the directories' paths, and the directories it walked.
func findKustomizations(tree, outDir string) (found, walked []cache.Input, err error) {
	tree, err = loaders.RealDir(tree)
	if err != nil {
		return nil, nil, err
	}
	skip := ""
	if outDir != "" {
		if a, err := filepath.Abs(outDir); err == nil {
			skip = a
		}
	}
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		walked = append(walked, cache.Input{Path: dir, Real: dir})
		names := map[string]fs.DirEntry{}
		for _, e := range entries {
			names[e.Name()] = e
		}
		for _, name := range loaders.FileNames {
			e, ok := names[name]
			if !ok {
				continue
			}
			p := filepath.Join(dir, name)
			if e.Type().IsRegular() {
				found = append(found, cache.Input{Path: p, Real: p})
				break
			}
			if real, err := filepath.EvalSymlinks(p); err == nil {
				if st, err := os.Stat(real); err == nil && st.Mode().IsRegular() {
					found = append(found, cache.Input{Path: p, Real: real})
					break
				}
			}
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && p != skip {
				if err := walk(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err = walk(tree)
	sort.Slice(found, func(i, j int) bool { return filepath.Dir(found[i].Path) < filepath.Dir(found[j].Path) })
	return found, walked, err
}

// readRootsFile reads --roots-from.
func readRootsFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--roots-from: %w", err)
	}
	defer f.Close()
	var roots []string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		d, err := loaders.RealDir(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		roots = append(roots, d)
	}
	return roots, sc.Err()
}
