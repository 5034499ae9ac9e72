package helmrelease

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"sigs.k8s.io/yaml"
)

// The ways a chart reaches helm-controller (ChartSource.Type).
const (
	// TypeHelmHTTP: a HelmRepository with an HTTP(S) index.yaml; Chart is
	// the chart's name, Version a semver range.
	TypeHelmHTTP = "helm-http"
	// TypeHelmOCI: a HelmRepository of type oci; the chart is pulled from
	// URL/Chart, Version a semver range over its tags.
	TypeHelmOCI = "helm-oci"
	// TypeGit: a GitRepository; Chart is a path in the repository.
	TypeGit = "git"
	// TypeBucket: a Bucket; Chart is a path in the bucket.
	TypeBucket = "bucket"
	// TypeOCIArtifact: spec.chartRef to an OCIRepository: the chart is the
	// artifact at URL and OCIRef.
	TypeOCIArtifact = "oci-artifact"
	// TypeExternalArtifact: spec.chartRef to an ExternalArtifact.
	TypeExternalArtifact = "external-artifact"
)

// ChartSource is the chart a HelmRelease needs, as helm-controller and
// source-controller resolve it.
type ChartSource struct {
	// Type is one of the Type constants.
	Type string
	// Kind, Namespace and Name are the source object's (for spec.chart, the
	// sourceRef's, its namespace defaulting to the HelmRelease's; for a
	// chartRef to a HelmChart, that HelmChart's sourceRef, in the
	// HelmChart's namespace).
	Kind, Namespace, Name string
	// HelmChart is the namespace/name of the HelmChart the chart is built
	// by: the one helm-controller creates for spec.chart
	// (<sourceNamespace>/<hrNamespace>-<hrName>), or the one chartRef names.
	HelmChart string
	// URL is the source's URL: the HelmRepository's (for HTTP, normalized
	// with one trailing slash as source-controller does; for OCI without
	// one), the GitRepository's, the OCIRepository's. Empty for an
	// ExternalArtifact and a Bucket.
	URL string
	// Chart is the chart's name (HelmRepository) or its path in the source
	// (GitRepository, Bucket); empty for an artifact.
	Chart string
	// Version is the semver range of a HelmRepository chart ("*" when the
	// spec gives none); empty otherwise (source-controller ignores the
	// version of a chart from a path).
	Version string
	// OCIRef is an OCIRepository's spec.ref (nil when it has none: the
	// "latest" tag).
	OCIRef *OCIRef
	// ValuesFiles and IgnoreMissingValuesFiles replace the chart's
	// values.yaml with the merge of these files (paths in the source for a
	// path chart, in the chart for a repository chart).
	ValuesFiles              []string
	IgnoreMissingValuesFiles bool
	// ReconcileStrategy is ChartVersion (the default) or Revision (the
	// chart's version gets the source revision as build metadata).
	ReconcileStrategy string
	// Source is the source object found in the rendered tree.
	Source map[string]any
}

// OCIRef is an OCIRepository's spec.ref.
type OCIRef struct {
	Digest       string `json:"digest,omitempty"`
	SemVer       string `json:"semver,omitempty"`
	SemverFilter string `json:"semverFilter,omitempty"`
	Tag          string `json:"tag,omitempty"`
}

// ErrSourceNotFound is returned (wrapped) when the source a HelmRelease
// names is not in the rendered tree: it comes from outside (another
// repository, a cluster's bootstrap) and the caller must supply it.
var ErrSourceNotFound = errors.New("not found in the rendered objects")

// ResolveOptions are helm-controller's flags that change what a
// HelmRelease may refer to.
type ResolveOptions struct {
	// NoCrossNamespaceRefs is --no-cross-namespace-refs (Flux's
	// multi-tenancy lockdown): sources in another namespace are refused.
	NoCrossNamespaceRefs bool
	// AllowExternalArtifact is the ExternalArtifact feature gate.
	AllowExternalArtifact bool
}

