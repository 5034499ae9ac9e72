package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/affected"
	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/fleet"
	"github.com/kpipe/kpipe/internal/argocd/generate"
	"github.com/kpipe/kpipe/internal/argocd/manifest"
	"github.com/kpipe/kpipe/internal/argocd/render"
	"github.com/kpipe/kpipe/internal/engine"
)

// argocdCommand is `kpipe argocd`: Argo CD Applications rendered as
// Argo CD's repo-server renders them, without a cluster.
func argocdCommand() *cli.Command {
	return &cli.Command{
		Name:  "argocd",
		Usage: "render Argo CD Applications as Argo CD's repo-server does, without a cluster",
		Description: `Renders Argo CD Applications (and the ApplicationSets a repository can
expand alone) from a repository, as Argo CD v3.6's repo-server generates
their manifests: the source type (Kustomize, Helm, Directory, with the
.argocd-source files), the Kustomize options applied as Argo CD's
kustomize edit commands, helm template with Argo CD's arguments, the
tracking annotation or label, and Argo CD's error messages. kustomize
builds run on kpipe's engine, in process; helm template runs helm.

See docs/argocd-render.md; kpipe diff --argocd and kpipe affected --argocd
compare two revisions Application by Application.`,
		Subcommands: []*cli.Command{argocdManifestsCommand(), argocdBuildAllCommand(), argocdPathsCommand()},
	}
}

// argocdSettingFlags are Argo CD's settings that manifests depend on
// (argocd-cm, the destination cluster), and which repository is this one.
func argocdSettingFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "controller-namespace", Value: "argocd", Usage: "Argo CD's namespace: Applications elsewhere are named <namespace>_<name>"},
		&cli.StringFlag{Name: "app-label-key", Value: manifest.DefaultAppLabelKey, Usage: "argocd-cm application.instanceLabelKey"},
		&cli.StringFlag{Name: "tracking-method", Value: manifest.TrackingAnnotation, Usage: "argocd-cm application.resourceTrackingMethod: annotation, label or annotation+label"},
		&cli.StringFlag{Name: "installation-id", Usage: "argocd-cm installationID"},
		&cli.StringFlag{Name: "kube-version", Usage: "the destination cluster's Kubernetes version (helm --kube-version; kustomize --helm-kube-version)"},
		&cli.StringSliceFlag{Name: "api-versions", Usage: "the destination cluster's API versions (group/version and group/version/Kind; helm --api-versions)"},
		&cli.StringFlag{Name: "kustomize-build-options", Usage: "argocd-cm kustomize.buildOptions (e.g. \"--enable-helm --load-restrictor LoadRestrictionsNone\")"},
		&cli.StringSliceFlag{Name: "kustomize-version", Usage: "a kustomize.version name argocd-cm registers (kustomize.path.<name>); kpipe builds every version alike"},
		&cli.StringSliceFlag{Name: "cluster-scoped", Usage: "group/Kind of a custom resource the cluster has cluster-scoped (the built-in kinds and CRDs rendered by the Application are known)"},
		&cli.StringSliceFlag{Name: "repo-url", Usage: "a URL Applications name this repository by (besides its git remotes)"},
		&cli.StringFlag{Name: "revision", Usage: "the commit ARGOCD_APP_REVISION names (default: the checked-out commit)"},
		&cli.BoolFlag{Name: "new-git-file-globbing", Usage: "ApplicationSet git file generators match with doublestar globs (ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_NEW_GIT_FILE_GLOBBING)"},
		&cli.BoolFlag{Name: "include-hidden-directories", Usage: "ApplicationSet git directory generators list hidden directories too (repo-server --include-hidden-directories)"},
	}
}

