package helmrender

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/internal/flux/helmrelease"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/stages"
)

// chart is a HelmRelease's chart, found: its digest (what a rendering is
// keyed by) and how to lay it out for helm.
type chart struct {
	digest string
	// shown names the chart in messages (instead of the copy's path).
	shown string
	// materialize writes the chart helm renders below dir (empty, not
	// yet made) and returns its path.
	materialize func(dir string) (string, error)
	warnings    []string
	// reads are the paths of the tree the chart was read from (nil: not
	// known; empty for a chart from a repository).
	reads *engine.ReadSet
}

// chart finds hr's chart from its source cs.
func (r *Renderer) chart(ctx context.Context, in cluster.HelmRelease, hr *helmrelease.HelmRelease, cs *helmrelease.ChartSource, h stages.HelmSettings) (*chart, error) {
	switch cs.Type {
	case helmrelease.TypeGit, helmrelease.TypeBucket:
		return r.pathChart(in, hr, cs)
	case helmrelease.TypeHelmHTTP:
		return r.repoChart(ctx, hr, cs, h)
	case helmrelease.TypeHelmOCI:
		return r.ociChart(ctx, hr, cs, h, cs.URL, cs.Chart, cs.Version, false)
	case helmrelease.TypeOCIArtifact:
		return r.artifactChart(ctx, hr, cs, h)
	default:
		return nil, fmt.Errorf("HelmRelease %s: its chart comes from %s %s/%s, which kpipe cannot read offline", hr.ID(), cs.Kind, cs.Namespace, cs.Name)
	}
}

