package helmrelease

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The patterns of the HelmRelease CRD (fluxcd/pkg/apis/meta
// ValuesReference).
// (compiled on first use: every kpipe process links this package).
var (
	valuesKeyPattern  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\-._a-zA-Z0-9]+$`) })
	targetPathPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-zA-Z0-9_\-.\\\/]|\[[0-9]{1,5}\])+$`) })
)

// Validate checks what the HelmRelease CRD's schema checks of the fields
// that decide what is rendered, so that an object a cluster would refuse
// is not rendered: a name; exactly one of spec.chart and spec.chartRef;
// the enums of source kinds, CRD policies, reconcile and post-render
// strategies and values reference kinds; the lengths of the release name
// and namespaces; the patterns of valuesKey and targetPath. The errors
// are worded as the API server's field errors, all of them joined.
func (hr *HelmRelease) Validate() error {
	var errs []string
	bad := func(field, format string, args ...any) {
		errs = append(errs, "spec."+field+": "+fmt.Sprintf(format, args...))
	}
	enum := func(field, v string, allowed ...string) {
		if v != "" && !slices.Contains(allowed, v) {
			bad(field, "Unsupported value: %q: supported values: %s", v, quoteAll(allowed))
		}
	}
	length := func(field, v string, max int) {
		if v != "" && len(v) > max {
			bad(field, "Too long: may not be more than %d bytes", max)
		}
	}
	if hr.Name == "" {
		errs = append(errs, "metadata.name: Required value: name or generateName is required")
	}
	s := &hr.Spec
	if (s.Chart == nil) == (s.ChartRef == nil) {
		errs = append(errs, "spec: Invalid value: \"object\": either chart or chartRef must be set")
	}
	if c := s.Chart; c != nil {
		if c.Spec.Chart == "" {
			bad("chart.spec.chart", "Required value")
		}
		length("chart.spec.chart", c.Spec.Chart, 2048)
		if c.Spec.SourceRef.Name == "" {
			bad("chart.spec.sourceRef.name", "Required value")
		}
		enum("chart.spec.sourceRef.kind", c.Spec.SourceRef.Kind, "HelmRepository", "GitRepository", "Bucket")
		enum("chart.spec.reconcileStrategy", c.Spec.ReconcileStrategy, "ChartVersion", "Revision")
	}
	if r := s.ChartRef; r != nil {
		if r.Kind == "" {
			bad("chartRef.kind", "Required value")
		}
		enum("chartRef.kind", r.Kind, "OCIRepository", "HelmChart", "ExternalArtifact")
		if r.Name == "" {
			bad("chartRef.name", "Required value")
		}
	}
	length("releaseName", s.ReleaseName, 53)
	length("targetNamespace", s.TargetNamespace, 63)
	length("storageNamespace", s.StorageNamespace, 63)
	for i, ref := range s.ValuesFrom {
		f := fmt.Sprintf("valuesFrom[%d].", i)
		if ref.Kind == "" {
			bad(f+"kind", "Required value")
		}
		enum(f+"kind", ref.Kind, "Secret", "ConfigMap")
		if ref.Name == "" {
			bad(f+"name", "Required value")
		}
		length(f+"valuesKey", ref.ValuesKey, 253)
		if ref.ValuesKey != "" && !valuesKeyPattern().MatchString(ref.ValuesKey) {
			bad(f+"valuesKey", "Invalid value: %q: should match '%s'", ref.ValuesKey, valuesKeyPattern())
		}
		length(f+"targetPath", ref.TargetPath, 250)
		if ref.TargetPath != "" && !targetPathPattern().MatchString(ref.TargetPath) {
			bad(f+"targetPath", "Invalid value: %q: should match '%s'", ref.TargetPath, targetPathPattern())
		}
	}
	if s.Install != nil {
		enum("install.crds", s.Install.CRDs, "Skip", "Create", "CreateReplace")
	}
	if s.Upgrade != nil {
		enum("upgrade.crds", s.Upgrade.CRDs, "Skip", "Create", "CreateReplace")
	}
	enum("postRenderStrategy", s.PostRenderStrategy, "nohooks", "combined", "separate")
	if len(errs) == 0 {
		return nil
	}
	return errors.New("HelmRelease." + Group + " \"" + hr.Name + "\" is invalid: " + strings.Join(errs, ", "))
}

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
