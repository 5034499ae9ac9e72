// Package kpipe renders Kubernetes configuration exactly as `kustomize
// build` does (the kustomize version is KustomizeVersion), from a program.
// It is the package to import for embedding kpipe: a GitOps server, a CI
// tool or a test harness that would otherwise run kustomize, or call
// kustomize's krusty package, once per application.
//
// # Rendering
//
// Make a Renderer with New and call Build for one kustomization directory,
// or BuildAll for many at once (they share every base they have in common,
// which is built once):
//
//	r := kpipe.New(kpipe.Options{})
//	yaml, err := r.Build(ctx, "overlays/prod")
//
// The bytes are what `kustomize build overlays/prod` prints. Options mirror
// the flags of `kustomize build` (and of `kpipe build`); their zero values are
// kustomize's defaults: load restrictions to the root, no plugins, no
// helm, legacy ordering unless the kustomization sets sortOptions.
//
// # Concurrency
//
// A Renderer and a Cache are safe for concurrent use: any number of
// goroutines may call Build and BuildAll at once, on different or shared
// roots, with one Cache. kpipe keeps no process-wide state: a custom
// `openapi:` schema, the field-spec configuration and every cache key
// belong to one build. (kustomize keeps its OpenAPI schema in a
// process-global variable, which is why Flux serializes kustomize builds
// behind one mutex; kpipe needs none.)
//
// # Caching
//
// OpenCache opens kpipe's on-disk cache (the directory `kpipe build` uses is
// DefaultCacheDir). With Options.Cache set, every node and root output is
// memoized, so that building again only recomputes what changed. The cache
// can be shared by concurrent calls and by `kpipe` processes. A cache that
// cannot be used degrades to no cache with a warning (Options.Warn); it
// never fails a build. Without a Cache, nothing is written anywhere.
//
// The cache keeps a file per entry, as `kpipe build` does: many short
// processes may share it. A program that holds its cache open for a long
// life (a GitOps server rendering thousands of roots all day) may open it
// with BadgerStore instead: the entries then live in one Badger database
// (no file per entry, no inode per entry), bounded by CacheMaxSize with
// the least recently used entries evicted as it writes, and owned by that
// one process while it is open.
//
// # Files
//
// Build and BuildAll read kustomization trees from the local disk, with the
// same load restrictor as kustomize. BuildFS renders a tree held in an
// fs.FS (an in-memory tree, an archive, a git object store) in place,
// through the same read seam (package loaders): only the files the build
// reads are read, nothing is copied, and the load restrictor, symlinks
// (when the fs.FS implements fs.ReadLinkFS) and errors behave as on disk.
// Helm (`helmCharts`) gets a copy of the chart's files, as it does for a
// tree on disk; exec plugins and KRM functions, which run as separate
// processes in their kustomization's directory, get that directory written
// to a temporary one for the build (only the directories of the
// kustomizations that run them), which is removed after it.
//
// Remote bases (git URLs in `resources` and `components`, or a git URL
// given to Build as the directory), http(s) resource files and helm
// charts from repositories are fetched with the git and helm commands and
// kept in the Cache's directory by commit (or chart version);
// Options.Offline builds from what is kept.
//
// # Stages
//
// A program can add generators and transformers of its own, written in Go
// and run in process: a stages.Stage (which works on the public resource
// model, package resource) made by a stages.Definition given in
// Options.Stages. A kustomization uses one as it uses a builtin, by
// listing a config object with the definition's apiVersion and kind under
// `transformers:` or `generators:`:
//
//	apiVersion: example.com/v1
//	kind: TeamLabel
//	metadata:
//	  name: label
//	team: payments
//
// Such a stage keeps the stage contract of package stages (its
// Fingerprint covers everything its output depends on besides its input;
// its Run is a pure function of those). With a Cache, its output is kept
// under its kind, fingerprint and input, so it runs again only when one
// of them changes; a kustomization that lists one is built again on each
// call (cheaply, from its bases' entries), as its own key cannot cover the
// stage's code. testdata/embed is a program in a module of its own that
// does this.
//
// # Stability
//
// This package is kpipe's public API: its exported names follow semantic
// versioning, as do those of pluginapi, the interface Go plugins are built
// against. The building blocks at the module root (resource, dag, loaders,
// stages, plugins, cache and their subpackages) can be imported too, with
// no compatibility promise before v1 (docs/architecture.md, "What is
// public"); none of them, nor this package, names an internal type in
// what it exports. The engine and the rest of the machinery are under
// internal/, which Go forbids importing from outside the module; this
// package is a thin shell over the engine's one entry, which kpipe's own
// commands call too.
package kpipe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/cache/badger"
	"github.com/kpipe/kpipe/internal/buildid"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/fetch/netfetch"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/plugins/goplugin"
	"github.com/kpipe/kpipe/stages"
)

