package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/affected"
	"github.com/kpipe/kpipe/internal/argocd/fleet"
	"github.com/kpipe/kpipe/internal/diff"
)

// argocdDiffFlags are the flags kpipe diff and kpipe affected take for
// --argocd: Argo CD's settings (the helm command is theirs already).
func argocdDiffFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "argocd", Usage: "compare Argo CD Applications (those under PATHs, ApplicationSets expanded) instead of kustomization roots"},
	}, argocdSettingFlags()...)
}

// argocdReviewOptions are a review's options from diff's or affected's
// flags.
func argocdReviewOptions(c *cli.Context, base string, d diff.Options, inputsOnly bool) (fleet.ReviewOptions, func(), error) {
	settings, err := argocdSettings(c)
	if err != nil {
		return fleet.ReviewOptions{}, nil, err
	}
	ro, done, err := argocdEngine(c)
	if err != nil {
		return fleet.ReviewOptions{}, nil, err
	}
	cwd, err := os.Getwd()
	if err != nil {
		done()
		return fleet.ReviewOptions{}, nil, err
	}
	return fleet.ReviewOptions{Dir: cwd, ApplicationSets: extensions(c).ApplicationSets, Paths: c.Args().Slice(), Base: base, Head: c.String("head"), Settings: settings,
		RepoURLs: c.StringSlice("repo-url"), NewGitFileGlobbing: c.Bool("new-git-file-globbing"), IncludeHiddenDirectories: c.Bool("include-hidden-directories"),
		Render: ro, Diff: d, InputsOnly: inputsOnly}, done, nil
}

// argocdReview is kpipe diff --argocd's comparison.
func argocdReview(c *cli.Context) (*diff.Result, error) {
	if c.Bool("no-index") {
		return nil, usage(c, "--argocd compares git revisions: drop --no-index")
	}
	o, done, err := argocdReviewOptions(c, c.String("base"), diff.Options{Context: c.Int("unified"), ShowSecrets: c.Bool("show-secrets"), OrderMatters: c.Bool("order")}, false)
	if err != nil {
		return nil, err
	}
	defer done()
	res, _, err := fleet.Review(c.Context, o)
	return res, err
}

// argocdAffected is kpipe affected --argocd: the Applications a change
// reaches, by name.
func argocdAffected(c *cli.Context) error {
	if c.Bool("inputs-only") && c.IsSet("head") {
		return usage(c, "--inputs-only compares with the working tree: drop --head")
	}
	o, done, err := argocdReviewOptions(c, c.String("since"), diff.Options{OrderMatters: true}, c.Bool("inputs-only"))
	if err != nil {
		return err
	}
	defer done()
	if _, err := affected.OpenRepo(c.Context, o.Dir); err != nil {
		return err
	}
	_, apps, err := fleet.Review(c.Context, o)
	if err != nil {
		return err
	}
	return printAffected(c, "applications", apps, func(a fleet.Affected) (string, string) {
		if a.Error == "" {
			return a.Name, ""
		}
		return a.Name, fmt.Sprintf("Application %s (%s) does not render: %s", a.Name, filepath.FromSlash(a.File), a.Error)
	})
}