// argocdFlags are every argocd subcommand's flags: the settings, the
// helm binary, jobs, the cache and profiling.
func argocdFlags() []cli.Flag {
	return append(append(append(argocdSettingFlags(), profileFlags()...),
		&cli.StringFlag{Name: "helm-command", Value: "helm", Usage: "the helm executable (helm template, and kustomize's helmCharts)"},
		&cli.BoolFlag{Name: "enable-helm", Usage: "render Helm sources (runs helm template; kustomize's helmCharts need --enable-helm in --kustomize-build-options, as in Argo CD)"},
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 0, Usage: "render at most this many kustomizations at once (default: the number of CPUs)"},
		&cli.StringFlag{Name: "repo-root", Usage: "the repository's root (default: the git repository holding the current directory)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "do not list the Applications skipped"},
	), cacheFlags()...)
}

// argocdSettings reads the settings flags.
func argocdSettings(c *cli.Context) (generate.Settings, error) {
	s := generate.Settings{
		ControllerNamespace: c.String("controller-namespace"),
		AppLabelKey:         c.String("app-label-key"),
		TrackingMethod:      c.String("tracking-method"),
		InstallationID:      c.String("installation-id"),
		KubeVersion:         c.String("kube-version"),
		APIVersions:         c.StringSlice("api-versions"),
		BuildOptions:        c.String("kustomize-build-options"),
		ClusterScoped:       c.StringSlice("cluster-scoped"),
		KustomizeVersions:   c.StringSlice("kustomize-version"),
		Revision:            c.String("revision"),
		ValuesFileSchemes:   []string{"https", "http"},
	}
	switch s.TrackingMethod {
	case manifest.TrackingAnnotation, manifest.TrackingLabel, manifest.TrackingAnnotationAndLabel:
	default:
		return s, usage(c, "--tracking-method %q: want annotation, label or annotation+label", s.TrackingMethod)
	}
	return s, nil
}

// argocdEngine opens the cache and returns the renderer's options; done
// saves the file index and closes the cache.
func argocdEngine(c *cli.Context) (render.Options, func(), error) {
	opts := engine.Options{
		Jobs: c.Int("jobs"),
		Helm: engine.HelmOptions{Command: c.String("helm-command")},
		Warn: func(msg string) { fmt.Fprintln(c.App.ErrWriter, msg) },
		// (an Application's kustomize buildOptions may enable plugins)
		GoPlugins: extensions(c).GoPlugins,
	}
	store, err := openCache(c)
	if err != nil {
		return render.Options{}, nil, err
	}
	prepareCache(&opts, store)
	opts.Cache.Store = store
	remoteJobs(c, &opts, store)
	fetcher, doneFetching := newFetcher(c, store)
	return render.Options{Engine: opts, Remote: fetcher, HelmSources: c.Bool("enable-helm")}, func() {
		doneFetching()
		closeCache(store, &opts)
	}, nil
}

// argocdRepo is the repository Applications are rendered from: --repo-root,
// else the git repository holding dir, else dir.
func argocdRepo(c *cli.Context, dir string) (*render.Tree, error) {
	root := c.String("repo-root")
	if root == "" {
		if r, err := affected.OpenRepo(c.Context, dir); err == nil {
			root = r.Top
		} else {
			root = dir
		}
	}
	t, err := render.DiskTree(root)
	if err != nil {
		return nil, fmt.Errorf("--repo-root: %w", err)
	}
	return t, nil
}

// argocdRevision is --revision, or the commit checked out.
func argocdRevision(c *cli.Context, s *generate.Settings, top string) {
	if s.Revision == "" {
		s.Revision = fleet.Head(c.Context, top)
	}
}