// pathChart is a chart of a GitRepository or Bucket: the source's
// directory (cluster.HelmRelease.SourceDir) read through the run's tree,
// confined to it; values files (paths in the source) replace its
// values.yaml as source-controller replaces it (helmrelease.LocalChart).
func (r *Renderer) pathChart(in cluster.HelmRelease, hr *helmrelease.HelmRelease, cs *helmrelease.ChartSource) (*chart, error) {
	if in.SourceDir == nil {
		return nil, fmt.Errorf("HelmRelease %s: no directory for %s %s/%s", hr.ID(), cs.Kind, cs.Namespace, cs.Name)
	}
	root, err := in.SourceDir(cs.Kind, cs.Namespace, cs.Name)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s: chart %s: %w", hr.ID(), cs.Chart, err)
	}
	fsys := in.FS
	if fsys == nil {
		fsys = loaders.Disk
	}
	realRoot, err := fsys.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s: the directory of %s %s/%s: %w", hr.ID(), cs.Kind, cs.Namespace, cs.Name, err)
	}
	// A path in the source is taken as securejoin takes it: ".." stops
	// at the source's top.
	inSource := func(p string) string { return strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(p)), "/") }
	resolve := func(rel string) (string, error) {
		real, err := fsys.EvalSymlinks(filepath.Join(realRoot, filepath.FromSlash(rel)))
		if err != nil {
			return "", err
		}
		if !loaders.Within(realRoot, real) {
			return "", fmt.Errorf("%s leads outside the source %s %s/%s (to %s)", rel, cs.Kind, cs.Namespace, cs.Name, real)
		}
		return real, nil
	}
	chartRel := inSource(cs.Chart)
	shown := fmt.Sprintf("%s (%s %s/%s)", cs.Chart, cs.Kind, cs.Namespace, cs.Name)
	reads := &engine.ReadSet{Trees: []string{filepath.Join(root, filepath.FromSlash(chartRel))}}
	real, err := resolve(chartRel)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s: chart %s: %w", hr.ID(), shown, err)
	}
	st, err := fsys.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s: chart %s: %w", hr.ID(), shown, err)
	}
	type file struct {
		rel  string // below the source's top, slashes
		data []byte
		mode fs.FileMode
	}
	var files []file
	reads.Trees = append(reads.Trees, real)
	if st.IsDir() {
		l, err := loaders.New(fsys, realRoot, loaders.None)
		if err != nil {
			return nil, err
		}
		var outside []string
		l.OnRead(func(_, real string, _ []byte, _ os.FileInfo) {
			if !loaders.Within(realRoot, real) {
				outside = append(outside, real)
			}
		})
		tree, _, err := l.ReadTree(real)
		if err != nil {
			return nil, fmt.Errorf("HelmRelease %s: reading chart %s: %w", hr.ID(), shown, err)
		}
		if len(outside) > 0 {
			return nil, fmt.Errorf("HelmRelease %s: chart %s: a symbolic link leads outside the source (to %s)", hr.ID(), shown, outside[0])
		}
		for _, f := range tree {
			files = append(files, file{rel: path.Join(chartRel, f.Rel), data: f.Data, mode: f.Mode})
		}
	} else {
		data, _, err := fsys.ReadFile(real, true)
		if err != nil {
			return nil, fmt.Errorf("HelmRelease %s: chart %s: %w", hr.ID(), shown, err)
		}
		files = append(files, file{rel: chartRel, data: data, mode: 0o644})
	}
	for _, vf := range cs.ValuesFiles {
		rel := inSource(vf)
		reads.Files = append(reads.Files, filepath.Join(root, filepath.FromSlash(rel)))
		real, err := resolve(rel)
		if err == nil {
			reads.Files = append(reads.Files, real)
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue // LocalChart says so, unless it is to be ignored
		}
		if err != nil {
			return nil, fmt.Errorf("HelmRelease %s: values file %s: %w", hr.ID(), vf, err)
		}
		data, _, err := fsys.ReadFile(real, true)
		if err != nil {
			return nil, fmt.Errorf("HelmRelease %s: values file %s: %w", hr.ID(), vf, err)
		}
		files = append(files, file{rel: rel, data: data, mode: 0o644})
	}
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00%q\x00%v\x00", chartRel, cs.ValuesFiles, cs.IgnoreMissingValuesFiles)
	for _, f := range files {
		d := cache.Digest(f.data)
		fmt.Fprintf(sum, "%s\x00%s\x00%s\x00", f.rel, f.mode.Perm()&0o111, hex.EncodeToString(d[:]))
	}
	ch := &chart{digest: "path:" + hex.EncodeToString(sum.Sum(nil)), shown: shown, reads: reads}
	if cs.ReconcileStrategy == "Revision" {
		ch.warnings = append(ch.warnings, "reconcileStrategy Revision: source-controller adds the source's commit to the chart's version (+<commit>); kpipe leaves it out")
	}
	if len(cs.ValuesFiles) > 0 {
		ch.warnings = append(ch.warnings, "valuesFiles: source-controller adds the HelmChart's generation (cluster state) to the chart's version; kpipe leaves it out")
	}
	ch.materialize = func(dir string) (string, error) {
		src := filepath.Join(dir, "src")
		for _, f := range files {
			p := filepath.Join(src, filepath.FromSlash(f.rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return "", err
			}
			if err := os.WriteFile(p, f.data, f.mode.Perm()|0o600); err != nil {
				return "", err
			}
		}
		if err := os.MkdirAll(filepath.Join(src, filepath.FromSlash(chartRel)), 0o755); err != nil && st.IsDir() {
			return "", err
		}
		out := filepath.Join(dir, "built")
		if err := os.Mkdir(out, 0o755); err != nil {
			return "", err
		}
		p, err := helmrelease.LocalChart(helmrelease.LocalChartOptions{Root: src, Chart: chartRel, ValuesFiles: cs.ValuesFiles,
			IgnoreMissingValuesFiles: cs.IgnoreMissingValuesFiles, Dir: out})
		if err != nil {
			return "", errors.New(strings.ReplaceAll(err.Error(), src, ""))
		}
		return p, nil
	}
	return ch, nil
}

