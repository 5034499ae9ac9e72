package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/go-multierror"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/progress"
)

func buildAllCommand() *cli.Command {
	return &cli.Command{
		Name:      "build-all",
		Usage:     "build every kustomization root under the given trees in one run",
		ArgsUsage: "[PATH...]",
		Description: `Finds the kustomization roots under each PATH (default: the current
directory) and builds them all in one process, a few hundred roots over one
graph at a time (memory follows the graph, not the repository), so that a
base shared by many overlays is built once.

By default the roots are the kustomizations no other kustomization in the
trees refers to; --all-kustomizations builds every kustomization (not
components); --roots-from FILE builds the directories listed in FILE, one
per line (blank lines and lines starting with # are skipped).

Without --out-dir, every root is built and nothing is written: a check
that every root still builds (exit 1, naming each root that does not).

With --out-dir OUT, each root's output goes to OUT/<root>.yaml, where <root>
is the root's path relative to the current directory (for a root outside
it, its absolute path without the leading slash); the current directory
itself maps to OUT/_root.yaml. A root whose output is unchanged is not
rewritten. Files are written atomically (temporary file and rename).

Two roots that would write the same file (the current directory and a
directory named _root, say) are an error naming both, before anything is
written. The out dir's .kpipe-outputs.json lists the files kpipe wrote
there; with --prune, outputs of roots that no longer exist are deleted if
they are still what kpipe wrote (a file someone changed is kept and
reported). Roots are found anew on each run: when an overlay is removed
and no other kustomization refers to its base any more, the base becomes
a root itself, and its output is written (and stays until the base is
referred to again or removed).

A root is "changed" (in --report and the summary) when its output differs
from the file under OUT (which is then written); without --out-dir, when
it differs from the previous --report file, or, without one, from the
root's last build in the cache.

A failing root does not stop the others: every error is printed at the end
and the exit code is 1. A failing root's previous output is deleted (if
kpipe wrote it), so no stale output stays behind.

With --check (and --out-dir OUT), nothing under OUT is written or deleted:
each root's output is compared with OUT/<root>.yaml, and every root whose
file is missing or differs is named, as is every .yaml file under OUT that
no root renders any more; the exit code is then 1. It is the check for
rendered outputs committed to a repository (kpipe's pre-commit hook).

With --shard I/N, only the roots of part I of N are built: a root's part
is a hash of its path relative to the current directory, so each root
stays in its part whatever roots are added or removed, and N runners
with I = 1..N build every root once. Run it from the same directory (the
repository root) on every runner. Give each shard its own --out-dir and
--report; kpipe report merge joins the reports.`,
		Flags: append(commonBuildFlags(),
			&cli.StringFlag{Name: "out-dir", Usage: "write each root's output to a file under this directory"},
			&cli.StringFlag{Name: "report", Usage: "write a JSON report of every root to this file"},
			&cli.BoolFlag{Name: "all-kustomizations", Usage: "build every kustomization, not only the top-level roots"},
			&cli.StringFlag{Name: "roots-from", Usage: "build the roots listed in this file, one per line"},
			&cli.BoolFlag{Name: "stats", Usage: "print per-stage counts and times"},
			&cli.BoolFlag{Name: "progress", Value: true, Usage: "show the count of roots built so far when stderr is a terminal"},
			&cli.BoolFlag{Name: "prune", Usage: "delete outputs under --out-dir of roots that no longer exist (only files kpipe wrote)"},
			&cli.BoolFlag{Name: "check", Usage: "compare each root's output with the file under --out-dir instead of writing it; exit 1 naming each difference"},
			&cli.StringFlag{Name: "shard", Usage: "build only part I of N of the roots (I/N, 1 <= I <= N), by a hash of each root's path; join the shards' reports with kpipe report merge"},
			explainFlag(),
		),
		Action: withProfile(runBuildAll),
	}
}

