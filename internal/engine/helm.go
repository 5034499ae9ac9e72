package engine

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/stages"
)

// HelmOptions are the --helm-* flags of a build.
type HelmOptions struct {
	// Command is the helm executable (--helm-command; default "helm").
	Command string
	// APIVersions, KubeVersion and Debug are passed to `helm template`
	// for charts that set no apiVersions, kubeVersion or debug of their
	// own.
	APIVersions []string
	KubeVersion string
	Debug       bool
}

// helmEnabled reports whether helm charts may be inflated: --enable-helm,
// or --enable-alpha-plugins, which in kustomize enables helm too.
func (b *Builder) helmEnabled() bool { return b.opts.EnableHelm || b.opts.EnableAlphaPlugins }

// runHelmCharts inflates the node's helmCharts entries in order (the
// deprecated helmChartInflationGenerator entries were turned into helmCharts
// when the kustomization was read). A chart without a namespace got the
// kustomization's, or the nearest referrer's, when the graph was loaded
// (see chartsWithNamespace).
func (b *Builder) runHelmCharts(ctx context.Context, n *Node, acc *Accumulation) error {
	k := n.K
	var globals loaders.HelmGlobals
	if k.HelmGlobals != nil {
		globals = *k.HelmGlobals
	}
	for i, chart := range k.HelmCharts {
		if chart.Namespace == "" {
			chart.Namespace = k.Namespace
		}
		args := stages.HelmChartArgs{HelmGlobals: globals, HelmChart: chart}
		entry := fmt.Sprintf("helmCharts %q", chart.Name)
		if chart.Name == "" {
			entry = fmt.Sprintf("helmCharts entry %d", i+1)
		}
		if !b.helmEnabled() {
			text := fmt.Sprintf("trouble configuring builtin HelmChartInflationGenerator with config: `\n%s`: must specify --enable-helm", pluginYAML(args))
			return &Reworded{Err: fmt.Errorf("%s: %s: %s", n.File.Path, entry, text), Kustomize: text}
		}
		h, err := b.helmSettings()
		if err != nil {
			return fmt.Errorf("%s: %s: %w", n.File.Path, entry, err)
		}
		read, tree := readFile(n), readTree(n)
		if home, err := b.pulledChartHome(ctx, n, args, h); err != nil {
			return fmt.Errorf("%s: %s: %w", n.File.Path, entry, err)
		} else if home != "" {
			args.ChartHome = home
			read = readPulledChart(home, read)
			tree = readPulledTree(n, home, tree)
		}
		s, err := stages.NewHelmChartInflationGenerator(args, h, read, tree)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", n.File.Path, entry, err)
		}
		if err := b.runStage(ctx, s, acc.Resources); err != nil {
			return fmt.Errorf("%s: %s: %w", n.File.Path, entry, err)
		}
	}
	return nil
}

// helmSettings finds the helm binary and takes its digest and the
// environment it runs in, once per build.
func (b *Builder) helmSettings() (stages.HelmSettings, error) {
	b.helmOnce.Do(func() {
		b.helm, b.helmErr = resolveHelm(b.opts.Helm, b.memoFiles())
	})
	return b.helm, b.helmErr
}

// memoFiles is the build's file index of the disk, or nil without a
// cache.
func (b *Builder) memoFiles() *cache.FileIndex {
	if b.memo == nil {
		return nil
	}
	return b.memo.disk
}

// resolveHelm looks the helm command up on PATH and fills in the settings
// a chart inflation needs; with a cache, files finds the binary's digest
// (cheaply, after the first time).
func resolveHelm(o HelmOptions, files *cache.FileIndex) (stages.HelmSettings, error) {
	command := o.Command
	if command == "" {
		command = "helm"
	}
	h := stages.HelmSettings{Command: command, APIVersions: o.APIVersions, KubeVersion: o.KubeVersion, Debug: o.Debug}
	p, err := exec.LookPath(command)
	if err != nil {
		return h, fmt.Errorf("cannot run helm (is '%s' installed? set --helm-command to use another): %w", command, err)
	}
	if p, err = filepath.Abs(p); err == nil {
		p, err = filepath.EvalSymlinks(p)
	}
	if err != nil {
		return h, fmt.Errorf("cannot run helm '%s': %w", command, err)
	}
	h.Path = p
	h.Env, h.EnvFingerprint = helmEnv(os.Environ())
	if files == nil {
		// Fingerprints only key the cache: without one, skip hashing the
		// (large) binary.
		return h, nil
	}
	d, ok := files.Digest(p)
	if !ok {
		return h, fmt.Errorf("cannot read helm binary '%s'", p)
	}
	h.Digest = hex.EncodeToString(d[:])
	return h, nil
}

