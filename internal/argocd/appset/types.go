// Package appset expands ApplicationSets as Argo CD v3.6.1's
// ApplicationSet controller does (applicationset/generators,
// controllers/template, utils), for the generators a repository can
// answer alone: List, Git (directories and files, from a local checkout),
// Matrix and Merge of those; the others (Clusters,
// ClusterDecisionResource, SCMProvider, PullRequest, Plugin, Oci) need a
// cluster or the network and are refused with a message saying so. Both
// template modes: fasttemplate (a tag that is not a string parameter is
// left as written) and goTemplate (text/template with sprig's functions,
// the library Argo CD uses, minus env/expandenv/getHostByName, plus
// normalize, toYaml, fromYaml, fromYamlArray, tpl), with
// goTemplateOptions such as missingkey=error.
//
// It imports kpipe's internal/argocd/app and manifest,
// github.com/Masterminds/sprig/v3 and dario.cat/mergo (Argo CD's merge of
// goTemplate parameter sets) and sigs.k8s.io/yaml (Argo CD's YAML).
package appset

import (
	"encoding/json"
	"fmt"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/manifest"
)

// ApplicationSet is an argoproj.io/v1alpha1 ApplicationSet.
type ApplicationSet struct {
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Metadata   app.ObjectMeta `json:"metadata"`
	Spec       Spec           `json:"spec"`
}

// Spec is an ApplicationSet's spec.
type Spec struct {
	GoTemplate        bool           `json:"goTemplate,omitempty"`
	GoTemplateOptions []string       `json:"goTemplateOptions,omitempty"`
	Generators        []Generator    `json:"generators"`
	Template          map[string]any `json:"template"`
	TemplatePatch     *string        `json:"templatePatch,omitempty"`
	SyncPolicy        *struct {
		PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion,omitempty"`
	} `json:"syncPolicy,omitempty"`
}

// Generator is one generator entry (top level or nested).
type Generator struct {
	List                    *ListGenerator  `json:"list,omitempty"`
	Clusters                json.RawMessage `json:"clusters,omitempty"`
	Git                     *GitGenerator   `json:"git,omitempty"`
	SCMProvider             json.RawMessage `json:"scmProvider,omitempty"`
	ClusterDecisionResource json.RawMessage `json:"clusterDecisionResource,omitempty"`
	PullRequest             json.RawMessage `json:"pullRequest,omitempty"`
	Plugin                  json.RawMessage `json:"plugin,omitempty"`
	Matrix                  *Combine        `json:"matrix,omitempty"`
	Merge                   *Combine        `json:"merge,omitempty"`
	Oci                     json.RawMessage `json:"oci,omitempty"`
	Selector                *LabelSelector  `json:"selector,omitempty"`
}

// ListGenerator is the list generator.
type ListGenerator struct {
	Elements     []json.RawMessage `json:"elements"`
	ElementsYaml string            `json:"elementsYaml,omitempty"`
	Template     map[string]any    `json:"template,omitempty"`
}

// GitGenerator is the git generator.
type GitGenerator struct {
	RepoURL         string            `json:"repoURL"`
	Directories     []PathItem        `json:"directories,omitempty"`
	Files           []PathItem        `json:"files,omitempty"`
	Revision        string            `json:"revision"`
	Template        map[string]any    `json:"template,omitempty"`
	PathParamPrefix string            `json:"pathParamPrefix,omitempty"`
	Values          map[string]string `json:"values,omitempty"`
}

// PathItem is a directories or files entry.
type PathItem struct {
	Path    string `json:"path"`
	Exclude bool   `json:"exclude,omitempty"`
}

// Combine is a matrix or merge generator.
type Combine struct {
	Generators []Generator    `json:"generators"`
	MergeKeys  []string       `json:"mergeKeys,omitempty"`
	Template   map[string]any `json:"template,omitempty"`
}

// LabelSelector is a Kubernetes label selector.
type LabelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []struct {
		Key      string   `json:"key"`
		Operator string   `json:"operator"`
		Values   []string `json:"values,omitempty"`
	} `json:"matchExpressions,omitempty"`
}

// Parse decodes an ApplicationSet document as Argo CD reads it.
func Parse(doc []byte) (*ApplicationSet, error) {
	j, err := manifest.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var a ApplicationSet
	if err := json.Unmarshal(j, &a); err != nil {
		return nil, err
	}
	if a.Kind != "" && a.Kind != app.KindApplicationSet {
		return nil, fmt.Errorf("kind %s is not %s", a.Kind, app.KindApplicationSet)
	}
	return &a, nil
}
