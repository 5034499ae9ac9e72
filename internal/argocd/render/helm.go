package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/generate"
	"github.com/kpipe/kpipe/internal/argocd/helm"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/stages"
)

// helmRunner runs Helm sources' `helm template`.
type helmRunner struct {
	r    *Renderer
	once sync.Once
	h    stages.HelmSettings
	err  error
	sem  chan struct{}
}

// settings resolves the helm binary once.
func (hr *helmRunner) settings() (stages.HelmSettings, error) {
	hr.once.Do(func() {
		o := hr.r.opts.Engine
		hr.h, hr.err = engine.ResolveHelm(o.Helm, o.Cache.Files)
		jobs := o.Jobs
		if jobs < 1 {
			jobs = 4
		}
		hr.sem = make(chan struct{}, jobs)
	})
	return hr.h, hr.err
}

// ErrHelmNotEnabled is a Helm source's failure when Options.HelmSources
// is off.
var ErrHelmNotEnabled = errors.New("rendering a Helm source runs helm template: kpipe runs helm only with --enable-helm")

// helmFile is one file of the chart's copy.
type helmFile struct {
	rel  string // below the copy's top (slash)
	data []byte
	mode os.FileMode
}

// Helm runs `helm template` for h (generate.Renderer): on a copy of the
// chart (the app directory, read through the tree's Files, symlinks
// followed as helm follows them) and of the value files, laid out as in
// their checkouts, in the chart's directory, with fresh helm homes as
// the repo-server runs it. Its output is cached by the chart's files,
// the value files, the values, the arguments and helm's binary.
func (r *Renderer) Helm(ctx context.Context, h *generate.HelmTemplate) ([]byte, error) {
	if !r.opts.HelmSources {
		return nil, ErrHelmNotEnabled
	}
	settings, err := r.helm.settings()
	if err != nil {
		return nil, err
	}
	tree, err := treeOf(h.Checkout)
	if err != nil {
		return nil, err
	}
	reads := readsOf(ctx)
	// The checkouts the command names: the chart's first.
	type root struct {
		tree  *Tree
		label string
		top   string // below the copy
	}
	roots := []root{{tree, h.Checkout.Root, "repo0"}}
	rootOf := func(co app.Checkout) (root, error) {
		t, err := treeOf(co)
		if err != nil {
			return root{}, err
		}
		for _, ro := range roots {
			if ro.tree == t {
				return ro, nil
			}
		}
		ro := root{t, co.Root, fmt.Sprintf("repo%d", len(roots))}
		roots = append(roots, ro)
		return ro, nil
	}
	var files []helmFile
	chartDir := tree.Abs(h.AppDir)
	if real, err := tree.Files.EvalSymlinks(chartDir); err == nil {
		chartDir = real
	}
	if reads != nil {
		reads.Tree(chartDir)
	}
	chart, err := loaders.ReadTreeOf(tree.Files, chartDir)
	if err != nil {
		return nil, fmt.Errorf("reading the chart %s: %w", h.Checkout.Display(h.AppDir), err)
	}
	chartTop := "repo0/" + strings.TrimPrefix(filepathToSlash(h.AppDir), "./")
	if h.AppDir == "." || h.AppDir == "" {
		chartTop = "repo0"
	}
	for _, f := range chart {
		files = append(files, helmFile{rel: chartTop + "/" + f.Rel, data: f.Data, mode: f.Mode})
	}
	// Value files and --set-file files, by the name the arguments give
	// them.
	shown := map[string]string{} // as the arguments name it -> below the copy
	for _, f := range append(append([]helm.File{}, h.Template.ValueFiles...), h.Template.SetFiles...) {
		if f.URL != "" {
			continue
		}
		ro, err := rootOf(f.Checkout)
		if err != nil {
			return nil, err
		}
		p := ro.tree.Abs(f.Path)
		if reads != nil {
			reads.File(p)
		}
		rel := ro.top + "/" + f.Path
		shown[f.String()] = rel
		if data, _, err := ro.tree.Files.ReadFile(p, true); err == nil {
			files = append(files, helmFile{rel: rel, data: data, mode: 0o644})
		}
	}
	key := helmKey(r.opts.Engine.Cache.Version, settings, files, h.Template)
	store := r.opts.Engine.Cache.Store
	if store != nil {
		if out, ok := store.Get(key); ok {
			r.mu.Lock()
			r.stats.HelmCached++
			r.mu.Unlock()
			return out, nil
		}
	}
	r.helm.sem <- struct{}{}
	defer func() { <-r.helm.sem }()
	tmp, err := os.MkdirTemp("", "kpipe-argocd-helm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, f.data, f.mode|0o600); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(tmp, filepath.FromSlash(chartTop)), 0o755); err != nil {
		return nil, err
	}
	labels := map[string]string{} // real path -> as messages name it
	valuesFile := ""
	var args []string
	for _, a := range h.Template.Args {
		switch {
		case a == helm.ValuesPlaceholder:
			if valuesFile == "" {
				valuesFile = filepath.Join(tmp, "values.yaml")
				if err := os.WriteFile(valuesFile, h.Template.Values, 0o600); err != nil {
					return nil, err
				}
				labels[valuesFile] = generate.TempValuesFile
			}
			a = valuesFile
		case shown[a] != "":
			a = filepath.Join(tmp, filepath.FromSlash(shown[a]))
		default:
			if k, v, ok := strings.Cut(a, "="); ok && shown[v] != "" {
				a = k + "=" + filepath.Join(tmp, filepath.FromSlash(shown[v]))
			}
		}
		args = append(args, a)
	}
	for _, ro := range roots {
		labels[filepath.Join(tmp, ro.top)] = ro.label
	}
	home := filepath.Join(tmp, "helm")
	labels[home] = "<helm home>"
	env := append(append([]string{}, r.opts.Environ...), h.Env...)
	env = append(env, "HELM_CONFIG_HOME="+home+"/config", "HELM_CACHE_HOME="+home+"/cache", "HELM_DATA_HOME="+home+"/data")
	run := stages.RunHelm(ctx, settings, filepath.Join(tmp, filepath.FromSlash(chartTop)), env, args)
	r.mu.Lock()
	r.stats.HelmRuns++
	r.mu.Unlock()
	if run.Err != nil {
		var ee *exec.ExitError
		if !errors.As(run.Err, &ee) {
			return nil, fmt.Errorf("running helm: %w", run.Err)
		}
		msg := string(run.Stderr)
		// The longest paths first: a value file below a checkout.
		for _, p := range sortedByLength(labels) {
			msg = strings.ReplaceAll(msg, p, labels[p])
		}
		return nil, &generate.CommandError{Cause: run.Err.Error(), Stderr: msg}
	}
	if store != nil {
		store.PutSensitive(key, run.Stdout)
	}
	return run.Stdout, nil
}

// helmKey keys a helm run: helm's binary and environment, every file of
// the copy (chart and value files, by their place in it), the values and
// the arguments (which name files by their checkouts' labels, the same
// for the same place).
func helmKey(version string, h stages.HelmSettings, files []helmFile, t *helm.Template) cache.Key {
	kb := cache.NewKey(version, "argocd-helm-template")
	kb.String(filepath.Base(h.Path)).String(h.Digest).String(strings.Join(h.EnvFingerprint, "\x00"))
	for _, f := range files {
		d := sha256.Sum256(f.data)
		kb.String(f.rel).String(hex.EncodeToString(d[:])).String(f.mode.String())
	}
	kb.Bytes(t.Values).String(strings.Join(t.Args, "\x00"))
	return kb.Sum()
}

func sortedByLength(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && (len(out[j]) > len(out[j-1]) || len(out[j]) == len(out[j-1]) && out[j] < out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func filepathToSlash(p string) string { return strings.ReplaceAll(p, `\`, "/") }