// repoChart is a chart of an HTTP HelmRepository: its version range
// resolved in the repository's index as source-controller resolves it
// (offline: the range's last resolution), the chart of that version
// pulled and kept by the fetcher as helmCharts charts are (reused
// without a request once kept), keyed by the archive's digest.
func (r *Renderer) repoChart(ctx context.Context, hr *helmrelease.HelmRelease, cs *helmrelease.ChartSource, h stages.HelmSettings) (*chart, error) {
	what := fmt.Sprintf("chart %s version %q from %s (HelmRepository %s/%s)", cs.Chart, cs.Version, cs.URL, cs.Namespace, cs.Name)
	if r.o.Remote == nil {
		return nil, fmt.Errorf("HelmRelease %s: %s: pulling charts needs a fetcher, which this run has not", hr.ID(), what)
	}
	version := cs.Version
	if !fetch.IsExactChartVersion(version) {
		v, err := r.resolveVersion(ctx, cs)
		if err != nil {
			return nil, fmt.Errorf("HelmRelease %s: %s: %w", hr.ID(), what, err)
		}
		version = v
	}
	home, err := r.o.Remote.Chart(ctx, fetch.ChartRequest{Helm: h.Path, Env: h.Env, Repo: cs.URL, Name: cs.Chart, Version: version})
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s: %w", hr.ID(), err)
	}
	digest, _, err := fetch.KeptChartDigest(home)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s: %s: %w", hr.ID(), what, err)
	}
	dir := filepath.Join(home, cs.Chart+"-"+version, cs.Chart)
	ch := &chart{digest: fmt.Sprintf("repo:%s\x00%q\x00%v", digest, cs.ValuesFiles, cs.IgnoreMissingValuesFiles),
		shown: fmt.Sprintf("%s %s from %s", cs.Chart, version, cs.URL), reads: &engine.ReadSet{}}
	ch.materialize = func(tmp string) (string, error) {
		if len(cs.ValuesFiles) == 0 {
			return dir, nil // helm only reads it
		}
		// Values files are paths in the chart: they replace its
		// values.yaml, in a copy.
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return "", err
		}
		p, err := helmrelease.LocalChart(helmrelease.LocalChartOptions{Root: dir, Chart: ".", ValuesFiles: cs.ValuesFiles,
			IgnoreMissingValuesFiles: cs.IgnoreMissingValuesFiles, Dir: tmp})
		if err != nil {
			return "", errors.New(strings.ReplaceAll(err.Error(), dir, ""))
		}
		return p, nil
	}
	return ch, nil
}

// resolveVersion resolves cs's version range in its repository's index
// (once per run and repository), and keeps the resolution in the cache
// for --offline, which uses the last one kept.
func (r *Renderer) resolveVersion(ctx context.Context, cs *helmrelease.ChartSource) (string, error) {
	store := r.o.Engine.Cache.Store
	key := cache.NewKey(r.o.Engine.Cache.Version, "flux-helmrelease-chart-version").String(cs.URL).String(cs.Chart).String(cs.Version).Sum()
	if r.o.Remote.Offline() {
		if store != nil {
			if v, ok := store.Get(key); ok && len(v) > 0 {
				return string(v), nil
			}
		}
		return "", fmt.Errorf("the version range is resolved in the repository's index, which --offline forbids reading, and no earlier run kept a resolution of it (run once without --offline)")
	}
	r.mu.Lock()
	o := r.indexes[cs.URL]
	if o == nil {
		o = &indexOnce{}
		r.indexes[cs.URL] = o
	}
	r.mu.Unlock()
	o.Do(func() { o.ix, o.err = (&helmrelease.Repository{URL: cs.URL, Client: r.o.Client}).Index(ctx) })
	if o.err != nil {
		return "", o.err
	}
	cv, err := o.ix.Get(cs.Chart, cs.Version)
	if err != nil {
		return "", err
	}
	if store != nil {
		store.Put(key, []byte(cv.Version))
	}
	return cv.Version, nil
}

