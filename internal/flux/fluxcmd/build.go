package fluxcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/internal/flux/postbuild"
	"github.com/kpipe/kpipe/internal/flux/render"
	"github.com/kpipe/kpipe/loaders"
)

// Env is where a command runs (render.CommandEnv: a type of a package
// that does not link pflag, so that the kpipe binary can hold one).
type Env = render.CommandEnv

// Build runs `kpipe flux build ARGS...` (args after "build"): the
// `kustomization` subcommand (alias `ks`), or help. It returns the exit
// status.
func Build(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 || (args[0] != "kustomization" && args[0] != "ks") {
		if len(args) > 0 && strings.HasPrefix(args[0], "-") && !isHelp(args[0]) {
			return fail(env, fmt.Errorf("unknown flag: %s", args[0]))
		}
		fmt.Fprint(env.Stdout, buildHelp)
		return 0
	}
	return buildKustomization(ctx, args[1:], env)
}

func isHelp(a string) bool { return a == "-h" || a == "--help" }

const buildHelp = `The build command is used to build flux resources.

Usage:
  kpipe flux build [command]

Available Commands:
  kustomization Build Kustomization

Flags:
  -h, --help   help for build

Use "kpipe flux build [command] --help" for more information about a command.
`

const kustomizationHelp = `Build a Flux Kustomization as flux build kustomization does, offline (--dry-run):
generate its kustomization, build it as kustomize-controller does, substitute
variables, label owners, mask SOPS data, and print the objects.

Usage:
  kpipe flux build kustomization NAME --path DIR --kustomization-file FILE --dry-run [flags]

Aliases:
  kustomization, ks

Flags:
      --dry-run                        Dry run mode (required: kpipe reads no cluster).
  -h, --help                           help for kustomization
      --ignore-paths strings           set paths to ignore in .gitignore format
      --in-memory-build                Use in-memory filesystem during build (kpipe never writes into --path).
      --kustomization-file string      Path to the Flux Kustomization YAML file.
      --local-sources stringToString   Comma-separated list of repositories in format: Kind/namespace/name=path (default [])
      --path string                    Path to the manifests location.
  -r, --recursive                      Recursively build Kustomizations
      --strict-substitute              When enabled, the post build substitutions will fail if a var without a default value is declared in files but is missing from the input vars.
      --no-cache                       (kpipe) neither read nor write kpipe's cache

Global Flags:
  -n, --namespace string               the namespace of the Flux Kustomization (default "flux-system")
      --timeout duration               accepted; kpipe makes no cluster request
  (flux's kubeconfig flags are accepted and ignored)
`

// flags are the parsed flags of `flux build kustomization`.
type flags struct {
	path, ksFile, namespace             string
	ignorePaths                         []string
	localSources                        map[string]string
	dryRun, strict, recursive, inMemory bool
	noCache, help, nsFollowsKubeContext bool
	timeout                             time.Duration
	namespaceSet                        bool
	ignored                             map[string]*string
	ignoredArrays                       map[string]*[]string
	ignoredBools                        map[string]*bool
	qps                                 float32
	burst                               int
}

// newFlagSet returns flux build kustomization's flags (and flux's global
// ones) bound to f.
func newFlagSet(f *flags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("kustomization", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&f.path, "path", "", "Path to the manifests location.")
	fs.StringVar(&f.ksFile, "kustomization-file", "", "Path to the Flux Kustomization YAML file.")
	fs.StringSliceVar(&f.ignorePaths, "ignore-paths", nil, "set paths to ignore in .gitignore format")
	fs.BoolVar(&f.dryRun, "dry-run", false, "Dry run mode.")
	fs.BoolVar(&f.strict, "strict-substitute", false, "fail on a variable without a value")
	fs.BoolVarP(&f.recursive, "recursive", "r", false, "Recursively build Kustomizations")
	fs.StringToStringVar(&f.localSources, "local-sources", map[string]string{}, "Kind/namespace/name=path,...")
	fs.BoolVar(&f.inMemory, "in-memory-build", false, "Use in-memory filesystem during build.")
	fs.BoolVarP(&f.help, "help", "h", false, "help for kustomization")
	fs.BoolVar(&f.noCache, "no-cache", false, "neither read nor write kpipe's cache")
	// flux's global flags: -n matters; the others are accepted (kpipe
	// makes no cluster request).
	fs.StringVarP(&f.namespace, "namespace", "n", flux.DefaultNamespace, "the namespace scope")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "timeout for this operation")
	fs.BoolVar(&f.nsFollowsKubeContext, "ns-follows-kube-context", false, "use the namespace from the kubeconfig context")
	f.ignored = map[string]*string{}
	for _, name := range []string{"as", "as-uid", "cache-dir", "certificate-authority", "client-certificate", "client-key",
		"cluster", "context", "kubeconfig", "server", "tls-server-name", "token", "user"} {
		f.ignored[name] = fs.String(name, "", "accepted, not used")
	}
	f.ignoredArrays = map[string]*[]string{}
	for _, name := range []string{"as-group", "as-user-extra"} {
		f.ignoredArrays[name] = fs.StringArray(name, nil, "accepted, not used")
	}
	f.ignoredBools = map[string]*bool{}
	for _, name := range []string{"disable-compression", "insecure-skip-tls-verify", "verbose"} {
		f.ignoredBools[name] = fs.Bool(name, false, "accepted, not used")
	}
	fs.Float32Var(&f.qps, "kube-api-qps", 50, "accepted, not used")
	fs.IntVar(&f.burst, "kube-api-burst", 300, "accepted, not used")
	return fs
}