// KustomizeVersion is the kustomize release whose `kustomize build` output
// kpipe reproduces byte for byte.
const KustomizeVersion = engine.KustomizeVersion

// Options are the settings of a Renderer. The zero value renders as
// `kustomize build` does with no flags.
type Options struct {
	// LoadRestrictionsNone lets kustomizations read files outside their
	// own directory tree (kustomize's --load-restrictor
	// LoadRestrictionsNone). The default refuses them.
	LoadRestrictionsNone bool
	// Reorder is kustomize's deprecated --reorder flag: "legacy", "none",
	// or "" (legacy unless the kustomization sets sortOptions).
	Reorder string
	// EnableAlphaPlugins allows generators, transformers and validators
	// other than kustomize's builtins (--enable-alpha-plugins).
	EnableAlphaPlugins bool
	// EnableExec allows KRM functions and plugins that run executables
	// (--enable-exec). Plugins run with the calling process's privileges.
	EnableExec bool
	// EnableHelm allows helm chart inflation (--enable-helm).
	EnableHelm bool
	// Helm are the --helm-* settings; their zero value runs "helm" from
	// PATH.
	Helm HelmOptions
	// ManagedByLabel adds app.kubernetes.io/managed-by to every resource
	// (--enable-managedby-label).
	ManagedByLabel bool
	// PluginTimeout bounds each plugin run; zero means five minutes.
	PluginTimeout time.Duration
	// FnEnv are KEY=VALUE (or KEY, taken from the environment) entries
	// given to KRM functions (--env).
	FnEnv []string
	// Jobs bounds how many kustomizations one call builds at once; zero
	// means the number of CPUs.
	Jobs int
	// Cache memoizes builds; nil builds without a cache. Remote bases
	// (git URLs) and http(s) resource files are kept in its directory
	// (remote/), by the commit their ref resolved to; without a Cache,
	// each BuildAll fetches them into a temporary directory it removes.
	Cache *Cache
	// Offline forbids network requests: remote bases and files come from
	// the Cache, else the root fails naming the URL (kpipe build
	// --offline).
	Offline bool
	// Warn receives warnings (deprecated fields, a cache that cannot be
	// used, ...), one line each; nil discards them. It may be called from
	// several goroutines at once.
	Warn func(msg string)
	// Stages are the program's own generators and transformers. A
	// kustomization lists one under `transformers:` or `generators:` by a
	// config object with the definition's apiVersion and kind, as it
	// lists a builtin, with no flag needed (see Stages in the package
	// doc). An apiVersion of "builtin" is kpipe's own and cannot be
	// defined.
	Stages []stages.Definition
}

// HelmOptions are the settings of helm chart inflation.
type HelmOptions struct {
	// Command is the helm executable ("" means "helm" from PATH).
	Command string
	// APIVersions and KubeVersion are passed to `helm template` for
	// charts that set none (--helm-api-versions, --helm-kube-version).
	APIVersions []string
	KubeVersion string
	// Debug runs `helm template --debug`.
	Debug bool
}

// A Renderer renders kustomizations with fixed Options. It is safe for
// concurrent use.
type Renderer struct {
	opts Options
}

// New returns a Renderer with the given options.
func New(opts Options) *Renderer {
	return &Renderer{opts: opts}
}

