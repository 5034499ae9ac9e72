package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/cache/remote"
	"github.com/kpipe/kpipe/internal/bytesize"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
)

// cacheFlags are the flags of every command that uses the cache.
func cacheFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cache-dir", Usage: "cache directory (default $XDG_CACHE_HOME/kpipe or ~/.cache/kpipe)"},
		&cli.BoolFlag{Name: "no-cache", Usage: "neither read nor write the cache"},
		&cli.BoolFlag{Name: "offline", Usage: "make no network request: remote bases, files and helm charts come from the cache, or the build fails naming the URL"},
		&cli.StringFlag{Name: "cache-max-size", Value: "2GiB", Usage: "bound the cache directory to this size on disk (as du counts it)"},
		&cli.StringFlag{Name: "remote-cache", EnvVars: []string{"KPIPE_REMOTE_CACHE"}, Usage: "a shared cache behind the local one: http(s)://HOST/PATH (Bazel HTTP cache protocol; a bearer token from $KPIPE_REMOTE_CACHE_TOKEN or the URL's user name) or s3://BUCKET/PREFIX (AWS credentials from the environment); read-only unless --remote-cache-write"},
		&cli.BoolFlag{Name: "remote-cache-write", Usage: "upload what this run builds to --remote-cache (for trusted runs only, e.g. CI on the main branch)"},
		&cli.BoolFlag{Name: "remote-cache-sensitive", Usage: "with --remote-cache-write, upload sensitive entries too (Secrets' data, plugin and function output)"},
		&cli.DurationFlag{Name: "remote-cache-timeout", Value: remote.DefaultTimeout, Usage: "give up on the remote cache when a request takes longer than this"},
	}
}

// remoteMinJobs is the least --jobs with a remote cache when --jobs is not
// given: a lookup waits on the network more than on the CPU.
const remoteMinJobs = 8

// remoteJobs raises the default --jobs to remoteMinJobs when store has a
// remote cache.
func remoteJobs(c *cli.Context, opts *engine.Options, store *cache.Store) {
	if store.RemoteStats().URL != "" && !c.IsSet("jobs") && opts.Jobs < remoteMinJobs {
		opts.Jobs = remoteMinJobs
	}
}

// setRemote puts the --remote-cache behind store. A URL that cannot be
// used is an error; a server that fails later is one warning.
func setRemote(c *cli.Context, store *cache.Store) error {
	url := c.String("remote-cache")
	if url == "" {
		for _, f := range []string{"remote-cache-write", "remote-cache-sensitive"} {
			if c.Bool(f) {
				return usage(c, "--%s needs --remote-cache URL", f)
			}
		}
		return nil
	}
	if c.Bool("no-cache") {
		return usage(c, "--remote-cache needs the local cache (it writes what it fetches there): drop --no-cache")
	}
	if c.Bool("remote-cache-sensitive") && !c.Bool("remote-cache-write") {
		return usage(c, "--remote-cache-sensitive needs --remote-cache-write")
	}
	b, err := extensions(c).RemoteCache(url, remote.Options{Timeout: c.Duration("remote-cache-timeout"), Token: os.Getenv(remote.TokenEnv)})
	if err != nil {
		return err
	}
	store.SetRemote(c.Context, cache.RemoteOptions{Backend: b, Write: c.Bool("remote-cache-write"), Sensitive: c.Bool("remote-cache-sensitive")})
	return nil
}

// cacheDir returns the cache directory the flags ask for, or "" with
// --no-cache. It fails when there is no directory to default to (neither
// XDG_CACHE_HOME nor a home directory): `kpipe cache` then fails, and the
// commands that only use the cache build without one (openCache).
func cacheDir(c *cli.Context) (string, error) {
	if c.Bool("no-cache") {
		return "", nil
	}
	if dir := c.String("cache-dir"); dir != "" {
		return dir, nil
	}
	return cache.DefaultDir()
}

