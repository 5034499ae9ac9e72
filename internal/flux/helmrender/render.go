package helmrender

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/internal/flux/helmrelease"
	"github.com/kpipe/kpipe/internal/flux/postbuild"
	"github.com/kpipe/kpipe/stages"
)

// Options are the settings of a Renderer.
type Options struct {
	// Engine carries EnableHelm (--enable-helm: without it nothing is
	// rendered), Helm (the helm command, --helm-kube-version,
	// --helm-api-versions), the cache (Store, Files, Version) and Jobs.
	Engine engine.Options
	// Remote pulls HTTP repositories' charts and keeps them (nil: such
	// charts fail); its Offline uses only what it keeps.
	Remote *fetch.Fetcher
	// Resolve are helm-controller's flags on what a HelmRelease may refer
	// to.
	Resolve helmrelease.ResolveOptions
	// Client reads repositories' index.yaml (nil: http.DefaultClient).
	Client *http.Client
	// AllowV2Beta2 renders helm.toolkit.fluxcd.io/v2beta2 HelmReleases,
	// as helm-controller up to v1.4 (Flux up to v2.7) does; without it
	// they fail as a newer cluster refuses them.
	AllowV2Beta2 bool
}

// Renderer renders HelmReleases (cluster.Options.HelmReleases). It is
// safe for concurrent use.
type Renderer struct {
	o Options

	helmOnce sync.Once
	helm     stages.HelmSettings
	helmErr  error

	mu      sync.Mutex
	indexes map[string]*indexOnce
}

type indexOnce struct {
	sync.Once
	ix  *helmrelease.Index
	err error
}

// New returns a Renderer.
func New(o Options) *Renderer {
	return &Renderer{o: o, indexes: map[string]*indexOnce{}}
}

// settings resolves the helm binary once.
func (r *Renderer) settings() (stages.HelmSettings, error) {
	r.helmOnce.Do(func() {
		r.helm, r.helmErr = engine.ResolveHelm(r.o.Engine.Helm, r.o.Engine.Cache.Files)
	})
	return r.helm, r.helmErr
}

// cached is what the cache keeps of a rendering.
type cached struct {
	OK       bool     `json:"ok"` // (an output may be empty)
	YAML     []byte   `json:"yaml"`
	Warnings []string `json:"warnings,omitempty"`
}

// Render renders one HelmRelease (cluster.Options.HelmReleases).
func (r *Renderer) Render(ctx context.Context, in cluster.HelmRelease) *cluster.Result {
	res, err := r.render(ctx, in)
	if err != nil {
		if res == nil {
			res = &cluster.Result{}
		}
		res.Err = err.Error()
		res.YAML = nil
	}
	return res
}