// Result is the outcome of building one root with BuildAll.
type Result struct {
	// Dir is the root's directory, as given.
	Dir string
	// YAML is the output, as `kustomize build Dir` prints it; nil when
	// Err is set.
	YAML []byte
	// Err is the root's error, naming the file and the problem.
	Err error
	// Cached says the output came from the cache without building.
	Cached bool
}

// Build renders the kustomization in dir, as `kustomize build dir` does.
func (r *Renderer) Build(ctx context.Context, dir string) ([]byte, error) {
	res := r.BuildAll(ctx, []string{dir})[0]
	return res.YAML, res.Err
}

// BuildAll renders each directory in dirs, in one graph: a base shared by
// several roots is loaded and built once. The results are in the order of
// dirs; a failing root does not stop the others.
func (r *Renderer) BuildAll(ctx context.Context, dirs []string) []Result {
	return r.buildAll(ctx, loaders.Disk, dirs)
}

// buildAll is BuildAll of directories of fsys.
func (r *Renderer) buildAll(ctx context.Context, fsys loaders.FS, dirs []string) []Result {
	results := make([]Result, len(dirs))
	for i, d := range dirs {
		results[i].Dir = d
	}
	if len(dirs) == 0 {
		return results
	}
	if err := checkDefinitions(r.opts.Stages); err != nil {
		for i := range results {
			results[i].Err = err
		}
		return results
	}
	restriction := loaders.RootOnly
	if r.opts.LoadRestrictionsNone {
		restriction = loaders.None
	}
	opts := r.engineOptions()
	remoteDir, done := r.remoteDir()
	defer done()
	fetcher := fetch.New(fetch.Options{Dir: remoteDir, Offline: r.opts.Offline, Net: netfetch.New(nil)})
	if c := r.opts.Cache; c != nil {
		opts.Cache = c.engineCache()
		// Commit this call's entries, so that the next call finds them.
		defer c.store.Flush()
	}
	_, built := engine.Build(ctx, engine.Request{Dirs: dirs, Options: opts,
		Load: engine.LoadOptions{FS: fsys, Restriction: restriction, Remote: fetcher}})
	for i, res := range built {
		results[i].YAML, results[i].Err, results[i].Cached = res.YAML, res.Err, res.Cached
		if res.Err != nil {
			results[i].YAML = nil
		}
	}
	return results
}