// runBuildAll parses the flags, runs package batch, writes the report and
// prints the summary.
func runBuildAll(c *cli.Context) error {
	ctx := c.Context
	restriction, opts, err := buildOptions(c)
	if err != nil {
		return err
	}
	defer softMemoryLimit().Done()
	hugeHeapToLimit()
	shard, err := outDirFlags(c)
	if err != nil {
		return err
	}
	store, err := openCache(c)
	if err != nil {
		return err
	}
	prepareCache(&opts, store)
	opts.Cache.Store = store
	remoteJobs(c, &opts, store)
	opts.Explain = c.Bool("explain")
	defer closeStore(store, &opts)

	fetcher, doneFetching := newFetcher(c, store)
	defer doneFetching()

	var bar *progress.Line
	bo := batch.Options{
		Trees:             c.Args().Slice(),
		RootsFrom:         c.String("roots-from"),
		AllKustomizations: c.Bool("all-kustomizations"),
		OutDir:            c.String("out-dir"),
		Prune:             c.Bool("prune"),
		Restriction:       restriction,
		Remote:            fetcher,
		Engine:            opts,
		Version:           Version,
		Shard:             shard,
		Check:             c.Bool("check"),
	}
	if bo.OutDir == "" {
		bo.Previous = previousReport(c.String("report"))
	}
	if f, ok := terminal(c.App.ErrWriter); ok && c.Bool("progress") && term.IsTerminal(int(f.Fd())) {
		bo.Progress = func(total int) func() {
			bar = progress.New(f, "building", total)
			return bar.Step
		}
	}
	rep, err := batch.Run(ctx, bo)
	if bar != nil {
		bar.Finish()
	}
	if rep == nil {
		return err
	}
	// Paths as diff and affected print them: relative to the current
	// directory where they lie under it (in the report too, so that
	// shards run from the repository root name roots alike on any
	// machine).
	cwd := workingDir()
	for i := range rep.Roots {
		rr := &rep.Roots[i]
		rr.Path = relToCwd(cwd, rr.Path)
		if rr.Output != "" {
			rr.Output = relToCwd(cwd, rr.Output)
		}
		rr.Hint = relHint(rr.Hint)
		for j := range rr.Warnings {
			rr.Warnings[j].File = relToCwd(cwd, rr.Warnings[j].File)
		}
	}
	printWarnings(c, rep.Warnings())
	var errs *multierror.Error
	if err != nil {
		errs = multierror.Append(errs, err)
	}
	for _, rr := range rep.Roots {
		if rr.Status == "error" {
			errs = multierror.Append(errs, &rootError{root: rr.Path, hint: rr.Hint, msg: rr.Error})
		}
	}
	if err := writeReport(c, rep); err != nil {
		errs = multierror.Append(errs, err)
	}
	if c.Bool("stats") {
		printStats(c, rep)
	}
	if opts.Explain {
		printExplain(c.App.ErrWriter, rep.Explain)
	}
	checkFailed := outDirNotes{unit: "root", outDir: bo.OutDir,
		rerun: "kpipe build-all --out-dir " + bo.OutDir + " --prune (and delete what no root renders)"}.print(c.App.ErrWriter, rep, bo.Check)
	if rep.Shard != "" {
		fmt.Fprintf(c.App.ErrWriter, "shard %s: ", rep.Shard)
	}
	fmt.Fprintf(c.App.ErrWriter, "built %d roots (%d failed, %d changed, %d up to date) in %.2fs: %d nodes built, %d from cache\n",
		rep.Summary.Roots, rep.Summary.Failed, rep.Summary.Changed, rep.Summary.UpToDate, rep.Summary.Seconds, rep.Summary.NodesBuilt, rep.Summary.NodesCached)
	if errs != nil {
		errs.ErrorFormat = rootErrorsFormat(len(rep.Roots))
		return errs
	}
	if checkFailed {
		return &exitError{code: 1} // named above
	}
	return nil
}

// previousReport reads the digests of the report a previous run left at
// path (none, or not a report: nil), by absolute root path, for
// "changed" without an output directory.
func previousReport(path string) map[string]string {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var rep batch.Report
	if json.Unmarshal(data, &rep) != nil || rep.Roots == nil {
		return nil
	}
	cwd, err := filepath.EvalSymlinks(".")
	if err == nil {
		cwd, err = filepath.Abs(cwd)
	}
	if err != nil {
		return nil
	}
	prev := make(map[string]string, len(rep.Roots))
	for _, rr := range rep.Roots {
		p := rr.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if rr.Status == "ok" {
			prev[p] = rr.Digest
		}
	}
	return prev
}

// workingDir is the current directory, absolute and symlink-free ("" when
// unknown), which report paths are relative to.
func workingDir() string {
	cwd, _ := filepath.EvalSymlinks(".")
	if cwd != "" {
		cwd, _ = filepath.Abs(cwd)
	}
	return cwd
}

// rootErrorsFormat lists the errors of a run over roots roots, one
// indented item each: "N of M roots failed:".
func rootErrorsFormat(roots int) multierror.ErrorFormatFunc {
	return func(es []error) string {
		lines := make([]string, len(es))
		for i, e := range es {
			lines[i] = "  * " + strings.ReplaceAll(e.Error(), "\n", "\n    ")
		}
		return fmt.Sprintf("%d of %d roots failed:\n%s", len(es), roots, strings.Join(lines, "\n"))
	}
}

// rootError is one failing root in build-all's list: the root, the plain
// line for a person first when the error has one (as kpipe build prints
// it), then kustomize's wording.
type rootError struct{ root, hint, msg string }

func (e *rootError) Error() string {
	if e.hint != "" {
		return e.root + ": " + e.hint + "\n" + e.msg
	}
	return e.root + ": " + e.msg
}

// printStats prints the per-stage table of --stats.
func printStats(c *cli.Context, rep *batch.Report) {
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
	if r := rep.Summary.Remote; r != nil {
		failed := ""
		if r.Failed {
			failed = " (failed: the run went on without it)"
		}
		checked := ""
		if r.Checked > 0 {
			checked = fmt.Sprintf(" (%d local hits checked, %d already there)", r.Checked, r.Present)
		}
		fmt.Fprintf(w, "remote cache %s: %d hits, %d misses, %d refused, %d uploads%s; %.1f KiB down, %.1f KiB up; %.3fs in requests%s\n",
			r.URL, r.Hits, r.Misses, r.Refused, r.Uploads, checked, float64(r.BytesDown)/1024, float64(r.BytesUp)/1024, r.Seconds, failed)
	}
}

// printWarnings prints the warnings of kustomization files a run of many
// roots gives, one line each, naming the file, unless --quiet.
func printWarnings(c *cli.Context, ws []batch.Warning) {
	if c.Bool("quiet") {
		return
	}
	for _, w := range ws {
		fmt.Fprintf(c.App.ErrWriter, "Warning: %s: %s\n", w.File, w.Message)
	}
}
