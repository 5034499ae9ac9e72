package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// ChartRequest names a helm chart in a repository, as a `helmCharts`
// entry does, and the helm binary to pull it with.
type ChartRequest struct {
	// Helm is the helm executable and Env the environment it runs in
	// (without HELM_*_HOME, which the pull sets to a directory of its own).
	Helm string
	Env  []string
	// Repo is an HTTP(S) chart repository URL or an oci:// registry.
	Repo    string
	Name    string
	Version string
	Devel   bool
}

// exactVersion matches a version that names one release, not a range:
// only such a chart is reused from the cache online.
var exactVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$`) })

// IsExactChartVersion reports whether a `helmCharts` version names one
// release (1.2.3, v1.2.3-rc.1), not a range: only such a chart is reused
// from the cache without asking the repository.
func IsExactChartVersion(v string) bool { return exactVersion().MatchString(v) }

// Chart returns a directory holding the chart as kustomize's chartHome
// would after its pull: <dir>/<name>-<version>/<name>/ when Version is
// set, <dir>/<name>/ otherwise. The chart is pulled with `helm pull`
// (as kustomize does, but into the Fetcher's directory, never into the
// user's tree), checked against the digest the repository's index gives
// for it (HTTP repositories), and unpacked. A chart of an exact version
// is reused without asking anything once it is kept, after its files are
// checked against the digest recorded when it was unpacked (a chart whose
// files changed is pulled again); a version range, or none, is pulled on
// every run (once per run), and --offline uses the last one kept.
func (f *Fetcher) Chart(ctx context.Context, r ChartRequest) (string, error) {
	f.beforeFetch()
	key := strings.Join([]string{r.Repo, r.Name, r.Version, fmt.Sprint(r.Devel)}, "\x00")
	f.mu.Lock()
	if f.charts == nil {
		f.charts = map[string]*once[string]{}
	}
	o := f.charts[key]
	if o == nil {
		o = &once[string]{}
		f.charts[key] = o
	}
	f.mu.Unlock()
	o.Do(func() { o.v, o.err = f.chart(ctx, r, filepath.Join(f.o.Dir, "charts", hashName(key))) })
	return o.v, o.err
}

// chartDigestFile records the archive's and the unpacked files' digests
// ("archive sha256:HEX", "tree sha256:HEX" lines), and for a chart of an
// OCI registry the manifest's ("manifest sha256:HEX").
const chartDigestFile = "digest"

// chartRecord reads a line of the digest record in dir: the hex digest
// after "<what> sha256:", or "".
func chartRecord(data []byte, what string) string {
	for _, line := range strings.Split(string(data), "\n") {
		if d, ok := strings.CutPrefix(line, what+" sha256:"); ok {
			return d
		}
	}
	return ""
}

// KeptChartDigest returns the SHA-256 (hex) of the archive the chart home
// Chart returned was unpacked from, as recorded when it was kept (what a
// rendering of the chart is keyed by), and for a chart of an OCI registry
// the digest of the manifest it was pulled by ("" when unknown).
func KeptChartDigest(home string) (archive, manifest string, err error) {
	data, err := os.ReadFile(filepath.Join(filepath.Dir(home), chartDigestFile))
	if err != nil {
		return "", "", fmt.Errorf("the chart kept at %s has no digest record: %w", home, err)
	}
	archive = chartRecord(data, "archive")
	if len(archive) != 64 {
		return "", "", fmt.Errorf("the chart kept at %s has a malformed digest record", home)
	}
	return archive, chartRecord(data, "manifest"), nil
}

// ociDigest is the manifest digest `helm pull oci://...` prints.
var ociDigest = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Digest: sha256:([0-9a-f]{64})\s*$`) })

func (f *Fetcher) chart(ctx context.Context, r ChartRequest, dir string) (string, error) {
	what := fmt.Sprintf("chart %s version %q from %s", r.Name, r.Version, r.Repo)
	keptOK := func() bool {
		want, err := os.ReadFile(filepath.Join(dir, chartDigestFile))
		if err != nil {
			return false
		}
		tree := chartRecord(want, "tree")
		got, err := treeDigest(filepath.Join(dir, "chart"))
		return err == nil && tree != "" && got == tree
	}
	useKept := exactVersion().MatchString(r.Version) || f.o.Offline
	if useKept && keptOK() {
		f.markUsed(filepath.Join(dir, "chart"))
		return filepath.Join(dir, "chart"), nil
	}
	if f.o.Offline {
		return "", fmt.Errorf("%s is not in kpipe's cache (%s), and --offline forbids pulling it", what, f.o.Dir)
	}
	if f.o.Net == nil {
		return "", fmt.Errorf("%s: %w", what, ErrNoNet)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	tmp, err := os.MkdirTemp(dir, ".tmp-")
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Mkdir(filepath.Join(tmp, "pull"), 0o700); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	args := []string{"pull", "--destination", filepath.Join(tmp, "pull")}
	if strings.HasPrefix(r.Repo, "oci://") {
		args = append(args, strings.TrimSuffix(r.Repo, "/")+"/"+r.Name)
	} else {
		args = append(args, "--repo", r.Repo, r.Name)
	}
	if r.Version != "" {
		args = append(args, "--version", r.Version)
	}
	if r.Devel {
		args = append(args, "--devel")
	}
	home := filepath.Join(tmp, "helm")
	cmd := exec.CommandContext(ctx, r.Helm, args...)
	cmd.Env = append(append([]string(nil), r.Env...),
		"HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home+"/.cache", "HELM_DATA_HOME="+home+"/.data")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: 'helm %s' failed: %s: %w", what, strings.Join(args, " "), strings.TrimSpace(stderr.String()), err)
	}
	archives, _ := filepath.Glob(filepath.Join(tmp, "pull", "*.tgz"))
	if len(archives) != 1 {
		return "", fmt.Errorf("%s: helm pull left %d archives, want 1", what, len(archives))
	}
	data, err := os.ReadFile(archives[0])
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(archives[0]), r.Name+"-"), ".tgz")
	if !strings.HasPrefix(r.Repo, "oci://") {
		// helm pull --repo checks nothing: compare with the index. (For
		// oci://, helm checks the archive against the registry's manifest.)
		want, err := f.indexDigest(ctx, r.Repo, r.Name, version)
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		if want != digest {
			return "", fmt.Errorf("%s: the archive's digest is sha256:%s, the repository's index says sha256:%s", what, digest, want)
		}
	}
	into := filepath.Join(tmp, "chart")
	if r.Version != "" {
		into = filepath.Join(into, r.Name+"-"+r.Version)
	}
	if err := f.o.Net.Untar(data, into); err != nil {
		return "", fmt.Errorf("%s: unpacking %s: %w", what, filepath.Base(archives[0]), err)
	}
	if st, err := os.Stat(filepath.Join(into, r.Name)); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%s: the archive holds no directory %s", what, r.Name)
	}
	tree, err := treeDigest(filepath.Join(tmp, "chart"))
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	// Replace what was kept: the directory moves whole, then its record.
	_ = os.Remove(filepath.Join(dir, chartDigestFile))
	old := filepath.Join(dir, ".old-"+filepath.Base(tmp))
	_ = os.Rename(filepath.Join(dir, "chart"), old)
	_ = os.RemoveAll(old)
	if err := os.Rename(filepath.Join(tmp, "chart"), filepath.Join(dir, "chart")); err != nil {
		if keptOK() {
			return filepath.Join(dir, "chart"), nil // another run kept it first
		}
		return "", fmt.Errorf("%s: keeping the chart: %w", what, err)
	}
	record := "archive sha256:" + digest + "\ntree sha256:" + tree + "\n"
	if m := ociDigest().FindStringSubmatch(stdout.String() + "\n" + stderr.String()); m != nil && strings.HasPrefix(r.Repo, "oci://") {
		record += "manifest sha256:" + m[1] + "\n"
	}
	if err := writeFileAtomic(filepath.Join(dir, chartDigestFile), []byte(record)); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return filepath.Join(dir, "chart"), nil
}

// indexDigest reads the digest of name at version from the repository's
// index.yaml.
func (f *Fetcher) indexDigest(ctx context.Context, repo, name, version string) (string, error) {
	url := strings.TrimSuffix(repo, "/") + "/index.yaml"
	data, err := f.o.Net.Get(ctx, url)
	var se *StatusError
	switch {
	case errors.As(err, &se):
		return "", fmt.Errorf("reading the repository's index %s: %w", url, err)
	case err != nil:
		return "", fmt.Errorf("reading the repository's index: %w", err)
	}
	var idx struct {
		Entries map[string][]struct {
			Version string `yaml:"version"`
			Digest  string `yaml:"digest"`
		} `yaml:"entries"`
	}
	if err := yaml.Unmarshal(data, &idx); err != nil {
		return "", fmt.Errorf("the repository's index %s: %w", url, err)
	}
	for _, e := range idx.Entries[name] {
		if e.Version == version && e.Digest != "" {
			return strings.TrimPrefix(e.Digest, "sha256:"), nil
		}
	}
	return "", fmt.Errorf("the repository's index %s gives no digest for %s %s", url, name, version)
}

// treeDigest is the SHA-256 of the relative paths and contents of the
// regular files below dir, in lexical order.
func treeDigest(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		} else if !d.IsDir() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%d:%s%d:", len(rel), filepath.ToSlash(rel), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
