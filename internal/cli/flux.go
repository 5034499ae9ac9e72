package cli

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/flux/fluxcmd"
)

// fluxCommand is `kpipe flux`: what Flux applies, rendered on kpipe's
// engine (docs/flux.md). `kpipe flux build kustomization` takes flux's own
// arguments, parsed as flux parses them (package fluxcmd; what its own
// parser declines, ext.Set.FluxFlags: pflag), so that a script swaps `flux`
// for `kpipe flux`.
func fluxCommand() *cli.Command {
	return &cli.Command{
		Name:  "flux",
		Usage: "render Flux Kustomizations as Flux does (flux build kustomization, offline; a whole cluster with build-all)",
		Subcommands: []*cli.Command{
			{
				Name:            "build",
				Usage:           "flux build kustomization NAME --path DIR --kustomization-file FILE --dry-run [flux's flags]",
				SkipFlagParsing: true,
				Action:          runFluxBuild,
			},
			fluxBuildAllCommand(),
		},
	}
}

func runFluxBuild(c *cli.Context) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	var closeStore func()
	env := fluxcmd.Env{Stdout: c.App.Writer, Stderr: c.App.ErrWriter, Cwd: cwd,
		Cache: func(noCache bool) (engine.Cache, func()) {
			if noCache {
				return engine.Cache{}, func() {}
			}
			dir, err := cache.DefaultDir()
			if err != nil {
				return engine.Cache{}, func() {}
			}
			// (A cache that cannot be used builds without one, silently:
			// flux's stderr has no place for kpipe's warnings.)
			store := cache.Open(c.Context, cache.Options{Dir: dir, MaxSize: 2 << 30, Pack: true, Warn: func(string) {}})
			var opts engine.Options
			prepareCache(&opts, store)
			opts.Cache.Store = store
			closeStore = func() { closeCache(store, &opts) }
			return opts.Cache, closeStore
		},
	}
	dir, temporary := fluxFetchDir()
	if temporary {
		defer os.RemoveAll(dir)
	}
	env.Fetcher = fetch.New(fetch.Options{Dir: dir, Net: extensions(c).Net, BeforeFetch: func() { armStop(c.Context) }})
	env.ParseFlags = extensions(c).FluxFlags
	if code := fluxcmd.Build(c.Context, c.Args().Slice(), env); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// fluxFetchDir is where remote bases and files are kept: the cache's, or
// a temporary directory (removed after the run) without one.
func fluxFetchDir() (dir string, temporary bool) {
	if d, err := cache.DefaultDir(); err == nil {
		return filepath.Join(d, "remote"), false
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return filepath.Join(os.TempDir(), "kpipe-remote-"+hex.EncodeToString(b[:])), true
}
