package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/buildid"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/plugins"
)

func buildCommand() *cli.Command {
	return &cli.Command{
		Name:      "build",
		Usage:     "build a kustomization target from a directory",
		ArgsUsage: "[DIR or git URL]",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write output to this file, or to this existing directory one file per resource"},
			explainFlag(),
		}, commonBuildFlags()...),
			// Flags of kustomize build whose features kpipe does not have yet.
			&cli.StringSliceFlag{Name: "mount", Usage: "not supported yet"},
			&cli.BoolFlag{Name: "network", Usage: "not supported yet"},
			&cli.StringFlag{Name: "network-name", Usage: "not supported yet"},
			&cli.BoolFlag{Name: "as-current-user", Usage: "not supported yet"},
		),
		Action: withProfile(runBuild),
	}
}

func runBuild(c *cli.Context) error {
	ctx := c.Context
	if err := notSupported(c, "mount", "network", "network-name", "as-current-user"); err != nil {
		return err
	}
	if c.NArg() > 1 {
		return fmt.Errorf("specify one path to a kustomization directory, got %d: %s", c.NArg(), strings.Join(c.Args().Slice(), " "))
	}
	dir := "."
	if c.NArg() == 1 {
		dir = c.Args().First()
	}
	heap := softMemoryLimit()
	defer heap.Done()
	ph := startPhases(ctx)
	restriction, opts, err := buildOptions(c)
	if err != nil {
		return err
	}
	store, err := openCache(c)
	if err != nil {
		return err
	}
	prepareCache(&opts, store)
	defer func() {
		closeCache(store, &opts)
		ph.done("close cache")
	}()
	remoteJobs(c, &opts, store)
	ph.done("open cache")
	fast := newBuildRecord(c, store, opts, restriction, dir)
	out, warnings, ok := fast.lookup()
	ph.done("lookup")
	if ok {
		// Every input the last build read is unchanged: print its
		// warnings and output.
		defer out.Close()
		if !c.Bool("quiet") {
			for _, w := range warnings {
				opts.Warn(w)
			}
		}
		if c.Bool("explain") {
			fmt.Fprintf(c.App.ErrWriter, "explain: %s: up to date: every input its last build read is unchanged; output from the cache\n", dir)
		}
		defer ph.done("output")
		if c.String("output") == "" {
			_, err := out.WriteTo(c.App.Writer)
			return err
		}
		armStop(ctx)
		y, err := out.Bytes()
		if err != nil {
			return err
		}
		return writeOutput(c, engine.Result{YAML: y, Cached: true})
	}
	// From here on, plugins, helm and fetches may run: a signal stops
	// them and their temporary files are removed (see stopOnSignal). A
	// build that can run none listens from its first fetch on
	// (newFetcher), or before it writes an output a signal could cut
	// short; until then a signal ends it where it is, leaving no process
	// and no file but the cache's own, which a cut-short write leaves
	// whole or absent.
	if mayRunProcesses(c) {
		armStop(ctx)
		ph.done("listen for signals")
	}
	opts.Explain = c.Bool("explain")
	if opts.Explain && store == nil {
		fmt.Fprintln(c.App.ErrWriter, "explain: no cache (--no-cache, or it cannot be used): every node is built")
	}
	opts.Warn = fast.recordWarnings(opts.Warn)
	warnLoad := opts.Warn
	if c.Bool("quiet") {
		warnLoad = fast.recordWarnings(func(string) {}) // kept for the next build, not printed
	}
	fetcher, doneFetching := newFetcher(c, store)
	defer doneFetching()
	opts.Cache.Store = store
	b, results := engine.Build(ctx, engine.Request{Dirs: []string{dir}, Options: opts,
		Load: engine.LoadOptions{Restriction: restriction, Remote: fetcher},
		Loaded: func(g *engine.Graph) {
			ph.done("load")
			sizeHeap(heap, g)
			for _, w := range g.Warnings {
				warnLoad(w)
			}
		}})
	res := results[0]
	ph.done("build")
	if opts.Explain {
		printExplain(c.App.ErrWriter, b.Explain())
	}
	if res.Err != nil {
		return res.Err
	}
	if len(res.YAML) > atomicWrite {
		armStop(ctx) // a signal while it is written ends kpipe after it
	}
	if err := writeOutput(c, res); err != nil {
		return err
	}
	ph.done("output")
	fast.record(b, b.Graph().Roots[0], res)
	ph.done("record")
	return nil
}

