package cli

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-multierror"
	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/batch"
)

func cachePushCommand() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "send what the local cache holds for the given roots to --remote-cache",
		ArgsUsage: "[PATH...]",
		Description: `Sends the entries of the local cache that the roots under each PATH
(default: the current directory; --roots-from FILE, --all-kustomizations
as build-all takes them) need to the remote cache, so that a runner with
an empty cache builds them from the remote. Every root is looked up as
build-all would (with the same flags that change output: give the ones
the builds used); the remote is asked which of the entries found it
lacks, a few hundred at a time, and only those are sent. A root the local
cache lacks is built, and what it builds is sent too. Nothing is written
but the caches.

It is what build-all --remote-cache-write does on the way (a run that
writes a remote cache sends what it finds locally and the remote lacks),
without writing outputs. Sensitive entries (Secrets' data, plugin and
function output) are sent only with --remote-cache-sensitive.`,
		Flags: append(commonBuildFlags(),
			&cli.BoolFlag{Name: "all-kustomizations", Usage: "push every kustomization, not only the top-level roots"},
			&cli.StringFlag{Name: "roots-from", Usage: "push the roots listed in this file, one per line"},
		),
		Action: runCachePush,
	}
}

// runCachePush looks every root up with the remote written through
// (cache.RemoteOptions) and says what was sent.
func runCachePush(c *cli.Context) error {
	if c.String("remote-cache") == "" {
		return usage(c, "kpipe cache push needs --remote-cache URL (or KPIPE_REMOTE_CACHE)")
	}
	if c.Bool("no-cache") {
		return usage(c, "kpipe cache push sends what the local cache holds: drop --no-cache")
	}
	if err := c.Set("remote-cache-write", "true"); err != nil {
		return err
	}
	restriction, opts, err := buildOptions(c)
	if err != nil {
		return err
	}
	store, err := openCache(c)
	if err != nil {
		return err
	}
	if store == nil {
		return errors.New("kpipe cache push: the local cache is not available")
	}
	prepareCache(&opts, store)
	opts.Cache.Store = store
	remoteJobs(c, &opts, store)
	defer closeStore(store, &opts)
	fetcher, doneFetching := newFetcher(c, store)
	defer doneFetching()
	rep, err := batch.Run(c.Context, batch.Options{
		Trees:             c.Args().Slice(),
		RootsFrom:         c.String("roots-from"),
		AllKustomizations: c.Bool("all-kustomizations"),
		Restriction:       restriction,
		Remote:            fetcher,
		Engine:            opts,
		Version:           Version,
	})
	if rep == nil {
		return err
	}
	var errs *multierror.Error
	if err != nil {
		errs = multierror.Append(errs, err)
	}
	cwd := workingDir()
	for _, rr := range rep.Roots {
		if rr.Status == "error" {
			errs = multierror.Append(errs, &rootError{root: relToCwd(cwd, rr.Path), hint: relHint(rr.Hint), msg: rr.Error})
		}
	}
	store.Flush()
	rs := store.RemoteStats()
	fmt.Fprintf(c.App.ErrWriter, "pushed %d roots to %s: %d entries sent, %d already there (%d found in the local cache); %d nodes built; %.1f KiB up\n",
		len(rep.Roots)-rep.Summary.Failed, rs.URL, rs.Uploads, rs.Present, rs.Checked, rep.Summary.NodesBuilt, float64(rs.BytesUp)/1024)
	if rs.Failed {
		return fmt.Errorf("the remote cache %s failed; what was left was not sent", rs.URL)
	}
	if errs != nil {
		errs.ErrorFormat = rootErrorsFormat(len(rep.Roots))
		return errs
	}
	return nil
}