// namespaceDefault is flux's -n default: $FLUX_SYSTEM_NAMESPACE when it
// is a DNS label (flux warns and ignores it otherwise), else flux-system.
func namespaceDefault(getenv func(string) string, stderr io.Writer) string {
	ns := getenv("FLUX_SYSTEM_NAMESPACE")
	if ns == "" {
		return flux.DefaultNamespace
	}
	if !flux.IsDNSLabel(ns) {
		fmt.Fprintln(stderr, "⚠️", fmt.Sprintf(" ignoring invalid FLUX_SYSTEM_NAMESPACE: %q", ns))
		return flux.DefaultNamespace
	}
	return ns
}

func buildKustomization(ctx context.Context, args []string, env Env) int {
	getenv := env.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var f flags
	fs := newFlagSet(&f)
	f.namespace = namespaceDefault(getenv, env.Stderr)
	fs.Lookup("namespace").DefValue = f.namespace
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(env.Stdout, kustomizationHelp)
			return 0
		}
		return fail(env, err)
	}
	if f.help {
		fmt.Fprint(env.Stdout, kustomizationHelp)
		return 0
	}
	fsys := env.FS
	if fsys == nil {
		fsys = loaders.Disk
	}
	a := flux.Args{Path: f.path, KustomizationFile: f.ksFile, Namespace: f.namespace, DryRun: f.dryRun}
	if fs.NArg() > 0 {
		a.Name = fs.Arg(0) // (more arguments are ignored, as by flux)
	}
	path, err := a.Check(fsys, env.Cwd)
	if err != nil {
		return fail(env, err)
	}
	ksFile := f.ksFile
	if !filepath.IsAbs(ksFile) {
		ksFile = filepath.Join(env.Cwd, ksFile)
	}
	data, _, err := fsys.ReadFile(ksFile, true)
	if err != nil {
		return fail(env, fmt.Errorf("invalid kustomization file %q", f.ksFile))
	}
	k, err := flux.Find(data, f.ksFile, a.Name, f.namespace)
	if err != nil {
		return fail(env, err)
	}

	eo := engine.Options{Jobs: env.Jobs}
	if eo.Jobs < 1 {
		eo.Jobs = runtime.NumCPU()
	}
	if env.Cache != nil {
		c, done := env.Cache(f.noCache)
		defer done()
		eo.Cache = c
	}
	o := render.Options{FS: env.FS, IgnorePaths: f.ignorePaths, Strict: f.strict, InMemoryBuild: f.inMemory,
		Engine: eo, Remote: env.Fetcher}
	var objs []map[string]any
	warn := func(r *render.Rendering) {
		for _, w := range r.Warnings {
			fmt.Fprintln(env.Stderr, w)
		}
	}
	if f.recursive {
		objs, err = render.Recursive(ctx, k, path, o, render.RecursiveOptions{Cwd: env.Cwd, LocalSources: f.localSources,
			Each: func(_ *flux.Kustomization, r *render.Rendering) { warn(r) }})
	} else {
		// One Flux Kustomization: taken from its record when nothing it
		// read changed (package cluster), else built.
		res := cluster.One(ctx, k, path, cluster.Options{FS: env.FS, Cwd: env.Cwd, SourceRoot: env.Cwd, DryRun: true,
			IgnorePaths: f.ignorePaths, Strict: f.strict, InMemoryBuild: f.inMemory, Engine: eo, Remote: env.Fetcher})
		for _, w := range res.Warnings {
			fmt.Fprintln(env.Stderr, w)
		}
		if res.Err != "" {
			return fail(env, errors.New(res.Err))
		}
		if _, err := env.Stdout.Write(res.YAML); err != nil {
			return fail(env, err)
		}
		return 0
	}
	if err != nil {
		return fail(env, err)
	}
	out, err := postbuild.Encode(objs)
	if err != nil {
		return fail(env, err)
	}
	if _, err := env.Stdout.Write(out); err != nil {
		return fail(env, err)
	}
	return 0
}

// fail prints err as flux does and returns flux's exit status.
func fail(env Env, err error) int {
	fmt.Fprintln(env.Stderr, "✗", err.Error())
	return 1
}
