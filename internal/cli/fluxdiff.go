package cli

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/diff"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/internal/flux/fluxdiff"
)

// fluxReviewFlags are the flags of diff --flux and affected --flux.
func fluxReviewFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "flux", Usage: "compare what Flux applies: the Flux Kustomizations the cluster directories (PATHs) apply, followed as kpipe flux build-all follows them (docs/flux.md)"},
		&cli.StringFlag{Name: "flux-source-root", Usage: "with --flux: the directory of the flux-system source (default: the repository's top level)"},
		&cli.StringSliceFlag{Name: "flux-local-sources", Usage: "with --flux: KIND/NAMESPACE/NAME=DIR, where another source lies (relative to the repository's top level)"},
		&cli.BoolFlag{Name: "flux-dry-run", Usage: "with --flux: read no substituteFrom, as flux build --dry-run"},
		&cli.BoolFlag{Name: "flux-allow-v2beta2", Usage: "with --flux and --enable-helm: render helm.toolkit.fluxcd.io/v2beta2 HelmReleases (helm-controller up to v1.4)"},
	}
}

// fluxReview is kpipe diff --flux: the Flux Kustomizations of the cluster
// directories given as arguments, compared between two revisions.
func fluxReview(c *cli.Context) (*fluxdiff.Outcome, error) {
	if c.NArg() == 0 {
		return nil, usage(c, "--flux needs the cluster directories to compare (e.g. clusters/production)")
	}
	if c.Bool("no-index") {
		return nil, usage(c, "--flux compares git revisions: drop --no-index")
	}
	store, err := openCache(c)
	if err != nil {
		return nil, err
	}
	jobs := runtime.NumCPU()
	if c.IsSet("jobs") {
		jobs = c.Int("jobs")
	}
	opts := engine.Options{Jobs: jobs}
	prepareCache(&opts, store)
	opts.Cache.Store = store
	defer closeCache(store, &opts)
	fetcher, doneFetching := newFetcher(c, store)
	defer doneFetching()
	local := map[string]string{}
	for _, kv := range c.StringSlice("flux-local-sources") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usage(c, "--flux-local-sources %q: want KIND/NAMESPACE/NAME=DIR", kv)
		}
		local[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	since := c.String("base")
	if c.Command.Name == "affected" {
		since = c.String("since")
	}
	co := cluster.Options{LocalSources: local, DryRun: c.Bool("flux-dry-run"), Engine: opts, Remote: fetcher, Version: Version}
	fluxHelmReleases(c, &co)
	if c.Context.Err() != nil {
		return nil, context.Cause(c.Context) // handed over (Extensions)
	}
	return fluxdiff.Review(c.Context, fluxdiff.Options{Dir: cwd, ClusterDirs: c.Args().Slice(), SourceRoot: c.String("flux-source-root"),
		Base: since, Head: c.String("head"),
		Cluster: co,
		Diff:    diff.Options{Context: c.Int("unified"), ShowSecrets: c.Bool("show-secrets"), OrderMatters: c.Bool("order") || c.Command.Name == "affected"}})
}

// fluxAffected is kpipe affected --flux: the Flux Kustomizations whose
// rendering differs since a revision (with --inputs-only: those whose
// rendering read a changed path, without rendering the old revision).
func fluxAffected(c *cli.Context) error {
	if c.Bool("inputs-only") {
		return usage(c, "--flux renders only what the change reaches at the old revision already: drop --inputs-only")
	}
	out, err := fluxReview(c)
	if err != nil {
		return err
	}
	type entry struct {
		Kustomization string   `json:"kustomization"`
		Status        string   `json:"status"`
		Because       []string `json:"because,omitempty"`
		Error         string   `json:"error,omitempty"`
	}
	var list []entry
	for _, rd := range out.Roots {
		list = append(list, entry{Kustomization: rd.Path, Status: rd.Status, Because: out.Because[rd.Path], Error: firstNonEmpty(rd.NewError, rd.OldError)})
	}
	return printAffected(c, "kustomizations", list, func(e entry) (string, string) {
		if e.Error == "" {
			return e.Kustomization, ""
		}
		return e.Kustomization, fmt.Sprintf("Kustomization %s does not build: %s", e.Kustomization, e.Error)
	})
}
