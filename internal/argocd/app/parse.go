package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/internal/argocd/manifest"
)

// ParseApplication decodes one Application document (YAML or JSON) as
// Argo CD reads it: YAML 1.1 through JSON, unknown fields ignored.
func ParseApplication(doc []byte) (*Application, error) {
	j, err := manifest.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var a Application
	if err := json.Unmarshal(j, &a); err != nil {
		return nil, err
	}
	if a.Kind != "" && a.Kind != KindApplication {
		return nil, fmt.Errorf("kind %s is not %s", a.Kind, KindApplication)
	}
	return &a, nil
}

// InstanceName is the name Argo CD knows the Application by: its name, or
// "<namespace>_<name>" when it lives outside the controller's namespace.
func (a *Application) InstanceName(controllerNamespace string) string {
	if a.Metadata.Namespace == "" || a.Metadata.Namespace == controllerNamespace {
		return a.Metadata.Name
	}
	return a.Metadata.Namespace + "_" + a.Metadata.Name
}

// HasMultipleSources reports sources[] in use.
func (s *ApplicationSpec) HasMultipleSources() bool {
	return isNullRaw(s.SourceHydrator) && len(s.Sources) > 0
}

// GetSources is the list the controller generates from: sources[], else
// source, else none. (A sourceHydrator's sync source is not supported:
// it names a hydrated branch, not this checkout.)
func (s *ApplicationSpec) GetSources() []ApplicationSource {
	if s.HasMultipleSources() {
		return s.Sources
	}
	if s.Source != nil {
		return []ApplicationSource{*s.Source}
	}
	return nil
}

// GetProject is the project, "default" when unset.
func (s *ApplicationSpec) GetProject() string {
	if s.Project == "" {
		return DefaultProject
	}
	return s.Project
}

// Normalize is the controller's NormalizeApplicationSpec: project
// defaulted, a zero syncPolicy dropped, zero helm/kustomize options
// dropped (so they do not force a type), a directory that is zero but for
// include/exclude reduced to those.
func (s *ApplicationSpec) Normalize() {
	if s.Project == "" {
		s.Project = DefaultProject
	}
	if s.SyncPolicy.IsZero() {
		s.SyncPolicy = nil
	}
	if len(s.Sources) > 0 {
		for i := range s.Sources {
			NormalizeSource(&s.Sources[i])
		}
	} else if s.Source != nil {
		NormalizeSource(s.Source)
	}
}

// NormalizeSource drops a source's zero option blocks.
func NormalizeSource(src *ApplicationSource) {
	if src.Kustomize != nil && src.Kustomize.IsZero() {
		src.Kustomize = nil
	}
	if src.Helm != nil && src.Helm.IsZero() {
		src.Helm = nil
	}
	if d := src.Directory; d != nil && d.IsZero() {
		if d.Exclude == "" && d.Include == "" {
			src.Directory = nil
		} else {
			src.Directory = &ApplicationSourceDirectory{Exclude: d.Exclude, Include: d.Include}
		}
	}
}

var validRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]+$`) })

// RefTarget is what a "$name" in a value file path points at.
type RefTarget struct {
	RepoURL        string
	TargetRevision string
	Chart          string
}

// RefSources checks the ref names of sources and maps "$ref" to its
// source, as util/argo.GetRefSources does (errors worded as Argo CD's).
func RefSources(sources []ApplicationSource) (map[string]RefTarget, error) {
	seen := map[string]bool{}
	for _, s := range sources {
		if s.Ref == "" {
			continue
		}
		if !validRef().MatchString(s.Ref) {
			return nil, fmt.Errorf("sources.ref %s cannot contain any special characters except '_' and '-'", s.Ref)
		}
		if seen[s.Ref] {
			return nil, fmt.Errorf("invalid sources: multiple sources had the same `ref` key")
		}
		seen[s.Ref] = true
	}
	refs := map[string]RefTarget{}
	for _, s := range sources {
		if s.Ref != "" {
			refs["$"+s.Ref] = RefTarget{RepoURL: s.RepoURL, TargetRevision: s.TargetRevision, Chart: s.Chart}
		}
	}
	return refs, nil
}

// Header is the apiVersion and kind of a document.
type Header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// IsArgo reports an argoproj.io Application or ApplicationSet.
func (h Header) IsArgo() bool {
	g, _, _ := strings.Cut(h.APIVersion, "/")
	return g == Group && (h.Kind == KindApplication || h.Kind == KindApplicationSet)
}

func trimBOM(b []byte) []byte { return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) }