// artifactChart is the chart of an OCIRepository (spec.chartRef): the
// artifact at its URL, by spec.ref's semver range or tag, pulled as a
// chart by the fetcher (helm pull oci://), its version given the
// manifest's digest as build metadata as helm-controller does
// (mutateChartWithSourceRevision).
func (r *Renderer) artifactChart(ctx context.Context, hr *helmrelease.HelmRelease, cs *helmrelease.ChartSource, h stages.HelmSettings) (*chart, error) {
	what := fmt.Sprintf("its chart is the artifact of OCIRepository %s/%s (%s)", cs.Namespace, cs.Name, cs.URL)
	ref := cs.OCIRef
	var version string
	switch {
	case ref != nil && ref.Digest != "":
		return nil, fmt.Errorf("HelmRelease %s: %s at digest %s: kpipe pulls charts by version (tag or semver range), not by digest", hr.ID(), what, ref.Digest)
	case ref != nil && ref.SemVer != "" && ref.SemverFilter != "":
		return nil, fmt.Errorf("HelmRelease %s: %s: ref.semverFilter is not supported", hr.ID(), what)
	case ref != nil && ref.SemVer != "":
		version = ref.SemVer
	case ref != nil && ref.Tag != "" && ref.Tag != "latest":
		version = ref.Tag
	default:
		return nil, fmt.Errorf("HelmRelease %s: %s with the tag 'latest': not a chart version kpipe can pull (give ref.tag or ref.semver)", hr.ID(), what)
	}
	u := strings.TrimRight(cs.URL, "/")
	i := strings.LastIndex(u, "/")
	if !strings.HasPrefix(u, "oci://") || i <= len("oci://") {
		return nil, fmt.Errorf("HelmRelease %s: %s: not an oci:// repository URL", hr.ID(), what)
	}
	return r.ociChart(ctx, hr, cs, h, u[:i], u[i+1:], version, true)
}

// ociChart is a chart of an OCI registry (a HelmRepository of type oci,
// or an OCIRepository's artifact): pulled and kept by the fetcher as
// helmCharts charts of OCI registries are (an exact version is reused
// with no request once kept; a range is resolved by helm over the
// repository's tags on each run, offline the last one kept), keyed by the
// archive's digest. withDigest gives the chart's version the manifest's
// digest (its first 12 hex digits) as build metadata.
func (r *Renderer) ociChart(ctx context.Context, hr *helmrelease.HelmRelease, cs *helmrelease.ChartSource, h stages.HelmSettings, repo, name, version string, withDigest bool) (*chart, error) {
	what := fmt.Sprintf("chart %s version %q from %s (%s %s/%s)", name, version, repo, cs.Kind, cs.Namespace, cs.Name)
	if r.o.Remote == nil {
		return nil, fmt.Errorf("HelmRelease %s: %s: pulling charts needs a fetcher, which this run has not", hr.ID(), what)
	}
	if version == "" || version == "*" {
		version = "" // helm pull: the newest stable version
	}
	home, err := r.o.Remote.Chart(ctx, fetch.ChartRequest{Helm: h.Path, Env: h.Env, Repo: repo, Name: name, Version: version})
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s: %w", hr.ID(), err)
	}
	archive, manifest, err := fetch.KeptChartDigest(home)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s: %s: %w", hr.ID(), what, err)
	}
	dir := filepath.Join(home, name)
	if version != "" {
		dir = filepath.Join(home, name+"-"+version, name)
	}
	meta := ""
	if withDigest {
		if len(manifest) < 12 {
			return nil, fmt.Errorf("HelmRelease %s: %s: the manifest digest it was pulled by is not known (helm-controller adds it to the chart's version)", hr.ID(), what)
		}
		meta = manifest[:12]
	}
	ch := &chart{digest: fmt.Sprintf("oci:%s\x00%s\x00%q\x00%v", archive, meta, cs.ValuesFiles, cs.IgnoreMissingValuesFiles),
		shown: fmt.Sprintf("%s %s from %s", name, version, repo), reads: &engine.ReadSet{}}
	ch.materialize = func(tmp string) (string, error) {
		if len(cs.ValuesFiles) == 0 && meta == "" {
			return dir, nil
		}
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return "", err
		}
		p, err := helmrelease.LocalChart(helmrelease.LocalChartOptions{Root: dir, Chart: ".", ValuesFiles: cs.ValuesFiles,
			IgnoreMissingValuesFiles: cs.IgnoreMissingValuesFiles, VersionMetadata: meta, Dir: tmp})
		if err != nil {
			return "", errors.New(strings.ReplaceAll(err.Error(), dir, ""))
		}
		return p, nil
	}
	return ch, nil
}