// remoteDir is where the fetcher of one BuildAll keeps what it fetches:
// the cache's remote/ directory, else (no Cache, or one whose directory
// cannot be used) a temporary directory (created only when something is
// fetched) that the returned function removes.
func (r *Renderer) remoteDir() (string, func()) {
	if c := r.opts.Cache; c != nil && c.store != nil {
		return filepath.Join(c.dir, "remote"), func() {}
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(os.TempDir(), "kpipe-remote-"+hex.EncodeToString(b[:]))
	return dir, func() { _ = os.RemoveAll(dir) }
}

// engineOptions translates the public options, field for field: their
// zero values take their defaults in the engine, as every caller's do.
func (r *Renderer) engineOptions() engine.Options {
	o := r.opts
	return engine.Options{
		Jobs:               o.Jobs,
		Reorder:            o.Reorder,
		ManagedByLabel:     o.ManagedByLabel,
		EnableAlphaPlugins: o.EnableAlphaPlugins,
		EnableExec:         o.EnableExec,
		EnableHelm:         o.EnableHelm,
		PluginTimeout:      o.PluginTimeout,
		FnEnv:              o.FnEnv,
		GoPlugins:          goplugin.Open,
		Helm: engine.HelmOptions{Command: o.Helm.Command, APIVersions: o.Helm.APIVersions,
			KubeVersion: o.Helm.KubeVersion, Debug: o.Helm.Debug},
		Warn:   o.Warn,
		Stages: o.Stages,
	}
}

// checkDefinitions refuses a stage definition that no config could select.
func checkDefinitions(defs []stages.Definition) error {
	for i, d := range defs {
		switch {
		case d.APIVersion == "" || d.Kind == "":
			return fmt.Errorf("kpipe: Options.Stages[%d]: no apiVersion or no kind", i)
		case d.APIVersion == "builtin":
			return fmt.Errorf("kpipe: Options.Stages[%d]: apiVersion builtin is kpipe's own (kind %s)", i, d.Kind)
		case d.New == nil:
			return fmt.Errorf("kpipe: Options.Stages[%d] (%s %s): no New", i, d.APIVersion, d.Kind)
		}
	}
	return nil
}

// A Cache is kpipe's on-disk cache, opened for use by Renderers. It is
// safe for concurrent use by any number of builds.
type Cache struct {
	dir     string
	store   *cache.Store
	files   *cache.FileIndex
	version string

	closeOnce sync.Once
	closeErr  error
}

// DefaultCacheDir is the cache directory `kpipe build` uses:
// $XDG_CACHE_HOME/kpipe, or ~/.cache/kpipe. It fails when neither
// XDG_CACHE_HOME nor a home directory is set (a systemd unit, some
// containers); `kpipe build` then builds without a cache, after one
// warning, and a program may do the same (Options.Cache nil).
func DefaultCacheDir() (string, error) { return cache.DefaultDir() }

// A CacheOption changes how OpenCache opens a cache.
type CacheOption func(*cacheConfig)

type cacheConfig struct {
	badger  bool
	maxSize int64
}

// BadgerStore keeps the cache's entries in a Badger database under
// dir/badger rather than a file per entry: for a process that owns the
// cache for a long life. Only one process may hold it open: another one
// opening it meanwhile warns and goes on without a cache, and `kpipe
// build` never reads it (it keeps its own entries, as files, in the same
// directory).
func BadgerStore() CacheOption { return func(c *cacheConfig) { c.badger = true } }

// CacheMaxSize bounds the cache's entries to n bytes (default 2 GiB): the
// file store trims the least recently used files when Close finds it past
// the bound; the Badger store evicts them as it writes.
func CacheMaxSize(n int64) CacheOption { return func(c *cacheConfig) { c.maxSize = n } }

// OpenCache opens (creating it when missing) the cache in dir. A directory
// that cannot be used as a cache is reported through warn (which may be
// nil), and the Cache returned then stores nothing: builds go on without
// it. The error is for a dir that is empty.
func OpenCache(ctx context.Context, dir string, warn func(msg string), opts ...CacheOption) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("kpipe: OpenCache: no directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("kpipe: OpenCache: %w", err)
	}
	if warn == nil {
		warn = func(string) {}
	}
	var cfg cacheConfig
	for _, o := range opts {
		o(&cfg)
	}
	co := cache.Options{Dir: abs, Warn: warn, Pack: true, MaxSize: cfg.maxSize}
	if cfg.badger {
		co.KV, co.Pack = badger.OpenKV, false
	}
	store := cache.Open(ctx, co)
	return &Cache{dir: abs, store: store, files: store.FileIndex(), version: keyVersion()}, nil
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// Close writes what the cache learned and releases it. Builds must not use
// the cache after Close; calling Close again does nothing.
func (c *Cache) Close() error {
	c.closeOnce.Do(func() {
		// Remote bases, files and charts no build used for five days.
		fetch.New(fetch.Options{Dir: filepath.Join(c.dir, "remote")}).Trim()
		err := c.files.Save("")
		if c.store != nil {
			c.store.RecordRun()
			err = errors.Join(err, c.store.Close())
		}
		c.closeErr = err
	})
	return c.closeErr
}

func (c *Cache) engineCache() engine.Cache {
	return engine.Cache{Store: c.store, Files: c.files, Version: c.version}
}

// keyVersion salts every cache key with the running executable's Go build
// ID, so that programs linking different kpipe code never share entries.
// Without one (a binary built without it), the salt never matches an
// earlier run: the cache then only ever misses, which is safe.
func keyVersion() string {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err == nil {
		if id := buildid.GoBuildID(exe); id != "" {
			return "lib+" + KustomizeVersion + "+" + id
		}
	}
	return fmt.Sprintf("lib+unknown-binary-%d", time.Now().UnixNano())
}