func (o ResolveOptions) allows(hr *HelmRelease, kind, namespace, name string) error {
	if o.NoCrossNamespaceRefs && hr.Namespace != namespace {
		return fmt.Errorf("cross-namespace references are not allowed: cannot access %s %s/%s", kind, namespace, name)
	}
	return nil
}

// ResolveChart finds the chart source of hr among objs: spec.chart's
// sourceRef (through the HelmChart helm-controller makes of it), or
// spec.chartRef (an OCIRepository, a HelmChart, an ExternalArtifact). A
// source absent from objs is an error wrapping ErrSourceNotFound, except
// for GitRepository and Bucket sources, which the caller maps to a
// directory (the source is returned with a nil Source object).
func ResolveChart(hr *HelmRelease, objs *Objects, o ResolveOptions) (*ChartSource, error) {
	switch {
	case hr.Spec.Chart != nil && hr.Spec.ChartRef == nil:
		t := hr.Spec.Chart.Spec
		ns := t.SourceRef.Namespace
		if ns == "" {
			ns = hr.Namespace
		}
		helmChart := ns + "/" + hr.Namespace + "-" + hr.Name
		if err := o.allows(hr, "HelmChart", ns, hr.Namespace+"-"+hr.Name); err != nil {
			return nil, err
		}
		return fromChartSpec(hr, objs, t, ns, helmChart)
	case hr.Spec.ChartRef != nil && hr.Spec.Chart == nil:
		ref := hr.Spec.ChartRef
		ns := ref.Namespace
		if ns == "" {
			ns = hr.Namespace
		}
		if err := o.allows(hr, ref.Kind, ns, ref.Name); err != nil {
			return nil, err
		}
		switch ref.Kind {
		case "OCIRepository":
			src := objs.Get("OCIRepository", ns, ref.Name)
			if src == nil {
				return nil, fmt.Errorf("HelmRelease %s: OCIRepository %s/%s: %w", hr.id(), ns, ref.Name, ErrSourceNotFound)
			}
			var spec struct {
				URL       string  `json:"url"`
				Reference *OCIRef `json:"ref,omitempty"`
			}
			if err := specOf(src, &spec); err != nil {
				return nil, fmt.Errorf("OCIRepository %s/%s: %w", ns, ref.Name, err)
			}
			return &ChartSource{Type: TypeOCIArtifact, Kind: ref.Kind, Namespace: ns, Name: ref.Name,
				URL: spec.URL, OCIRef: spec.Reference, Source: src}, nil
		case "ExternalArtifact":
			if !o.AllowExternalArtifact {
				return nil, fmt.Errorf("can't access '%s/%s/%s', ExternalArtifact feature gate is disabled", ref.Kind, ns, ref.Name)
			}
			src := objs.Get("ExternalArtifact", ns, ref.Name)
			if src == nil {
				return nil, fmt.Errorf("HelmRelease %s: ExternalArtifact %s/%s: %w", hr.id(), ns, ref.Name, ErrSourceNotFound)
			}
			return &ChartSource{Type: TypeExternalArtifact, Kind: ref.Kind, Namespace: ns, Name: ref.Name, Source: src}, nil
		case "HelmChart":
			hc := objs.Get("HelmChart", ns, ref.Name)
			if hc == nil {
				return nil, fmt.Errorf("HelmRelease %s: HelmChart %s/%s: %w", hr.id(), ns, ref.Name, ErrSourceNotFound)
			}
			var spec ChartTemplateSpec
			if err := specOf(hc, &spec); err != nil {
				return nil, fmt.Errorf("HelmChart %s/%s: %w", ns, ref.Name, err)
			}
			// A HelmChart's sourceRef is local to its namespace.
			spec.SourceRef.Namespace = ""
			return fromChartSpec(hr, objs, spec, ns, ns+"/"+ref.Name)
		default:
			return nil, fmt.Errorf("HelmRelease %s: unsupported chartRef kind %q", hr.id(), ref.Kind)
		}
	default:
		return nil, fmt.Errorf("HelmRelease %s: either chart or chartRef must be set", hr.id())
	}
}