func (r *Renderer) render(ctx context.Context, in cluster.HelmRelease) (*cluster.Result, error) {
	var obj map[string]any
	if err := json.Unmarshal(in.Object, &obj); err != nil {
		return nil, fmt.Errorf("HelmRelease %s: %w", in.ID, err)
	}
	hr, err := helmrelease.FromObject(obj, helmrelease.Options{AllowV2Beta2: r.o.AllowV2Beta2})
	if err != nil {
		return nil, err
	}
	if !r.o.Engine.EnableHelm {
		return nil, fmt.Errorf("HelmRelease %s: rendering it runs helm, which needs --enable-helm", hr.ID())
	}
	res := &cluster.Result{}
	objs := helmrelease.NewObjects()
	r.addSources(in, hr, objs)
	if err := r.addValuesObjects(in, hr, objs); err != nil {
		return res, err
	}
	values, skipped, err := helmrelease.Values(hr, objs)
	if err != nil {
		var ve *helmrelease.ValuesReferenceError
		if errors.As(err, &ve) && errors.Is(err, helmrelease.ErrResourceNotFound) {
			err = fmt.Errorf("%w (the cluster's Flux Kustomizations render no such object: made outside the tree?)", err)
		}
		return res, fmt.Errorf("HelmRelease %s: %w", hr.ID(), err)
	}
	for _, s := range skipped {
		res.Warnings = append(res.Warnings, fmt.Sprintf("valuesFrom %s/%s/%s skipped: %s", s.Ref.Kind, hr.Namespace, s.Ref.Name, s.Message))
	}
	cs, err := helmrelease.ResolveChart(hr, objs, r.o.Resolve)
	if err != nil {
		if errors.Is(err, helmrelease.ErrSourceNotFound) {
			err = fmt.Errorf("%w (no Flux Kustomization of the cluster renders it)", err)
		}
		return res, err
	}
	h, err := r.settings()
	if err != nil {
		return res, fmt.Errorf("HelmRelease %s: %w", hr.ID(), err)
	}
	ch, err := r.chart(ctx, in, hr, cs, h)
	if err != nil {
		return res, err
	}
	res.Warnings = append(res.Warnings, ch.warnings...)
	res.Reads = ch.reads
	topts := helmrelease.TemplateOptions{Helm: h.Path, Chart: "<chart>", Dir: "<dir>",
		KubeVersion: r.o.Engine.Helm.KubeVersion, APIVersions: r.o.Engine.Helm.APIVersions}
	shape, err := helmrelease.Template(hr, values, topts)
	if err != nil {
		return res, err
	}
	for _, n := range shape.Notes {
		if !strings.Contains(n, "post-renderer") {
			res.Warnings = append(res.Warnings, n)
		}
	}
	key, err := r.key(hr, h, ch.digest, shape)
	if err != nil {
		return res, fmt.Errorf("HelmRelease %s: %w", hr.ID(), err)
	}
	store := r.o.Engine.Cache.Store
	if store != nil && !r.o.Engine.VerifyCache {
		if data, ok := store.Get(key); ok {
			var c cached
			if json.Unmarshal(data, &c) == nil && c.OK {
				return &cluster.Result{YAML: c.YAML, Warnings: c.Warnings, FromCache: true, Reads: ch.reads}, nil
			}
		}
	}
	tmp, err := os.MkdirTemp("", "kpipe-helmrelease-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	chartPath, err := ch.materialize(filepath.Join(tmp, "chart"))
	if err != nil {
		return res, fmt.Errorf("HelmRelease %s: %w", hr.ID(), err)
	}
	topts.Chart, topts.Dir = chartPath, tmp
	cmd, err := helmrelease.Template(hr, values, topts)
	if err != nil {
		return res, err
	}
	for p, data := range cmd.Files {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return res, err
		}
	}
	home := filepath.Join(tmp, "helm")
	env := append(slices.Clone(h.Env), "HELM_CONFIG_HOME="+home+"/config", "HELM_CACHE_HOME="+home+"/cache", "HELM_DATA_HOME="+home+"/data")
	run := stages.RunHelm(ctx, h, tmp, env, cmd.Args[1:])
	res.HelmRuns++
	if run.Err != nil {
		return res, helmError(hr, h, run, map[string]string{chartPath: ch.shown, tmp: "<tmp>"})
	}
	out, warnings, err := r.postRender(ctx, hr, run.Stdout)
	if err != nil {
		return res, fmt.Errorf("HelmRelease %s: post-rendering: %w", hr.ID(), err)
	}
	res.YAML = out
	res.Warnings = append(res.Warnings, warnings...)
	if store != nil {
		if data, err := json.Marshal(cached{OK: true, YAML: res.YAML, Warnings: res.Warnings}); err == nil {
			// Values may come from Secrets: never sent to a remote cache
			// unless allowed.
			store.PutSensitive(key, data)
		}
	}
	return res, nil
}

// helmError words a failed helm run, naming the chart as the
// HelmRelease names it instead of the temporary copy.
func helmError(hr *helmrelease.HelmRelease, h stages.HelmSettings, run stages.HelmRun, labels map[string]string) error {
	if run.Overflowed {
		return fmt.Errorf("HelmRelease %s: %w", hr.ID(), run.Err)
	}
	var ee *exec.ExitError
	if !errors.As(run.Err, &ee) {
		return fmt.Errorf("HelmRelease %s: running helm (%s): %w", hr.ID(), h.Command, run.Err)
	}
	msg := strings.TrimSpace(string(run.Stderr))
	paths := make([]string, 0, len(labels))
	for p := range labels {
		paths = append(paths, p)
	}
	slices.SortFunc(paths, func(a, b string) int { return len(b) - len(a) }) // the longest first
	for _, p := range paths {
		msg = strings.ReplaceAll(msg, p, labels[p])
	}
	if run.Truncation != "" {
		msg += "\n" + run.Truncation
	}
	return fmt.Errorf("HelmRelease %s: helm template failed: %w; helm said:\n%s", hr.ID(), run.Err, msg)
}

// addSources adds the Flux sources hr's chart may come from: the
// sourceRef of spec.chart, or spec.chartRef and, for a HelmChart, its
// own sourceRef.
func (r *Renderer) addSources(in cluster.HelmRelease, hr *helmrelease.HelmRelease, objs *helmrelease.Objects) {
	if in.Source == nil {
		return
	}
	add := func(kind, ns, name string) map[string]any {
		raw, ok := in.Source(kind, ns, name)
		if !ok {
			return nil
		}
		var obj map[string]any
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		objs.Add(obj)
		return obj
	}
	nsOr := func(ns string) string {
		if ns == "" {
			return hr.Namespace
		}
		return ns
	}
	if c := hr.Spec.Chart; c != nil {
		add(c.Spec.SourceRef.Kind, nsOr(c.Spec.SourceRef.Namespace), c.Spec.SourceRef.Name)
	}
	if ref := hr.Spec.ChartRef; ref != nil {
		ns := nsOr(ref.Namespace)
		if hc := add(ref.Kind, ns, ref.Name); hc != nil && ref.Kind == "HelmChart" {
			spec, _ := hc["spec"].(map[string]any)
			src, _ := spec["sourceRef"].(map[string]any)
			kind, _ := src["kind"].(string)
			name, _ := src["name"].(string)
			add(kind, ns, name)
		}
	}
}