func argocdManifestsCommand() *cli.Command {
	return &cli.Command{
		Name:      "manifests",
		Usage:     "print the manifests Argo CD's repo-server generates for an Application",
		ArgsUsage: "APP.yaml",
		Description: `Renders the Application in APP.yaml ("-": standard input) from the
repository (the git repository holding the current directory, or
--repo-root) and prints the manifests the repo-server returns for it, in
its order: a YAML stream, or with -o json one compact object a line (keys
sorted, as the repo-server returns them). --normalized prints the
controller's view instead (what it diffs with the cluster: namespaces
defaulted or cleared by scope, a duplicate object kept once).

The Application's sources must be this repository: one named by a git
remote's URL or --repo-url (an Application with a single git repoURL is
taken for this repository). Helm repository charts, OCI sources, plugins
and other repositories are not rendered (exit status 3, saying why).

A file holding several Applications renders each (--name picks one).
Errors are Argo CD's, worded as its UI shows them (exit status 1).`,
		Flags: append(argocdFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "yaml", Usage: "yaml or json (one object a line)"},
			&cli.BoolFlag{Name: "normalized", Usage: "print the controller's view of the manifests"},
			&cli.StringFlag{Name: "name", Usage: "render only the Application of this name"},
		),
		Action: withProfile(runArgocdManifests),
	}
}

// readApplications reads the Applications of a file ("-": stdin).
func readApplications(c *cli.Context, p string) ([]*app.Application, error) {
	var data []byte
	var err error
	if p == "-" {
		var r io.Reader = os.Stdin
		if c.App.Reader != nil {
			r = c.App.Reader
		}
		data, err = io.ReadAll(r)
	} else {
		data, err = os.ReadFile(p)
	}
	if err != nil {
		return nil, err
	}
	docs, err := manifest.SplitDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	var apps []*app.Application
	sets := 0
	for i, d := range docs {
		j, err := manifest.YAMLToJSON(d)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", p, i+1, err)
		}
		var h app.Header
		if json.Unmarshal(j, &h) != nil || !h.IsArgo() {
			continue
		}
		if h.Kind == app.KindApplicationSet {
			sets++
			continue
		}
		a, err := app.ParseApplication(j)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", p, i+1, err)
		}
		if n := c.String("name"); n == "" || a.Metadata.Name == n {
			apps = append(apps, a)
		}
	}
	if len(apps) == 0 {
		switch {
		case c.String("name") != "":
			return nil, fmt.Errorf("%s holds no Application named %s", p, c.String("name"))
		case sets > 0:
			return nil, fmt.Errorf("%s holds ApplicationSets only: kpipe argocd build-all expands them", p)
		}
		return nil, fmt.Errorf("%s holds no Argo CD Application (apiVersion argoproj.io/v1alpha1, kind Application)", p)
	}
	return apps, nil
}

// argocdRepos are the URLs naming this repository: its remotes, --repo-url,
// and, for `manifests` and `paths`, the one git repoURL an Application
// names when it names only one.
func argocdRepos(c *cli.Context, top string, apps ...*app.Application) *app.Repos {
	urls := append(fleet.Remotes(c.Context, top), c.StringSlice("repo-url")...)
	for _, a := range apps {
		spec := a.Spec
		spec.Normalize()
		seen := map[string]bool{}
		for _, s := range spec.GetSources() {
			if !s.IsHelm() && !s.IsOCI() && s.RepoURL != "" {
				seen[app.NormalizeGitURL(s.RepoURL)] = true
			}
		}
		if len(seen) == 1 {
			for _, s := range spec.GetSources() {
				if !s.IsHelm() && !s.IsOCI() && s.RepoURL != "" {
					urls = append(urls, s.RepoURL)
				}
			}
		}
	}
	return app.NewRepos(urls...)
}

// argocdApps reads the Applications of the file the command names and
// sets up their rendering from the repository: the source, and done,
// which closes the cache.
func argocdApps(c *cli.Context) ([]*app.Application, *fleet.Source, func(), error) {
	if c.NArg() != 1 {
		return nil, nil, nil, usage(c, "name one Application file (or - for standard input)")
	}
	settings, err := argocdSettings(c)
	if err != nil {
		return nil, nil, nil, err
	}
	apps, err := readApplications(c, c.Args().First())
	if err != nil {
		return nil, nil, nil, &exitError{code: 2, err: err}
	}
	tree, err := argocdRepo(c, ".")
	if err != nil {
		return nil, nil, nil, &exitError{code: 2, err: err}
	}
	argocdRevision(c, &settings, tree.Dir)
	ro, done, err := argocdEngine(c)
	if err != nil {
		return nil, nil, nil, err
	}
	return apps, &fleet.Source{Tree: tree, Repos: argocdRepos(c, tree.Dir, apps...), Renderer: render.New(ro), Settings: settings}, done, nil
}

