package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hashicorp/go-multierror"
	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/cli/ext"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/flux/cluster"
)

func fluxBuildAllCommand() *cli.Command {
	return &cli.Command{
		Name:      "build-all",
		Usage:     "render every Flux Kustomization a cluster directory applies, each once, one output each",
		ArgsUsage: "CLUSTER_DIR...",
		Description: `Renders the Flux Kustomizations a cluster directory applies (the
directory flux bootstrap's flux-system Kustomization, or flux-operator's
FluxInstance, points at) and, in turn, every Flux Kustomization their
renderings hold, as flux build kustomization --recursive follows them: each
once, as flux build kustomization builds it (docs/flux.md), each cached by
content, so that a run where nothing changed reads no kustomization.

Sources: a GitRepository or OCIRepository named flux-system is the
repository (--source-root, default: the git repository holding the first
CLUSTER_DIR); other sources need --local-sources KIND/NAMESPACE/NAME=DIR.

spec.postBuild.substituteFrom is resolved from the ConfigMaps and Secrets
the cluster itself renders (SOPS-encrypted ones cannot be read: their
variables are left out, with a warning); with --dry-run none is read, as
flux build --dry-run does.

With --out-dir OUT, each Flux Kustomization's own objects go to
OUT/<namespace>/<name>.yaml (written only when changed); --check compares
instead of writing, --prune deletes the outputs of Kustomizations the
cluster no longer renders (only files kpipe wrote), --report writes the
JSON report, --shard I/N writes and reports one part of them (by a hash of
namespace/name). Give this command its own --out-dir (not build-all's).

With --enable-helm, the HelmReleases the Flux Kustomizations render are
rendered too, each as helm-controller would (helm template with the merged
values, the post-renderers, the origin labels), each a node of its own
cached by content, its output OUT/<namespace>/<name>.helmrelease.yaml:
charts from a GitRepository path (the repository's, or --local-sources)
or an HTTP HelmRepository (pulled and kept as helmCharts charts are;
--offline uses what is kept). Without it, a HelmRelease is an object of
its Kustomization's output.`,
		Flags: append(append(profileFlags(),
			&cli.StringFlag{Name: "out-dir", Usage: "write each Flux Kustomization's output to OUT/<namespace>/<name>.yaml"},
			&cli.StringFlag{Name: "report", Usage: "write a JSON report of every Flux Kustomization to this file"},
			&cli.BoolFlag{Name: "prune", Usage: "delete outputs under --out-dir of Kustomizations the cluster no longer renders (only files kpipe wrote)"},
			&cli.BoolFlag{Name: "check", Usage: "compare each output with the file under --out-dir instead of writing it; exit 1 naming each difference"},
			&cli.StringFlag{Name: "shard", Usage: "write and report only part I of N of the Kustomizations (I/N)"},
			&cli.StringFlag{Name: "source-root", Usage: "the repository's directory: where the flux-system GitRepository or OCIRepository lies (default: the git repository of CLUSTER_DIR)"},
			&cli.StringSliceFlag{Name: "local-sources", Usage: "KIND/NAMESPACE/NAME=DIR: where a source lies (repeatable, comma-separated)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "read no substituteFrom, as flux build --dry-run"},
			&cli.StringSliceFlag{Name: "ignore-paths", Usage: "paths to ignore in .gitignore format, as flux build's --ignore-paths"},
			&cli.BoolFlag{Name: "strict-substitute", Usage: "fail on a variable without a value or a default, as flux build's --strict-substitute"},
			&cli.BoolFlag{Name: "enable-helm", Usage: "render the HelmReleases too, each with helm template (runs helm)"},
			&cli.StringFlag{Name: "helm-command", Value: "helm", Usage: "with --enable-helm: the helm executable to run"},
			&cli.StringSliceFlag{Name: "helm-api-versions", Usage: "with --enable-helm: Kubernetes api versions for .Capabilities.APIVersions (the cluster's)"},
			&cli.StringFlag{Name: "helm-kube-version", Usage: "with --enable-helm: the Kubernetes version for .Capabilities.KubeVersion (the cluster's)"},
			&cli.BoolFlag{Name: "allow-v2beta2", Usage: "with --enable-helm: render helm.toolkit.fluxcd.io/v2beta2 HelmReleases, as helm-controller up to v1.4 (Flux up to v2.7) does"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "render at most this many Kustomizations at once"},
			&cli.BoolFlag{Name: "stats", Usage: "print counts of what was rendered and what came from the cache"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "do not print kustomize's warnings"},
		), cacheFlags()...),
		Action: withProfile(runFluxBuildAll),
	}
}

func runFluxBuildAll(c *cli.Context) error {
	ctx := c.Context
	if c.NArg() == 0 {
		return usage(c, "give the cluster directory: the directory the flux-system Kustomization applies (e.g. clusters/production)")
	}
	shard, err := outDirFlags(c)
	if err != nil {
		return err
	}
	defer softMemoryLimit().Done()
	cwd := workingDir()
	var dirs []string
	for _, d := range c.Args().Slice() {
		abs, err := filepath.Abs(d)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return fmt.Errorf("cluster directory %s: %w", d, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return fmt.Errorf("cluster directory %s: not a directory", d)
		}
		dirs = append(dirs, abs)
	}
	sourceRoot := c.String("source-root")
	if sourceRoot == "" {
		sourceRoot = gitTop(dirs[0], cwd)
	}
	sourceRoot, err = filepath.Abs(sourceRoot)
	if err == nil {
		sourceRoot, err = filepath.EvalSymlinks(sourceRoot)
	}
	if err != nil {
		return fmt.Errorf("--source-root: %w", err)
	}
	var roots []cluster.Root
	for _, d := range dirs {
		r, err := cluster.ClusterRoot(sourceRoot, d)
		if err != nil {
			return err
		}
		roots = append(roots, r)
	}
	local := map[string]string{}
	for _, kv := range c.StringSlice("local-sources") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return usage(c, "--local-sources %q: want KIND/NAMESPACE/NAME=DIR", kv)
		}
		local[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}

	store, err := openCache(c)
	if err != nil {
		return err
	}
	opts := engine.Options{Jobs: c.Int("jobs"), Warn: func(msg string) { fmt.Fprintln(c.App.ErrWriter, "Warning: "+msg) }}
	prepareCache(&opts, store)
	opts.Cache.Store = store
	remoteJobs(c, &opts, store)
	defer closeStore(store, &opts)
	fetcher, doneFetching := newFetcher(c, store)
	defer doneFetching()
	armStop(ctx)

	co := cluster.Options{Cwd: cwd, SourceRoot: sourceRoot, LocalSources: local,
		DryRun: c.Bool("dry-run"), IgnorePaths: c.StringSlice("ignore-paths"), Strict: c.Bool("strict-substitute"),
		Engine: opts, Remote: fetcher, OutDir: c.String("out-dir"), Check: c.Bool("check"), Prune: c.Bool("prune"),
		Shard: shard, Version: Version}
	fluxHelmReleases(c, &co)
	if ctx.Err() != nil {
		return context.Cause(ctx) // handed over (Extensions)
	}
	rep, err := cluster.Run(ctx, roots, co)
	if rep == nil {
		return err
	}
	for i := range rep.Roots {
		if rr := &rep.Roots[i]; rr.Output != "" {
			rr.Output = relToCwd(cwd, rr.Output)
		}
	}
	if !c.Bool("quiet") {
		for _, rr := range rep.Roots {
			for _, w := range rr.Warnings {
				fmt.Fprintf(c.App.ErrWriter, "Warning: %s: %s\n", w.File, w.Message)
			}
		}
	}
	var errs *multierror.Error
	if err != nil {
		errs = multierror.Append(errs, err)
	}
	for _, rr := range rep.Roots {
		if rr.Status == "error" {
			errs = multierror.Append(errs, &rootError{root: fluxEntryName(rr.Path), msg: rr.Error})
		}
	}
	if err := writeReport(c, rep); err != nil {
		errs = multierror.Append(errs, err)
	}
	hrs := helmReleaseCounts(rep)
	if c.Bool("stats") {
		fmt.Fprintf(c.App.ErrWriter, "Kustomizations: %d rendered, %d up to date (not loaded); kustomizations: %d built, %d from cache; files hashed: %d, from index: %d\n",
			rep.Summary.Roots-hrs.all-(rep.Summary.UpToDate-hrs.cached), rep.Summary.UpToDate-hrs.cached, rep.Summary.NodesBuilt, rep.Summary.NodesCached, rep.Summary.FilesHashed, rep.Summary.FilesStat)
		if c.Bool("enable-helm") {
			fmt.Fprintf(c.App.ErrWriter, "HelmReleases: %d rendered, %d from cache, %d failed; helm template ran %d times\n", hrs.all-hrs.cached-hrs.failed, hrs.cached, hrs.failed, hrs.helmRuns)
		}
	}
	out := c.String("out-dir")
	checkFailed := outDirNotes{unit: "Kustomization", outDir: out,
		rerun: "kpipe flux build-all " + strings.Join(c.Args().Slice(), " ") + " --out-dir " + out + " --prune",
		owner: func(p string) string { // a HelmRelease's report path names its kind
			if strings.HasPrefix(p, "HelmRelease ") {
				return p
			}
			return "Kustomization " + p
		}}.print(c.App.ErrWriter, rep.Report, c.Bool("check"))
	if rep.Shard != "" {
		fmt.Fprintf(c.App.ErrWriter, "shard %s: ", rep.Shard)
	}
	withHRs := ""
	if hrs.all > 0 {
		withHRs = fmt.Sprintf(" and %d HelmReleases", hrs.all)
	}
	fmt.Fprintf(c.App.ErrWriter, "rendered %d Flux Kustomizations%s (%d failed, %d changed, %d up to date) in %.2fs: %d kustomizations built, %d from cache\n",
		rep.Summary.Roots-hrs.all, withHRs, rep.Summary.Failed, rep.Summary.Changed, rep.Summary.UpToDate, rep.Summary.Seconds, rep.Summary.NodesBuilt, rep.Summary.NodesCached)
	if errs != nil {
		errs.ErrorFormat = func(es []error) string {
			lines := make([]string, len(es))
			for i, e := range es {
				lines[i] = "  * " + strings.ReplaceAll(e.Error(), "\n", "\n    ")
			}
			what := "Flux Kustomizations"
			if hrs.all > 0 {
				what = "Flux Kustomizations and HelmReleases"
			}
			return fmt.Sprintf("%d of %d %s failed:\n%s", len(es), len(rep.Roots), what, strings.Join(lines, "\n"))
		}
		return errs
	}
	if checkFailed {
		return &exitError{code: 1}
	}
	return nil
}