// mayRunProcesses reports whether the flags let a build start a process,
// make a temporary file or write a file other than the cache's: plugins
// and KRM functions (--enable-exec, --enable-alpha-plugins), helm
// (--enable-helm), uploads to a remote cache, an output file, profiles.
// Without any of these, only fetches of remote bases and files start
// processes (git) or make files, and they listen for stop signals
// themselves (newFetcher). Listening costs a cold build of a small root
// about 0.2 ms of its 4 (two threads), which kpipe build spares when it
// can.
func mayRunProcesses(c *cli.Context) bool {
	for _, f := range []string{"enable-exec", "enable-alpha-plugins", "enable-helm", "remote-cache", "output", "cpuprofile", "memprofile", "trace"} {
		if c.IsSet(f) {
			return true
		}
	}
	return false
}

// atomicWrite is the most output one write to stdout delivers whole or
// not at all, whatever signal comes (PIPE_BUF, for a pipe): a larger one
// is written with kpipe listening for stop signals, so that one that
// comes meanwhile ends kpipe after the output, not inside it.
const atomicWrite = 4096

// explainFlag is --explain of build and build-all (a new flag for each
// command: a flag keeps the value it parsed).
func explainFlag() cli.Flag {
	return &cli.BoolFlag{Name: "explain", Usage: "say for each node whether it came from the cache and, if not, which inputs changed since its last build with --explain (only such runs keep the records it compares with)"}
}

// printExplain prints --explain's lines: one per node, then one per
// cached stage of it, with the inputs that changed.
func printExplain(w io.Writer, list []engine.NodeExplain) {
	cwd, _ := os.Getwd()
	name := func(p string) string {
		if rel, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
		return p
	}
	why := func(changed []engine.InputChange, first bool) string {
		switch {
		case first:
			return ": no earlier build recorded (records are kept by runs with --explain)"
		case len(changed) == 0:
			return ""
		}
		parts := make([]string, len(changed))
		for i, c := range changed {
			parts[i] = c.String()
		}
		return ": " + strings.Join(parts, ", ")
	}
	for _, e := range list {
		line := e.Status + why(e.Changed, e.NoEarlierRecord)
		if e.NoEarlierRecord && e.Cache != "" {
			// Nothing recorded here to compare with: what the cache
			// missed is the reason (a copy of the tree, a remote cache).
			line += "; " + e.Cache
		}
		fmt.Fprintf(w, "explain: %s: %s\n", name(e.Node), line)
		for _, s := range e.Stages {
			fmt.Fprintf(w, "explain: %s: stage %s: %s%s\n", name(e.Node), s.Stage, s.Status, why(s.Changed, s.NoEarlierRecord))
		}
	}
}

// commonBuildFlags are the flags of build and build-all. A repeatable
// string flag's value is split at commas, each part trimmed of spaces:
// --env "A=1, B=2" is A=1 and B=2.
func commonBuildFlags() []cli.Flag {
	return append(append(profileFlags(),
		&cli.StringFlag{Name: "load-restrictor", Value: "LoadRestrictionsRootOnly", Usage: "LoadRestrictionsRootOnly or LoadRestrictionsNone"},
		&cli.StringFlag{Name: "reorder", Usage: "legacy or none (deprecated: use sortOptions in kustomization.yaml)"},
		&cli.BoolFlag{Name: "enable-alpha-plugins", Usage: "enable plugins other than the builtins"},
		&cli.BoolFlag{Name: "enable-exec", Usage: "enable KRM functions that run executables, and KEP-993 plugins found on PATH"},
		&cli.BoolFlag{Name: "enable-helm", Usage: "enable helm chart inflation (helmCharts)"},
		&cli.StringFlag{Name: "helm-command", Value: "helm", Usage: "the helm executable to run"},
		&cli.StringSliceFlag{Name: "helm-api-versions", Usage: "Kubernetes api versions helm template passes to .Capabilities.APIVersions (for charts that set none)"},
		&cli.StringFlag{Name: "helm-kube-version", Usage: "the Kubernetes version helm template passes to .Capabilities.KubeVersion (for charts that set none)"},
		&cli.BoolFlag{Name: "helm-debug", Usage: "run helm template with --debug"},
		&cli.BoolFlag{Name: "enable-managedby-label", Usage: "add app.kubernetes.io/managed-by to every resource"},
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "build at most this many kustomizations at once (default with --remote-cache: at least 8)"},
		&cli.StringSliceFlag{Name: "env", Aliases: []string{"e"}, Usage: "KEY=VALUE, or KEY to pass from the environment, for KRM functions (repeatable)"},
		&cli.DurationFlag{Name: "plugin-timeout", Value: plugins.DefaultTimeout, Usage: "kill a plugin that runs longer than this"},
		&cli.BoolFlag{Name: "no-cache-plugins", Usage: "never cache the output of plugins (for plugins that are not pure functions of their input)"},
		&cli.BoolFlag{Name: "verify-cache", Usage: "re-run cached stages (and plugins twice) and fail when an output differs"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "do not print the kustomization files' warnings (deprecated fields)"},
	), cacheFlags()...)
}