// addValuesObjects adds the ConfigMaps and Secrets hr's valuesFrom name,
// as the cluster renders them; a SOPS-encrypted one is an error (kpipe
// cannot decrypt it).
func (r *Renderer) addValuesObjects(in cluster.HelmRelease, hr *helmrelease.HelmRelease, objs *helmrelease.Objects) error {
	if in.Lookup == nil {
		return nil
	}
	for _, ref := range hr.Spec.ValuesFrom {
		if ref.Kind != "ConfigMap" && ref.Kind != "Secret" {
			continue // Values says what is wrong
		}
		p, ok := in.Lookup(ref.Kind, hr.Namespace, ref.Name)
		if !ok {
			continue
		}
		if p.Encrypted {
			return fmt.Errorf("HelmRelease %s: valuesFrom %s %s/%s is SOPS-encrypted: kpipe cannot decrypt it", hr.ID(), ref.Kind, hr.Namespace, ref.Name)
		}
		data := map[string]any{}
		for k, v := range p.Data {
			data[k] = v
		}
		obj := map[string]any{"apiVersion": "v1", "kind": ref.Kind,
			"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace}}
		if ref.Kind == "ConfigMap" {
			obj["data"] = data
		} else {
			obj["stringData"] = data // Provided holds a Secret's data decoded
		}
		objs.Add(obj)
	}
	return nil
}

// key is the cache key of a rendering: kpipe's build, helm's binary and
// environment, the chart's digest, helm's arguments (the release, the
// namespace, the flags; the chart and directory as placeholders) and
// values, the post-renderers, commonMetadata and the HelmRelease's
// name and namespace (the origin labels).
func (r *Renderer) key(hr *helmrelease.HelmRelease, h stages.HelmSettings, chartDigest string, shape *helmrelease.Command) (cache.Key, error) {
	post, err := json.Marshal(struct {
		P any `json:"p"`
		C any `json:"c"`
	}{hr.Spec.PostRenderers, hr.Spec.CommonMetadata})
	if err != nil {
		return cache.Key{}, err
	}
	kb := cache.NewKey(r.o.Engine.Cache.Version, "flux-helmrelease")
	kb.String(filepath.Base(h.Path)).String(h.Digest).String(strings.Join(h.EnvFingerprint, "\x00"))
	kb.String(chartDigest).String(strings.Join(shape.Args[1:], "\x00"))
	files := make([]string, 0, len(shape.Files))
	for p := range shape.Files {
		files = append(files, p)
	}
	slices.Sort(files)
	for _, p := range files {
		kb.String(p).Bytes(shape.Files[p])
	}
	kb.Bytes(post).String(hr.Namespace).String(hr.Name)
	return kb.Sum(), nil
}

// originLabels are the labels helm-controller sets on every object of a
// release.
const (
	originName      = "helm.toolkit.fluxcd.io/name"
	originNamespace = "helm.toolkit.fluxcd.io/namespace"
)

// postRender applies hr's post-renderers to helm's output, then its
// commonMetadata and the origin labels, and prints the objects as Flux
// prints them.
func (r *Renderer) postRender(ctx context.Context, hr *helmrelease.HelmRelease, out []byte) ([]byte, []string, error) {
	var warnings []string
	for i, pr := range hr.Spec.PostRenderers {
		if pr.Kustomize == nil {
			continue
		}
		var err error
		var w []string
		if out, w, err = kustomize(ctx, pr.Kustomize, out); err != nil {
			return nil, nil, fmt.Errorf("postRenderers[%d]: %w", i, err)
		}
		warnings = append(warnings, w...)
	}
	objs, err := postbuild.Decode(out)
	if err != nil {
		return nil, nil, err
	}
	if cm := hr.Spec.CommonMetadata; cm != nil {
		postbuild.SetCommonMetadata(objs, cm.Labels, cm.Annotations)
	}
	postbuild.SetCommonMetadata(objs, map[string]string{originName: hr.Name, originNamespace: hr.Namespace}, nil)
	y, err := postbuild.Encode(objs)
	return y, warnings, err
}