// argocdRender renders a, or says why it cannot (exit status 3: not
// here; 1: Argo CD's error).
func argocdRender(c *cli.Context, src *fleet.Source, a *app.Application) (*fleet.Output, error) {
	out := src.Render(c.Context, a)
	name := a.InstanceName(src.Settings.ControllerNamespace)
	switch {
	case out.Skipped != "":
		return nil, &exitError{code: 3, err: fmt.Errorf("%s: not rendered: %s", name, out.Skipped)}
	case out.Err != "":
		return nil, fmt.Errorf("%s: %s", name, out.Err)
	}
	return out, nil
}

func runArgocdManifests(c *cli.Context) error {
	format := c.String("output")
	if format != "yaml" && format != "json" {
		return usage(c, "--output %q: want yaml or json", format)
	}
	apps, src, done, err := argocdApps(c)
	if err != nil {
		return err
	}
	defer done()
	w := c.App.Writer
	for i, a := range apps {
		out, err := argocdRender(c, src, a)
		if err != nil {
			return err
		}
		for _, cond := range out.Result.Conditions {
			fmt.Fprintf(c.App.ErrWriter, "Warning: %s: %s\n", a.InstanceName(src.Settings.ControllerNamespace), cond)
		}
		objs := out.Result.Manifests
		data := out.Manifests
		if c.Bool("normalized") {
			objs, data = out.Result.Normalized, out.Normalized
		}
		if format == "json" {
			if data, err = fleet.JSONLines(objs); err != nil {
				return err
			}
		} else if i > 0 && len(data) > 0 {
			data = append([]byte("---\n"), data...)
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return nil
}

func argocdPathsCommand() *cli.Command {
	return &cli.Command{
		Name:      "paths",
		Usage:     "print what an Application's manifest-generate-paths annotation should say",
		ArgsUsage: "APP.yaml",
		Description: `Renders the Application in APP.yaml and prints the value of its
argocd.argoproj.io/manifest-generate-paths annotation from what the
rendering read: the directories holding every file read (kustomizations,
their resources, patches and generator files, value files, the chart,
the .argocd-source files), those below another left out, ";"-joined. An
entry inside the source's path is relative to it ("." is the path itself),
another starts with "/" (from the repository's root). With it, Argo CD's
webhook refreshes the Application only for a commit that changes one of
those paths.`,
		Flags:  append(argocdFlags(), &cli.StringFlag{Name: "name", Usage: "the Application of this name, when the file holds several"}),
		Action: withProfile(runArgocdPaths),
	}
}

func runArgocdPaths(c *cli.Context) error {
	apps, src, done, err := argocdApps(c)
	if err != nil {
		return err
	}
	defer done()
	for _, a := range apps {
		out, err := argocdRender(c, src, a)
		if err != nil {
			return err
		}
		if len(apps) > 1 {
			fmt.Fprintf(c.App.Writer, "%s: ", a.InstanceName(src.Settings.ControllerNamespace))
		}
		fmt.Fprintln(c.App.Writer, strings.Join(fleet.Paths(a, src.Tree, out.Reads), ";"))
	}
	return nil
}

// relToRepo turns directories named on the command line (relative to the
// current directory) into slash paths from the repository's root.
func relToRepo(top string, dirs []string) ([]string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(cwd, d)
		}
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		rel, err := filepath.Rel(top, d)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return nil, fmt.Errorf("%s is outside the repository at %s", d, top)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}