// buildOptions reads the common build flags.
func buildOptions(c *cli.Context) (loaders.Restriction, engine.Options, error) {
	restriction, err := loaders.ParseRestriction(c.String("load-restrictor"))
	if err != nil {
		return 0, engine.Options{}, err
	}
	reorder := c.String("reorder")
	if c.IsSet("reorder") {
		fmt.Fprintln(c.App.ErrWriter, "Flag --reorder has been deprecated, use the new 'sortOptions' field in kustomization.yaml instead.")
		if reorder != "legacy" && reorder != "none" {
			return 0, engine.Options{}, fmt.Errorf("illegal flag value --reorder %s; legal values: [legacy none]", reorder)
		}
	}
	return restriction, engine.Options{
		Jobs:               c.Int("jobs"),
		Reorder:            reorder,
		ManagedByLabel:     c.Bool("enable-managedby-label"),
		EnableAlphaPlugins: c.Bool("enable-alpha-plugins"),
		EnableExec:         c.Bool("enable-exec"),
		EnableHelm:         c.Bool("enable-helm"),
		PluginTimeout:      c.Duration("plugin-timeout"),
		FnEnv:              c.StringSlice("env"),
		GoPlugins:          extensions(c).GoPlugins,
		NoCachePlugins:     c.Bool("no-cache-plugins"),
		VerifyCache:        c.Bool("verify-cache"),
		Helm: engine.HelmOptions{Command: c.String("helm-command"), APIVersions: c.StringSlice("helm-api-versions"),
			KubeVersion: c.String("helm-kube-version"), Debug: c.Bool("helm-debug")},
		Warn:   func(msg string) { fmt.Fprintln(c.App.ErrWriter, msg) },
		Events: profileEvents(c.Context),
	}, nil
}

// prepareCache sets up the file index of the store (nil for none) in opts
// and the version salted into every cache key.
func prepareCache(opts *engine.Options, store *cache.Store) {
	files := store.FileIndex()
	opts.Cache = engine.Cache{Files: files}
	if store != nil {
		opts.Cache.Version = cacheVersion(files)
	}
}

// cacheVersion is the version salted into every cache key: kpipe's version
// plus the identity of the running executable, so that a rebuilt kpipe (a
// development build keeps its version string) never trusts results of a
// different binary. The identity is the Go build ID when the executable
// has one, else the digest of its content (cheap after the first run,
// through the stat index).
func cacheVersion(files *cache.FileIndex) string {
	if runtime.GOOS == "linux" {
		// The running executable itself, even if its path was replaced
		// since; without os.Executable's readlink and EvalSymlinks' walk.
		if id := buildid.GoBuildID("/proc/self/exe"); id != "" {
			return Version + "+" + id
		}
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return Version + "+unknown-binary-" + fmt.Sprint(time.Now().UnixNano()) // never matches: no cache hits
	}
	if id := buildid.GoBuildID(exe); id != "" {
		return Version + "+" + id
	}
	d, ok := files.Digest(exe)
	if !ok {
		return Version + "+unknown-binary-" + fmt.Sprint(time.Now().UnixNano())
	}
	return fmt.Sprintf("%s+%x", Version, d[:])
}

// closeCache saves the file index and closes the store.
func closeCache(store *cache.Store, opts *engine.Options) {
	saveFileIndex(opts)
	closeStore(store, opts)
}

// saveFileIndex writes the file index's new records to the cache.
func saveFileIndex(opts *engine.Options) {
	if opts.Cache.Files != nil {
		_ = opts.Cache.Files.Save("")
	}
}

// closeStore records the run's statistics and closes the store (which may
// be nil).
func closeStore(store *cache.Store, opts *engine.Options) {
	if store == nil {
		return
	}
	store.RecordRun()
	if err := store.Close(); err != nil {
		opts.Warn("Warning: cache: closing: " + err.Error())
	}
}

// writeOutput writes the build's output to stdout, a file, or a directory,
// rendering everything before writing anything.
func writeOutput(c *cli.Context, res engine.Result) error {
	if err := c.Context.Err(); err != nil {
		// Stopped by a signal after the build: nothing is written.
		return err
	}
	out := c.String("output")
	if out == "" {
		_, err := c.App.Writer.Write(res.YAML)
		return err
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		if res.Resources == nil && len(res.YAML) > 0 {
			// Output from the cache is kept as YAML only.
			rs, err := resyaml.Decode(res.YAML)
			if err != nil {
				return err
			}
			res.Resources = rs
		}
		return output.WriteDir(out, res.Resources)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)) {
		return fmt.Errorf("--output %s: no such directory (for one file per resource, create the directory first)", out)
	}
	if dir := filepath.Dir(out); dir != "." {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("--output %s: the directory %s does not exist", out, dir)
		}
	}
	return output.WriteFileAtomic(out, res.YAML)
}