// helmEnv returns the environment helm runs in (the build's own, as
// kustomize passes it, less the helm homes, which each run sets) and the
// part of it that can change helm's output, with the digests of the
// kubeconfig files helm may take a default namespace from.
func helmEnv(environ []string) (env, fingerprint []string) {
	get := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "HELM_CONFIG_HOME", "HELM_CACHE_HOME", "HELM_DATA_HOME":
			continue
		}
		env = append(env, kv)
		if strings.HasPrefix(k, "HELM_") || strings.HasPrefix(k, "XDG_") || k == "HOME" || k == "KUBECONFIG" {
			fingerprint = append(fingerprint, kv)
			get[k] = v
		}
	}
	sort.Strings(fingerprint)
	kubeconfigs := filepath.SplitList(get["KUBECONFIG"])
	if len(kubeconfigs) == 0 && get["HOME"] != "" {
		kubeconfigs = []string{filepath.Join(get["HOME"], ".kube", "config")}
	}
	for _, p := range kubeconfigs {
		if data, err := fsread.File(p); err == nil {
			d := cache.Digest(data)
			fingerprint = append(fingerprint, "kubeconfig "+p+" "+hex.EncodeToString(d[:]))
		}
	}
	return env, fingerprint
}

// readTree reads a directory tree through n's loader.
func readTree(n *Node) stages.ReadTree {
	return func(p string) ([]loaders.TreeFile, error) {
		files, _, err := n.Loader.ReadTree(p)
		return files, err
	}
}

// readPulledTree reads the chart kpipe pulled into its cache (under
// home, on disk) for a node of a tree that is not on disk through a copy
// of the node's loader that reads the disk; other trees through tree.
func readPulledTree(n *Node, home string, tree stages.ReadTree) stages.ReadTree {
	if n.Loader.FS() == loaders.Disk {
		return tree
	}
	disk := n.Loader.On(loaders.Disk)
	return func(p string) ([]loaders.TreeFile, error) {
		if filepath.IsAbs(p) && loaders.Within(home, filepath.Clean(p)) {
			files, _, err := disk.ReadTree(p)
			return files, err
		}
		return tree(p)
	}
}

// pluginYAML renders a plugin config as kustomize shows it in errors:
// YAML with sorted keys and empty fields left out.
func pluginYAML(v any) string {
	j, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(j, &m) != nil {
		return ""
	}
	y, err := yaml2.Marshal(m)
	if err != nil {
		return ""
	}
	return string(y)
}

// pullsRangeChart reports whether n inflates a chart pulled from a
// repository by a version range (or none): it is pulled again on every
// run, so n's output cannot be keyed before it is.
func pullsRangeChart(n *Node) bool {
	for _, c := range n.K.HelmCharts {
		if c.Repo == "" || fetch.IsExactChartVersion(c.Version) {
			continue
		}
		home := ""
		if n.K.HelmGlobals != nil {
			home = n.K.HelmGlobals.ChartHome
		}
		if home == "" {
			home = "charts"
		}
		if c.Version != "" {
			home = filepath.Join(home, c.Name+"-"+c.Version)
		}
		if _, kind, err := n.Loader.Resolve(filepath.Join(home, c.Name)); err != nil || kind != loaders.Dir {
			return true
		}
	}
	return false
}

// pulledChartHome returns the chart home to use for a chart of a
// repository that is not in the kustomization's chart home (kustomize
// pulls it there, into the user's tree; kpipe pulls it into its cache,
// see fetch.Fetcher.Chart), or "" when the chart is local or names no
// repository.
func (b *Builder) pulledChartHome(ctx context.Context, n *Node, args stages.HelmChartArgs, h stages.HelmSettings) (string, error) {
	if args.Repo == "" || args.Name == "" || strings.HasPrefix(args.Name, "-") {
		return "", nil // the stage reports what is wrong
	}
	home := args.ChartHome
	if home == "" {
		home = "charts"
	}
	if args.Version != "" {
		home = filepath.Join(home, args.Name+"-"+args.Version)
	}
	if _, kind, err := n.Loader.Resolve(filepath.Join(home, args.Name)); err == nil && kind == loaders.Dir {
		return "", nil
	}
	if b.g.remote == nil {
		return "", fmt.Errorf("no chart found at '%s', and pulling %s from %s needs a fetcher, which this build has not", filepath.Join(home, args.Name), args.Name, args.Repo)
	}
	return b.g.remote.Chart(ctx, fetch.ChartRequest{Helm: h.Path, Env: h.Env, Repo: args.Repo, Name: args.Name, Version: args.Version, Devel: args.Devel})
}

// readPulledChart reads the files of a chart kpipe pulled into its cache
// (the chart's values.yaml), which kustomize finds in the kustomization's
// own charts directory, where it pulls; other files through read.
func readPulledChart(home string, read stages.ReadFile) stages.ReadFile {
	return func(p string) ([]byte, error) {
		if filepath.IsAbs(p) && loaders.Within(home, filepath.Clean(p)) {
			return os.ReadFile(p)
		}
		return read(p)
	}
}
