package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-multierror"
	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/argocd/fleet"
	"github.com/kpipe/kpipe/internal/argocd/render"
)

func argocdBuildAllCommand() *cli.Command {
	return &cli.Command{
		Name:      "build-all",
		Usage:     "render every Argo CD Application of the repository, one file each",
		ArgsUsage: "[DIR...]",
		Description: `Finds every Argo CD Application and ApplicationSet in the .yaml, .yml and
.json files under each DIR (default: the current directory; hidden
directories and kpipe's output directories skipped), expands the ApplicationSets this repository can
expand alone (list, git directory and file generators, matrix and merge),
and renders every Application whose sources are this repository (its git
remotes' URLs, or --repo-url), as Argo CD's repo-server would. The others
are listed as skipped, with why: a source in another repository, a Helm
repository chart, an OCI source, a plugin, a generator that needs a
cluster (clusters, pull requests, SCM providers...).

The kustomize builds of all Applications are built together, over one
graph: a base shared by many Applications is built once. An Application
whose inputs did not change since the last run (the cache's records) is
not rendered again.

With --out-dir OUT, each Application's manifests (as kpipe argocd
manifests prints them) go to OUT/<name>.yaml, <name> its instance name; as
with kpipe build-all, a file is rewritten only when it changed, --prune
deletes the outputs of Applications that are gone (only files kpipe wrote),
--check compares instead of writing (exit 1 naming each difference),
--shard I/N renders one part (by a hash of the name) and --report writes a
JSON report (kpipe report merge joins the shards'). Exit status 1 when an
Application fails (each error is printed, as Argo CD words it).`,
		Flags: append(argocdFlags(),
			&cli.StringFlag{Name: "out-dir", Usage: "write each Application's manifests to <name>.yaml under this directory"},
			&cli.StringFlag{Name: "report", Usage: "write a JSON report of every Application to this file"},
			&cli.BoolFlag{Name: "prune", Usage: "delete outputs under --out-dir of Applications that are gone (only files kpipe wrote)"},
			&cli.BoolFlag{Name: "check", Usage: "compare each output with the file under --out-dir instead of writing it; exit 1 naming each difference"},
			&cli.StringFlag{Name: "shard", Usage: "render only part I of N of the Applications (I/N), by a hash of each name"},
			&cli.BoolFlag{Name: "stats", Usage: "print what was built and taken from the cache"},
		),
		Action: withProfile(runArgocdBuildAll),
	}
}

func runArgocdBuildAll(c *cli.Context) error {
	settings, err := argocdSettings(c)
	if err != nil {
		return err
	}
	shard, err := outDirFlags(c)
	if err != nil {
		return err
	}
	defer softMemoryLimit().Done()
	dirs := c.Args().Slice()
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	tree, err := argocdRepo(c, dirs[0])
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	rels, err := relToRepo(tree.Dir, dirs)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	argocdRevision(c, &settings, tree.Dir)
	ro, done, err := argocdEngine(c)
	if err != nil {
		return err
	}
	defer done()
	r := render.New(ro)
	o := fleet.Options{
		Source: fleet.Source{Tree: tree, Repos: argocdRepos(c, tree.Dir), Renderer: r, Settings: settings},
		Discover: fleet.DiscoverOptions{Dirs: rels, ApplicationSets: extensions(c).ApplicationSets, NewGitFileGlobbing: c.Bool("new-git-file-globbing"), IncludeHiddenDirectories: c.Bool("include-hidden-directories"),
			Tracked: func() ([]string, error) {
				files, err := fleet.Tracked(c.Context, tree.Dir)
				if err != nil {
					return nil, nil // not a git repository: every file
				}
				return files, nil
			}},
		OutDir: c.String("out-dir"), Check: c.Bool("check"), Prune: c.Bool("prune"), Shard: shard, Version: Version,
	}
	if o.OutDir == "" {
		o.Previous = previousReport(c.String("report"))
	}
	res, err := fleet.Run(c.Context, o)
	if res == nil {
		if errors.Is(err, fleet.ErrNoApplications) {
			return &exitError{code: 2, err: fmt.Errorf("%w under %v", err, dirs)}
		}
		return err
	}
	rep := res.Report
	cwd := workingDir()
	skipped := 0
	for i := range rep.Roots {
		rr := &rep.Roots[i]
		if rr.Output != "" {
			rr.Output = relToCwd(cwd, rr.Output)
		}
		if rr.Status == "skipped" {
			skipped++
			if !c.Bool("quiet") {
				fmt.Fprintf(c.App.ErrWriter, "skipped %s (%s): %s\n", rr.Path, rr.Source, rr.Skipped)
			}
		}
	}
	var errs *multierror.Error
	if err != nil {
		errs = multierror.Append(errs, err)
	}
	for _, rr := range rep.Roots {
		if rr.Status == "error" {
			errs = multierror.Append(errs, fmt.Errorf("%s (%s): %s", rr.Path, rr.Source, rr.Error))
		}
	}
	if err := writeReport(c, rep); err != nil {
		errs = multierror.Append(errs, err)
	}
	checkFailed := outDirNotes{unit: "Application", outDir: o.OutDir,
		rerun: "kpipe argocd build-all --out-dir " + o.OutDir + " --prune",
		show:  func(p string) string { return filepath.Join(o.OutDir, p) }}.print(c.App.ErrWriter, rep, o.Check)
	if c.Bool("stats") {
		st := r.Stats()
		fmt.Fprintf(c.App.ErrWriter, "kustomize: %d builds of %d roots, %d nodes built, %d from cache; helm: %d runs, %d from cache; files hashed: %d, from index: %d\n",
			st.Builds, st.Roots, st.NodesBuilt, st.NodesCached, st.HelmRuns, st.HelmCached, rep.Summary.FilesHashed, rep.Summary.FilesStat)
	}
	if rep.Shard != "" {
		fmt.Fprintf(c.App.ErrWriter, "shard %s: ", rep.Shard)
	}
	s := rep.Summary
	fmt.Fprintf(c.App.ErrWriter, "rendered %d Applications (%d failed, %d skipped, %d changed, %d up to date) in %.2fs: %d nodes built, %d from cache\n",
		s.Roots, s.Failed, skipped, s.Changed, s.UpToDate, s.Seconds, s.NodesBuilt, s.NodesCached)
	if errs != nil {
		errs.ErrorFormat = func(es []error) string {
			return fmt.Sprintf("%d of %d Applications failed:\n%s", len(es), s.Roots, indentErrors(es))
		}
		return errs
	}
	if checkFailed {
		return &exitError{code: 1}
	}
	return nil
}

// indentErrors lists errors one indented item each.
func indentErrors(es []error) string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = "  * " + strings.ReplaceAll(e.Error(), "\n", "\n    ")
	}
	return strings.Join(lines, "\n")
}
