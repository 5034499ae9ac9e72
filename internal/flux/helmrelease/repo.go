package helmrelease

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"
)

// Index is a chart repository's index.yaml, as source-controller reads it.
type Index struct {
	APIVersion string                   `json:"apiVersion"`
	Entries    map[string][]*IndexEntry `json:"entries"`
}

// IndexEntry is one chart version of an index.
type IndexEntry struct {
	APIVersion string    `json:"apiVersion,omitempty"`
	Name       string    `json:"name"`
	Version    string    `json:"version"`
	Type       string    `json:"type,omitempty"`
	URLs       []string  `json:"urls"`
	Digest     string    `json:"digest,omitempty"`
	Created    time.Time `json:"created,omitempty"`
}

// The index errors, worded as helm's.
var (
	ErrEmptyIndex     = errors.New("empty index.yaml file")
	ErrNoAPIVersion   = errors.New("no API version specified")
	ErrNoChartName    = errors.New("no chart name found")
	ErrNoChartVersion = errors.New("no chart version found")
	// ErrDigestMismatch: a downloaded chart is not the one the index
	// describes.
	ErrDigestMismatch = errors.New("digest mismatch")
)

// source-controller's default --helm-index-max-size and
// --helm-chart-max-size.
const (
	maxIndexSize = 50 << 20
	maxChartSize = 10 << 20
)

// ParseIndex reads an index.yaml as source-controller's IndexFromBytes
// does: YAML (or JSON), an apiVersion required, entries that are not
// valid chart versions dropped (no name, a name that is a path, no
// version or one that is not semver, an unknown type), each chart's
// versions sorted newest first.
func ParseIndex(data []byte) (*Index, error) {
	if len(data) == 0 {
		return nil, ErrEmptyIndex
	}
	ix := &Index{}
	if err := yaml.Unmarshal(data, ix); err != nil {
		return nil, err
	}
	if ix.APIVersion == "" {
		return nil, ErrNoAPIVersion
	}
	for name, cvs := range ix.Entries {
		kept := cvs[:0]
		for _, cv := range cvs {
			if cv == nil || !validEntry(cv) {
				continue
			}
			kept = append(kept, cv)
		}
		// helm's SortEntries: newest first, unparsable versions last.
		sort.SliceStable(kept, func(i, j int) bool {
			a, errA := semver.NewVersion(kept[i].Version)
			b, errB := semver.NewVersion(kept[j].Version)
			if errA != nil || errB != nil {
				return errA == nil
			}
			return b.LessThan(a)
		})
		ix.Entries[name] = kept
	}
	return ix, nil
}

