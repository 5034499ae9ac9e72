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
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/sync/errgroup"
	"golang.org/x/term"

	"github.com/kpipe/kpipe/build"
	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/output"
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
		Roots       int                         `json:"roots"`
		Failed      int                         `json:"failed"`
		Changed     int                         `json:"changed"`
		Seconds     float64                     `json:"seconds"`
		NodesBuilt  int                         `json:"nodesBuilt"`
		NodesCached int                         `json:"nodesCached"`
		RootsCached int                         `json:"rootsCached"`
		Stages      map[string]build.StageStats `json:"stages"`
		FilesHashed int                         `json:"filesHashed"`
		FilesStat   int                         `json:"filesFromIndex"`
	} `json:"summary"`
}

func runBuildAll(c *cli.Context) error {
	start := time.Now()
	restriction, opts, err := buildOptions(c)
	if err != nil {
		return err
	}
	roots, all, err := findRoots(c, restriction)
	if err != nil {
		return err
	}
	if len(roots) == 0 {
		return errors.New("no kustomization roots found")
	}
	g, loadErrs := all.WithRoots(roots)
	for _, w := range g.Warnings {
		opts.Warn(w)
	}
	store, err := openCache(c, 30*time.Second)
	if err != nil {
		return err
	}
	useCache(&opts, store)
	defer closeCache(store, &opts)

	var bar *progressbar.ProgressBar
	if f, ok := c.App.ErrWriter.(*os.File); ok && c.Bool("progress") && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions(len(g.Nodes)+len(roots),
			progressbar.OptionSetWriter(f), progressbar.OptionSetDescription("building"),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		opts.Progress = func() { _ = bar.Add(1) }
	}
	b := build.NewBuilder(g, opts)
	results := b.Run(c.Context, loadErrs)

	prev := previousDigests(store)
	rep := &report{Version: Version, Roots: make([]rootReport, len(roots))}
	outDir := c.String("out-dir")
	cwd, _ := os.Getwd()
	var eg errgroup.Group
	eg.SetLimit(opts.Jobs)
	for i := range roots {
		eg.Go(func() error {
			t0 := time.Now()
			res := results[i]
			rr := rootReport{Path: roots[i], Cached: res.Cached, NodesBuilt: res.NodesBuilt, NodesCached: res.NodesCached,
				StageHits: res.StagesCached, StageMisses: res.StagesRan}
			if outDir != "" {
				rr.Output = filepath.Join(outDir, outputName(cwd, roots[i]))
			}
			err := res.Err
			if err == nil {
				sum := sha256.Sum256(res.YAML)
				rr.Digest = hex.EncodeToString(sum[:])
				rr.Changed = prev[roots[i]] != rr.Digest
				if rr.Output != "" {
					err = writeIfChanged(rr.Output, res.YAML)
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
			return nil
		})
	}
	_ = eg.Wait()
	if bar != nil {
		_ = bar.Finish()
	}

	var errs *multierror.Error
	st := b.Stats()
	rep.Summary.Roots = len(roots)
	rep.Summary.NodesBuilt, rep.Summary.NodesCached, rep.Summary.RootsCached = st.NodesBuilt, st.NodesCached, st.RootsCached
	rep.Summary.Stages = st.Stages
	if opts.Cache.Files != nil {
		rep.Summary.FilesHashed, rep.Summary.FilesStat = opts.Cache.Files.Counts()
	}
	digests := map[string]string{}
	for _, rr := range rep.Roots {
		if rr.Status == "error" {
			rep.Summary.Failed++
			errs = multierror.Append(errs, fmt.Errorf("%s: %s", rr.Path, rr.Error))
			continue
		}
		digests[rr.Path] = rr.Digest
		if rr.Changed {
			rep.Summary.Changed++
		}
	}
	saveDigests(store, prev, digests)
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
	fmt.Fprintf(c.App.ErrWriter, "built %d roots (%d failed, %d changed) in %.2fs: %d nodes built, %d from cache\n",
		rep.Summary.Roots, rep.Summary.Failed, rep.Summary.Changed, rep.Summary.Seconds, st.NodesBuilt, st.NodesCached)
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
	fmt.Fprintf(w, "nodes: %d built, %d from cache; roots from cache: %d; files hashed: %d, from index: %d\n",
		rep.Summary.NodesBuilt, rep.Summary.NodesCached, rep.Summary.RootsCached, rep.Summary.FilesHashed, rep.Summary.FilesStat)
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

// previousDigests reads the output digests of the last run by root.
func previousDigests(s *cache.Store) map[string]string {
	m := map[string]string{}
	if b, ok := s.GetMeta("outputs"); ok {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// saveDigests records this run's output digests, keeping other roots'.
func saveDigests(s *cache.Store, prev, now map[string]string) {
	if s == nil {
		return
	}
	for k, v := range now {
		prev[k] = v
	}
	b, _ := json.Marshal(prev)
	s.PutMeta("outputs", b)
}

// findRoots lists the roots to build, as absolute, symlink-free paths in a
// stable order.
func findRoots(c *cli.Context, r loaders.Restriction) ([]string, *build.Graph, error) {
	if f := c.String("roots-from"); f != "" {
		roots, err := readRootsFile(f)
		if err != nil {
			return nil, nil, err
		}
		g, _ := build.Load(roots, r)
		return roots, g, nil
	}
	paths := c.Args().Slice()
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var all []string
	seen := map[string]bool{}
	for _, p := range paths {
		found, err := findKustomizations(p, c.String("out-dir"))
		if err != nil {
			return nil, nil, err
		}
		for _, d := range found {
			if !seen[d] {
				seen[d] = true
				all = append(all, d)
			}
		}
	}
	// Components are not roots; unless --all-kustomizations, neither is a
	// kustomization another one refers to.
	g, _ := build.Load(all, r)
	referenced := map[string]bool{}
	for _, n := range g.Nodes {
		for _, e := range n.Children() {
			referenced[e.Child.Dir] = true
		}
	}
	var roots []string
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
	return roots, g, nil
}

// findKustomizations walks a tree for directories holding a kustomization
// file, skipping hidden directories and outDir.
func findKustomizations(tree, outDir string) ([]string, error) {
	tree, err := loaders.RealDir(tree)
	if err != nil {
		return nil, err
	}
	skip := ""
	if outDir != "" {
		if a, err := filepath.Abs(outDir); err == nil {
			skip = a
		}
	}
	var dirs []string
	err = filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != tree && (strings.HasPrefix(d.Name(), ".") || p == skip) {
			return filepath.SkipDir
		}
		for _, name := range loaders.FileNames {
			if st, err := os.Stat(filepath.Join(p, name)); err == nil && st.Mode().IsRegular() {
				dirs = append(dirs, p)
				break
			}
		}
		return nil
	})
	sort.Strings(dirs)
	return dirs, err
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