// openCache opens the cache the flags ask for; nil with --no-cache or when
// the cache cannot be found or used (after one warning: a process without
// HOME, as a systemd unit or some containers run, builds as kustomize
// does). Opening reads nothing but the directory's marker, and never waits
// for another process.
func openCache(c *cli.Context) (*cache.Store, error) {
	warn := func(msg string) { fmt.Fprintln(c.App.ErrWriter, "Warning: "+msg) }
	dir, err := cacheDir(c)
	if err != nil {
		warn("cache: " + err.Error() + "; building without a cache")
		dir, err = "", nil
	}
	if dir == "" {
		return nil, setRemote(c, nil) // flags checked even with --no-cache
	}
	var max int64
	if v := c.String("cache-max-size"); v != "" {
		m, err := parseSize(v)
		if err != nil {
			return nil, fmt.Errorf("--cache-max-size: %w", err)
		}
		max = m
	}
	store := cache.Open(c.Context, cache.Options{
		Dir: dir, MaxSize: max, Pack: true, Warn: warn,
	})
	if err := setRemote(c, store); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// parseSize reads sizes such as "500MB", "2GiB" or "1048576" (as
// kpipe-cache-server does).
func parseSize(s string) (int64, error) { return bytesize.Parse(s) }

func cacheCommand() *cli.Command {
	open := func(c *cli.Context) (*cache.Store, error) {
		if _, err := cacheDir(c); err != nil {
			return nil, err // no directory to manage
		}
		s, err := openCache(c)
		if err == nil && s == nil {
			err = fmt.Errorf("the cache is not available")
		}
		return s, err
	}
	dirFlag := func(more ...cli.Flag) []cli.Flag { return append([]cli.Flag{cacheFlags()[0]}, more...) }
	return &cli.Command{
		Name:  "cache",
		Usage: "inspect or manage kpipe's build cache",
		Subcommands: []*cli.Command{
			cacheServeCommand(),
			cachePushCommand(),
			{
				Name:  "stats",
				Usage: "print the cache's entries, size and the last run's hit rate",
				Flags: dirFlag(&cli.BoolFlag{Name: "json", Usage: "print JSON"}),
				Action: func(c *cli.Context) error {
					s, err := open(c)
					if err != nil {
						return err
					}
					defer s.Close()
					info, err := s.Info()
					if err != nil {
						return err
					}
					if c.Bool("json") {
						b, _ := json.MarshalIndent(info, "", "  ")
						fmt.Fprintln(c.App.Writer, string(b))
						return nil
					}
					fmt.Fprintf(c.App.Writer, "directory: %s\nentries:   %d (values up to 16 KiB inline; %d larger ones in files of their own, shared by equal values)\nsize:      %s\n",
						info.Dir, info.Entries, info.Blobs, humanSize(info.Bytes))
					if r := info.LastRun; r != nil {
						fmt.Fprintf(c.App.Writer, "last run:  %s: %d hits, %d misses (hit rate %.1f%%), %d writes\n",
							r.Time.Format(time.RFC3339), r.Hits, r.Misses, 100*r.HitRate(), r.Writes)
					}
					return nil
				},
			},
			{
				Name:  "prune",
				Usage: "delete the least recently used entries until the cache directory takes at most --max-size on disk (as du counts it)",
				Flags: dirFlag(&cli.StringFlag{Name: "max-size", Usage: "size to prune to, e.g. 500MB (required)"}),
				Action: func(c *cli.Context) error {
					if err := required(c, "max-size"); err != nil {
						return err
					}
					max, err := parseSize(c.String("max-size"))
					if err != nil {
						return fmt.Errorf("--max-size: %w", err)
					}
					s, err := open(c)
					if err != nil {
						return err
					}
					defer s.Close()
					n, err := s.Prune(max)
					if err != nil {
						return err
					}
					info, err := s.Info()
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "removed %d entries; %s now takes %s on disk\n", n, s.Dir(), humanSize(info.Bytes))
					if info.Bytes > max {
						fmt.Fprintf(c.App.ErrWriter, "kpipe: the cache is still over the %s asked for: %s of it is the cache's directories and state files, which pruning keeps (%d entries left); kpipe cache clear removes everything\n",
							humanSize(max), humanSize(info.Kept), info.Entries)
					}
					return nil
				},
			},
			{
				Name:  "clear",
				Usage: "delete every file kpipe wrote in the cache directory (works on a damaged cache)",
				Flags: dirFlag(),
				Action: func(c *cli.Context) error {
					dir, err := cacheDir(c)
					if err != nil {
						return err
					}
					removed, left, err := cache.Clear(dir)
					if err != nil {
						return err
					}
					// Remote bases, files and charts (see newFetcher).
					if n, err := fetch.Clear(filepath.Join(dir, "remote")); err != nil {
						return fmt.Errorf("clearing %s: %w", filepath.Join(dir, "remote"), err)
					} else if n > 0 {
						left = slices.DeleteFunc(left, func(name string) bool { return name == "remote" })
						fmt.Fprintf(c.App.Writer, "removed the remote bases, files and charts kept in %s\n", filepath.Join(dir, "remote"))
					}
					fmt.Fprintf(c.App.Writer, "removed %d files from %s\n", removed, dir)
					if len(left) > 0 {
						fmt.Fprintf(c.App.Writer, "left %d files kpipe did not write: %s\n", len(left), strings.Join(left, ", "))
					}
					return nil
				},
			},
			{
				Name:  "verify",
				Usage: "check every entry's content against its digest (deletes nothing); exit status 1 when an entry is corrupt (incomplete entries, left by killed processes, are not)",
				Flags: dirFlag(),
				Action: func(c *cli.Context) error {
					s, err := open(c)
					if err != nil {
						return err
					}
					r, err := s.Verify()
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "%d entries verified, %d incomplete, %d corrupt (each bad entry is a miss)\n", r.Good, r.Incomplete, r.Corrupt)
					if r.Corrupt > 0 {
						return cli.Exit("", 1)
					}
					return nil
				},
			},
		},
	}
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