func validEntry(cv *IndexEntry) bool {
	if cv.Name == "" || cv.Name == "." || cv.Name == ".." || cv.Name != filepath.Base(cv.Name) || strings.ContainsAny(cv.Name, `/\`) {
		return false
	}
	if cv.Version == "" {
		return false
	}
	if _, err := semver.NewVersion(cv.Version); err != nil {
		return false
	}
	return cv.Type == "" || cv.Type == "application" || cv.Type == "library"
}

// Get is source-controller's ChartRepository.GetChartVersion: the version
// equal to version if there is one; else the newest whose version (three
// dot-separated parts, semver) satisfies the range (every stable version
// for "" and "*"), versions equal but for build metadata ordered by their
// creation time.
func (ix *Index) Get(name, version string) (*IndexEntry, error) {
	cvs, ok := ix.Entries[name]
	if !ok {
		return nil, ErrNoChartName
	}
	if len(cvs) == 0 {
		return nil, ErrNoChartVersion
	}
	if version != "" {
		for _, cv := range cvs {
			if version == cv.Version {
				return cv, nil
			}
		}
	}
	constraint, err := semver.NewConstraint("*")
	if err != nil {
		return nil, err
	}
	if version != "" && version != "*" {
		if constraint, err = semver.NewConstraint(version); err != nil {
			return nil, err
		}
	}
	var matched []*semver.Version
	lookup := map[*semver.Version]*IndexEntry{}
	for _, cv := range cvs {
		if strings.Count(cv.Version, ".") < 2 {
			continue // fluxcd/pkg/version.ParseVersion wants three parts
		}
		v, err := semver.NewVersion(cv.Version)
		if err != nil || !constraint.Check(v) {
			continue
		}
		matched = append(matched, v)
		lookup[v] = cv
	}
	if len(matched) == 0 {
		return nil, fmt.Errorf("no '%s' chart with version matching '%s' found", name, version)
	}
	sort.SliceStable(matched, func(i, j int) bool {
		left, right := matched[i], matched[j]
		if !left.Equal(right) {
			return !left.LessThan(right)
		}
		return !lookup[left].Created.Before(lookup[right].Created)
	})
	return lookup[matched[0]], nil
}

// ResolveReferenceURL is helm's repo.ResolveReferenceURL: a chart's URL
// from the index resolved against the repository's URL (a relative one
// below it, with the repository URL's query).
func ResolveReferenceURL(baseURL, refURL string) (string, error) {
	parsedRefURL, err := url.Parse(refURL)
	if err != nil {
		return "", fmt.Errorf("failed to parse %s as URL: %w", refURL, err)
	}
	if parsedRefURL.IsAbs() {
		return refURL, nil
	}
	parsedBaseURL, err := url.Parse(baseURL)
	if err != nil {
		return "", fmt.Errorf("failed to parse %s as URL: %w", baseURL, err)
	}
	parsedBaseURL.RawPath = strings.TrimSuffix(parsedBaseURL.RawPath, "/") + "/"
	parsedBaseURL.Path = strings.TrimSuffix(parsedBaseURL.Path, "/") + "/"
	resolvedURL := parsedBaseURL.ResolveReference(parsedRefURL)
	resolvedURL.RawQuery = parsedBaseURL.RawQuery
	return resolvedURL.String(), nil
}

// Repository is an HTTP(S) chart repository (a HelmRepository without
// type oci).
type Repository struct {
	// URL is the repository's URL (normalized with NormalizeURL).
	URL string
	// Client does the requests; http.DefaultClient when nil.
	Client *http.Client
}

// Chart is a chart pulled from a repository.
type Chart struct {
	// Name and Version are the index entry's.
	Name, Version string
	// URL is where the archive was downloaded from.
	URL string
	// Digest is the archive's SHA-256 (hex): what a cache keys it by.
	Digest string
	// Data is the archive (.tgz).
	Data []byte
}

func (r *Repository) get(ctx context.Context, u string, max int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	c := r.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("failed to fetch %s : %s", u, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s exceeds the maximum size of %d bytes", u, max)
	}
	return data, nil
}

// Index downloads and parses the repository's index.yaml (URL joined
// with index.yaml, as source-controller does).
func (r *Repository) Index(ctx context.Context) (*Index, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, err
	}
	u.RawPath = path.Join(u.RawPath, "index.yaml")
	u.Path = path.Join(u.Path, "index.yaml")
	data, err := r.get(ctx, u.String(), maxIndexSize)
	if err != nil {
		return nil, err
	}
	ix, err := ParseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return ix, nil
}

// Pull resolves name and version (a semver range) in the repository's
// index and downloads the chart from the entry's first URL, checking it
// against the digest the index gives (source-controller does not; kpipe
// keeps charts by digest and refuses a mismatch).
func (r *Repository) Pull(ctx context.Context, name, version string) (*Chart, error) {
	ix, err := r.Index(ctx)
	if err != nil {
		return nil, err
	}
	cv, err := ix.Get(name, version)
	if err != nil {
		return nil, fmt.Errorf("chart %s version %q from %s: %w", name, version, r.URL, err)
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("chart '%s' has no downloadable URLs", cv.Name)
	}
	u, err := ResolveReferenceURL(r.URL, cv.URLs[0])
	if err != nil {
		return nil, err
	}
	data, err := r.get(ctx, u, maxChartSize)
	if err != nil {
		return nil, fmt.Errorf("chart %s %s: %w", name, cv.Version, err)
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	if want := strings.TrimPrefix(cv.Digest, "sha256:"); want != "" && want != digest {
		return nil, fmt.Errorf("chart %s %s from %s: %w: the archive's is sha256:%s, the index says sha256:%s", name, cv.Version, u, ErrDigestMismatch, digest, want)
	}
	return &Chart{Name: cv.Name, Version: cv.Version, URL: u, Digest: digest, Data: data}, nil
}
