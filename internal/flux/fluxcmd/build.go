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

	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/internal/flux/postbuild"
	"github.com/kpipe/kpipe/internal/flux/render"
	"github.com/kpipe/kpipe/loaders"
)

// Env is where `kpipe flux build kustomization` runs.
type Env struct {
	Stdout, Stderr io.Writer
	// Cwd is the working directory relative paths are taken from.
	Cwd string
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
	// FS is the tree (nil: loaders.Disk).
	FS loaders.FS
	// Cache opens kpipe's cache for the build (nil, or off: none); the
	// function returned closes it. noCache is --no-cache.
	Cache func(noCache bool) (engine.Cache, func())
	// Fetcher fetches remote bases and files (nil: they fail).
	Fetcher *fetch.Fetcher
	// Jobs bounds the engine's concurrency (< 1: the number of CPUs).
	Jobs int
	// ParseFlags parses the command lines ParseCommon declines, as flux
	// does (fluxflags.Parse; nil: they fail).
	ParseFlags Parser
}

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

func buildKustomization(ctx context.Context, args []string, env Env) int {
	getenv := env.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	ns, warning := namespaceDefault(getenv)
	f := NewFlags(ns)
	positional, err := parse(args, &f, env.ParseFlags)
	if warning != "" {
		fmt.Fprintln(env.Stderr, warning)
	}
	if err != nil {
		if errors.Is(err, ErrHelp) {
			fmt.Fprint(env.Stdout, kustomizationHelp)
			return 0
		}
		return fail(env, err)
	}
	if f.Help {
		fmt.Fprint(env.Stdout, kustomizationHelp)
		return 0
	}
	fsys := env.FS
	if fsys == nil {
		fsys = loaders.Disk
	}
	a := flux.Args{Path: f.Path, KustomizationFile: f.KustomizationFile, Namespace: f.Namespace, DryRun: f.DryRun}
	if len(positional) > 0 {
		a.Name = positional[0] // (more arguments are ignored, as by flux)
	}
	path, err := a.Check(fsys, env.Cwd)
	if err != nil {
		return fail(env, err)
	}
	ksFile := f.KustomizationFile
	if !filepath.IsAbs(ksFile) {
		ksFile = filepath.Join(env.Cwd, ksFile)
	}
	data, _, err := fsys.ReadFile(ksFile, true)
	if err != nil {
		return fail(env, fmt.Errorf("invalid kustomization file %q", f.KustomizationFile))
	}
	k, err := flux.Find(data, f.KustomizationFile, a.Name, f.Namespace)
	if err != nil {
		return fail(env, err)
	}

	eo := engine.Options{Jobs: env.Jobs}
	if eo.Jobs < 1 {
		eo.Jobs = runtime.NumCPU()
	}
	if env.Cache != nil {
		c, done := env.Cache(f.NoCache)
		defer done()
		eo.Cache = c
	}
	o := render.Options{FS: env.FS, IgnorePaths: f.IgnorePaths, Strict: f.StrictSubstitute, InMemoryBuild: f.InMemoryBuild,
		Engine: eo, Remote: env.Fetcher}
	var objs []map[string]any
	warn := func(r *render.Rendering) {
		for _, w := range r.Warnings {
			fmt.Fprintln(env.Stderr, w)
		}
	}
	if f.Recursive {
		objs, err = render.Recursive(ctx, k, path, o, render.RecursiveOptions{Cwd: env.Cwd, LocalSources: f.LocalSources,
			Each: func(_ *flux.Kustomization, r *render.Rendering) { warn(r) }})
	} else {
		// One Flux Kustomization: taken from its record when nothing it
		// read changed (package cluster), else built.
		res := cluster.One(ctx, k, path, cluster.Options{FS: env.FS, Cwd: env.Cwd, SourceRoot: env.Cwd, DryRun: true,
			IgnorePaths: f.IgnorePaths, Strict: f.StrictSubstitute, InMemoryBuild: f.InMemoryBuild, Engine: eo, Remote: env.Fetcher})
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

// parse parses args into f: ParseCommon, or full for what it declines.
func parse(args []string, f *Flags, full Parser) ([]string, error) {
	if positional, ok := ParseCommon(args, f); ok {
		return positional, nil
	}
	if full == nil {
		return nil, errors.New("kpipe cannot parse these flags: it has no flag parser of flux's (Env.ParseFlags)")
	}
	return full(args, f)
}

// fail prints err as flux does and returns flux's exit status.
func fail(env Env, err error) int {
	fmt.Fprintln(env.Stderr, "✗", err.Error())
	return 1
}