// gitTop is the git repository holding dir (the nearest directory with a
// .git entry), or cwd when there is none.
func gitTop(dir, cwd string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return cwd
		}
	}
}

// fluxHelmReleases sets co to render the HelmReleases with helm when
// --enable-helm allows it (nothing runs helm otherwise).
func fluxHelmReleases(c *cli.Context, co *cluster.Options) {
	if !c.Bool("enable-helm") {
		return
	}
	co.Engine.EnableHelm = true
	co.Engine.Helm = engine.HelmOptions{Command: c.String("helm-command"), APIVersions: c.StringSlice("helm-api-versions"), KubeVersion: c.String("helm-kube-version")}
	co.HelmReleases = extensions(c).HelmReleases(ext.HelmReleaseOptions{Engine: co.Engine, Remote: co.Remote,
		AllowV2Beta2: c.Bool("allow-v2beta2") || c.Bool("flux-allow-v2beta2")})
}

// fluxEntryName names a report entry of a Flux run in messages.
func fluxEntryName(path string) string {
	if strings.HasPrefix(path, "HelmRelease ") {
		return path
	}
	return "Kustomization " + path
}

// hrCounts count a Flux run's HelmReleases: all, taken from the cache,
// failed, and helm's runs.
type hrCounts struct{ all, cached, failed, helmRuns int }

func helmReleaseCounts(rep *cluster.Report) hrCounts {
	var n hrCounts
	for i, k := range rep.Kustomizations {
		if k.Kind != "HelmRelease" {
			continue
		}
		n.all++
		switch {
		case rep.Roots[i].Status == "error":
			n.failed++
		case rep.Roots[i].Cached:
			n.cached++
		}
		n.helmRuns += rep.Roots[i].StageMisses
	}
	return n
}
