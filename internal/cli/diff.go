package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/kpipe/kpipe/internal/affected"
	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/diff"
)

// exitError carries an exit status other than 1; an empty message prints
// nothing.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "show what a change renders differently, resource by resource",
		ArgsUsage: "[PATH...] | --no-index DIR_A DIR_B",
		Description: `Renders, at two git revisions, only the kustomization roots whose inputs
differ between them, through the cache, and prints the resources that
changed: matched by group, kind, namespace and name, each with a unified
diff of its YAML. The old side (default: the merge base of HEAD with the
default branch) is read from git's objects, without a checkout (only what
the roots compared read); the new side is the working tree unless --head
names a revision, read the same way. PATHs limit
the roots to those trees (default: the current directory).

A generated name whose hash suffix changed is one changed resource; a
change of order alone is not a change (--order counts it; JSON says
"reordered" either way). A Secret's data and stringData
values are never printed (a short digest of each stands in) unless
--show-secrets.

With --no-index (or outside a git repository), DIR_A and DIR_B are two
trees of kustomizations (every root rendered, matched by relative path) or
two directories of rendered output (.yaml files matched by path).

A compared root that fails to build on both sides with the same error is
listed too ("failing", with its error): the change reaches a root that
does not build.

With --argocd, the units compared are the Argo CD Applications found under
PATHs (ApplicationSets expanded at each revision), rendered as Argo CD's
repo-server renders them and compared as its controller sees them, by
name: an Application is rendered when it is new or gone, its spec changed,
or what it read meets the change (see docs/argocd-render.md).

Exit status, as git diff --exit-code: 0 no difference, 1 differences
(a root failing on one side or on both is one), 2 a usage error or
trouble (not a git repository, an unknown revision).`,
		Flags: append(append(commonBuildFlags(),
			&cli.StringFlag{Name: "base", Usage: "the old revision (default: merge base of HEAD with the default branch)"},
			&cli.StringFlag{Name: "head", Usage: "the new revision (default: the working tree)"},
			&cli.BoolFlag{Name: "no-index", Usage: "compare two directories, without git"},
			&cli.IntFlag{Name: "unified", Aliases: []string{"U"}, Value: 3, Usage: "lines of context in each resource's diff"},
			&cli.BoolFlag{Name: "show-secrets", Usage: "print Secret values (default: a digest of each)"},
			&cli.BoolFlag{Name: "order", Usage: "count a change of the resources' order alone as a change (default: noted, not counted)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, markdown or json"},
			&cli.StringFlag{Name: "color", Value: "auto", Usage: "auto, always or never (text format)"},
			&cli.BoolFlag{Name: "name-only", Usage: "print only the changed roots and resources"},
			&cli.BoolFlag{Name: "all-kustomizations", Usage: "compare every kustomization, not only the top-level roots"},
		), append(argocdDiffFlags(), fluxReviewFlags()...)...),
		Action: withProfile(runDiff),
	}
}

// runDiff runs a review and prints it.
func runDiff(c *cli.Context) error {
	res, err := review(c)
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	if err != nil {
		return &exitError{code: 2, err: notARepoHint(err)}
	}
	printWarnings(c, res.Warnings)
	w := c.App.Writer
	switch f := c.String("format"); {
	case c.Bool("name-only"):
		err = diff.WriteNameOnly(w, res)
	case f == "json":
		err = diff.WriteJSON(w, res)
	case f == "markdown":
		err = diff.WriteMarkdown(w, res, 0)
	case f == "text":
		color := false
		switch c.String("color") {
		case "always":
			color = true
		case "auto":
			if out, ok := terminal(w); ok && term.IsTerminal(int(out.Fd())) && os.Getenv("NO_COLOR") == "" {
				color = true
			}
		case "never":
		default:
			return usage(c, "--color %q: want auto, always or never", c.String("color"))
		}
		err = diff.WriteText(w, res, color)
	default:
		return usage(c, "--format %q: want text, markdown or json", f)
	}
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if res.Changed() {
		return &exitError{code: 1}
	}
	return nil
}