func fromChartSpec(hr *HelmRelease, objs *Objects, t ChartTemplateSpec, ns, helmChart string) (*ChartSource, error) {
	cs := &ChartSource{Kind: t.SourceRef.Kind, Namespace: ns, Name: t.SourceRef.Name, HelmChart: helmChart,
		Chart: t.Chart, ValuesFiles: t.ValuesFiles, IgnoreMissingValuesFiles: t.IgnoreMissingValuesFiles,
		ReconcileStrategy: t.ReconcileStrategy}
	if t.ValuesFile != "" {
		// v2beta2's valuesFile comes first (helm-controller <= v1.4).
		cs.ValuesFiles = append([]string{t.ValuesFile}, t.ValuesFiles...)
	}
	if cs.ReconcileStrategy == "" {
		cs.ReconcileStrategy = "ChartVersion"
	}
	src := objs.Get(cs.Kind, ns, cs.Name)
	cs.Source = src
	switch cs.Kind {
	case "HelmRepository":
		if src == nil {
			return nil, fmt.Errorf("HelmRelease %s: HelmRepository %s/%s: %w", hr.id(), ns, cs.Name, ErrSourceNotFound)
		}
		var spec struct {
			URL  string `json:"url"`
			Type string `json:"type,omitempty"`
		}
		if err := specOf(src, &spec); err != nil {
			return nil, fmt.Errorf("HelmRepository %s/%s: %w", ns, cs.Name, err)
		}
		u, err := NormalizeURL(spec.URL)
		if err != nil {
			return nil, fmt.Errorf("HelmRepository %s/%s: %w", ns, cs.Name, err)
		}
		cs.URL = u
		cs.Type = TypeHelmHTTP
		if spec.Type == "oci" {
			cs.Type = TypeHelmOCI
			if !strings.HasPrefix(u, "oci://") {
				return nil, fmt.Errorf("HelmRepository %s/%s: invalid OCI registry URL: %s", ns, cs.Name, u)
			}
		}
		cs.Version = t.Version
		if cs.Version == "" {
			cs.Version = "*"
		}
	case "GitRepository":
		cs.Type = TypeGit
		if src != nil {
			var spec struct {
				URL string `json:"url"`
			}
			if err := specOf(src, &spec); err != nil {
				return nil, fmt.Errorf("GitRepository %s/%s: %w", ns, cs.Name, err)
			}
			cs.URL = spec.URL
		}
	case "Bucket":
		cs.Type = TypeBucket
	default:
		return nil, fmt.Errorf("HelmRelease %s: unsupported chart source kind %q", hr.id(), cs.Kind)
	}
	return cs, nil
}

// specOf decodes obj's spec into v as Flux's API types decode it.
func specOf(obj map[string]any, v any) error {
	spec, _ := obj["spec"].(map[string]any)
	j, err := yaml.Marshal(spec)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(j, v)
}

// NormalizeURL is source-controller's repository.NormalizeURL: an oci://
// URL without trailing slashes, any other with exactly one.
func NormalizeURL(repositoryURL string) (string, error) {
	if repositoryURL == "" {
		return "", nil
	}
	u, err := url.Parse(repositoryURL)
	if err != nil {
		return "", err
	}
	if u.Scheme == "oci" {
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = strings.TrimRight(u.RawPath, "/")
		return u.String(), nil
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/"
	u.RawPath = strings.TrimRight(u.RawPath, "/") + "/"
	return u.String(), nil
}

// LocalSource returns the directory of a GitRepository or Bucket source in
// localSources (keys Kind/Namespace/Name, as flux's --local-sources), or
// false.
func (cs *ChartSource) LocalSource(localSources map[string]string) (string, bool) {
	dir, ok := localSources[cs.Kind+"/"+cs.Namespace+"/"+cs.Name]
	return dir, ok
}