// oneReviewKind refuses --argocd and --flux together: a review compares
// one kind of unit.
func oneReviewKind(c *cli.Context) error {
	if c.Bool("argocd") && c.Bool("flux") {
		return fmt.Errorf("--argocd and --flux compare different units (Argo CD Applications, Flux Kustomizations): give one")
	}
	return nil
}

// review runs the comparison the flags ask for.
func review(c *cli.Context) (*diff.Result, error) {
	if err := oneReviewKind(c); err != nil {
		return nil, err
	}
	if c.Bool("argocd") {
		return argocdReview(c)
	}
	if c.Bool("flux") {
		out, err := fluxReview(c)
		if err != nil {
			return nil, err
		}
		return out.Result, nil
	}
	ctx := c.Context
	defer softMemoryLimit().Done() // it builds as build-all does
	restriction, opts, err := buildOptions(c)
	if err != nil {
		return nil, err
	}
	store, err := openCache(c)
	if err != nil {
		return nil, err
	}
	prepareCache(&opts, store)
	opts.Cache.Store = store
	defer closeCache(store, &opts)
	fetcher, doneFetching := newFetcher(c, store)
	defer doneFetching()
	bo := batch.Options{Restriction: restriction, Engine: opts, AllKustomizations: c.Bool("all-kustomizations"), Version: Version, Remote: fetcher}
	do := diff.Options{Context: c.Int("unified"), ShowSecrets: c.Bool("show-secrets"), OrderMatters: c.Bool("order")}
	args := c.Args().Slice()
	noIndex := c.Bool("no-index")
	if !noIndex && len(args) == 2 && !c.IsSet("base") && !c.IsSet("head") {
		// Outside a repository, two directories are compared as git
		// diff compares two paths outside one.
		if _, err := affected.OpenRepo(ctx, "."); err != nil {
			noIndex = true
		}
	}
	if noIndex {
		if len(args) != 2 {
			return nil, usage(c, "--no-index needs two directories")
		}
		return diff.ReviewDirs(ctx, args[0], args[1], diff.DirOptions{Build: bo, Diff: do})
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return diff.ReviewGit(ctx, diff.GitOptions{Dir: cwd, Paths: args, Base: c.String("base"), Head: c.String("head"), Build: bo, Diff: do})
}

func affectedCommand() *cli.Command {
	return &cli.Command{
		Name:      "affected",
		Usage:     "list the roots whose output changed since a revision",
		ArgsUsage: "[PATH...]",
		Description: `Lists, one per line (relative to the current directory), the kustomization
roots under PATHs (default: the current directory) whose rendered output
differs between --since REV and the working tree (or --head REV), so that
CI renders, diffs or deploys only those. A root added, removed, or failing
on one side is listed, and so is a root that fails on both (its error
goes to standard error).

The candidates are the roots that read a changed path (git's list of
changed paths, untracked files that git does not ignore included): a file
their build read (from the cache's record of their last build, or by
building them through the cache), anything under the directory of a node
that runs plugins or helm charts, or a kustomization file added or removed
in one of their directories. The candidates are then rendered at both
revisions through the cache and listed when their output bytes differ.
--inputs-only skips that step and lists every candidate (no rendering of
the old revision; a superset: a renamed file with the same content, say).

--format json also says, for each root, its status (changed, added,
removed, error, failing) and error, or, with --inputs-only, which changed paths reach it.

With --argocd, the Argo CD Applications under PATHs are listed instead, by
name (ApplicationSets expanded at each revision).

Exit status: 0 when it listed the roots (none or some), 1 when a listed
root fails to build, 2 a usage error or trouble (not a git repository,
an unknown revision).`,
		Flags: append(append(commonBuildFlags(),
			&cli.StringFlag{Name: "since", Usage: "the revision to compare with (required)"},
			&cli.StringFlag{Name: "head", Usage: "the new revision (default: the working tree)"},
			&cli.BoolFlag{Name: "inputs-only", Usage: "list the roots that read a changed path, without rendering the old revision"},
			&cli.StringFlag{Name: "format", Value: "lines", Usage: "lines or json"},
			&cli.BoolFlag{Name: "all-kustomizations", Usage: "consider every kustomization, not only the top-level roots"},
		), append(argocdDiffFlags(), fluxReviewFlags()...)...),
		Action: withProfile(runAffected),
	}
}

// affectedRoot is one line of kpipe affected's JSON.
type affectedRoot struct {
	Path    string   `json:"path"`
	Status  string   `json:"status,omitempty"`
	Because []string `json:"because,omitempty"`
	Error   string   `json:"error,omitempty"`
}

func runAffected(c *cli.Context) error {
	if err := required(c, "since"); err != nil {
		return err
	}
	err := affectedRun(c)
	var ee *exitError
	if err != nil && !errors.As(err, &ee) {
		return &exitError{code: 2, err: notARepoHint(err)} // trouble
	}
	return err
}

// notARepoHint adds to git's "not a git repository" what to do instead.
func notARepoHint(err error) error {
	if strings.Contains(err.Error(), "not a git repository") {
		return fmt.Errorf("%w\nkpipe diff and kpipe affected compare git revisions; to compare two directories, run kpipe diff --no-index DIR_A DIR_B", err)
	}
	return err
}

// affectedRun is kpipe affected; its errors are trouble (exit status 2).
func affectedRun(c *cli.Context) error {
	if err := oneReviewKind(c); err != nil {
		return err
	}
	if c.Bool("argocd") {
		return argocdAffected(c)
	}
	if c.Bool("flux") {
		return fluxAffected(c)
	}
	ctx := c.Context
	defer softMemoryLimit().Done() // it builds as build-all does
	restriction, opts, err := buildOptions(c)
	if err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	store, err := openCache(c)
	if err != nil {
		return err
	}
	prepareCache(&opts, store)
	opts.Cache.Store = store
	defer closeCache(store, &opts)
	fetcher, doneFetching := newFetcher(c, store)
	defer doneFetching()
	bo := batch.Options{Restriction: restriction, Engine: opts, AllKustomizations: c.Bool("all-kustomizations"), Version: Version, Remote: fetcher}
	var roots []affectedRoot
	if c.Bool("inputs-only") {
		if c.IsSet("head") {
			return usage(c, "--inputs-only compares with the working tree: drop --head")
		}
		repo, err := affected.OpenRepo(ctx, cwd)
		if err != nil {
			return err
		}
		since, err := repo.ResolveRev(ctx, c.String("since"))
		if err != nil {
			return err
		}
		changes, err := repo.Git(ctx, since, "")
		if err != nil {
			return err
		}
		bo.Trees = c.Args().Slice()
		found, _, err := affected.Find(ctx, bo, affected.Under(repo.Top, changes))
		if err != nil && !errors.Is(err, batch.ErrNoRoots) {
			return err
		}
		for _, r := range found {
			ar := affectedRoot{Path: relToCwd(cwd, r.Path), Error: r.Error}
			for _, p := range r.Because {
				ar.Because = append(ar.Because, relToCwd(cwd, p))
			}
			roots = append(roots, ar)
		}
	} else {
		res, err := diff.ReviewGit(ctx, diff.GitOptions{Dir: cwd, Paths: c.Args().Slice(), Base: c.String("since"),
			Head: c.String("head"), Build: bo, Diff: diff.Options{OrderMatters: true}})
		if err != nil {
			return err
		}
		repo, err := affected.OpenRepo(ctx, cwd)
		if err != nil {
			return err
		}
		printWarnings(c, res.Warnings)
		for _, rd := range res.Roots {
			roots = append(roots, affectedRoot{Path: relToCwd(cwd, filepath.Join(repo.Top, filepath.FromSlash(rd.Path))), Status: rd.Status,
				Error: firstNonEmpty(rd.NewError, rd.OldError)})
		}
	}
	return printAffected(c, "roots", roots, func(r affectedRoot) (string, string) {
		if r.Error == "" {
			return r.Path, ""
		}
		return r.Path, fmt.Sprintf("%s does not build: %s", r.Path, r.Error)
	})
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// relToCwd shows p relative to the current directory (symlinks resolved)
// when it lies under it.
func relToCwd(cwd, p string) string {
	if rel, err := filepath.Rel(cwd, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	if rel, err := filepath.Rel(cwd, p); err == nil && rel == "." {
		return "."
	}
	return p
}
