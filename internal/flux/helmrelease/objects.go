package helmrelease

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
)

// Objects holds the objects of a rendered tree a HelmRelease may refer to:
// ConfigMaps and Secrets (valuesFrom) and Flux sources (GitRepository,
// HelmRepository, OCIRepository, HelmChart, ExternalArtifact, Bucket),
// found by kind, namespace and name. The first object added under a key
// is kept (a later one with the same key is counted in Duplicates): a
// tree that renders one object twice is ambiguous, and the caller says
// so. The zero value is not usable; call NewObjects.
type Objects struct {
	byKey map[objectKey]map[string]any
	dups  map[objectKey]int
}

type objectKey struct{ kind, namespace, name string }

func (k objectKey) String() string { return k.kind + "/" + k.namespace + "/" + k.name }

// NewObjects returns an empty set of objects.
func NewObjects() *Objects {
	return &Objects{byKey: map[objectKey]map[string]any{}, dups: map[objectKey]int{}}
}

// kept are the kinds Add keeps, with their API groups.
var kept = map[string]string{
	"ConfigMap":        "",
	"Secret":           "",
	"GitRepository":    sourceGroup,
	"HelmRepository":   sourceGroup,
	"OCIRepository":    sourceGroup,
	"HelmChart":        sourceGroup,
	"ExternalArtifact": sourceGroup,
	"Bucket":           sourceGroup,
}

const sourceGroup = "source.toolkit.fluxcd.io"

// Add adds the objects Objects keeps (other kinds are ignored) and
// returns how many it kept.
func (o *Objects) Add(objs ...map[string]any) int {
	n := 0
	for _, obj := range objs {
		kind, _ := obj["kind"].(string)
		group, ok := kept[kind]
		if !ok {
			continue
		}
		api, _ := obj["apiVersion"].(string)
		if g, _, found := strings.Cut(api, "/"); (group == "" && found) || (group != "" && g != group) {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		ns, _ := meta["namespace"].(string)
		k := objectKey{kind, ns, name}
		if _, ok := o.byKey[k]; ok {
			o.dups[k]++
			continue
		}
		o.byKey[k] = obj
		n++
	}
	return n
}

// Duplicates lists the Kind/namespace/name of objects added more than
// once (only the first one is used), sorted.
func (o *Objects) Duplicates() []string {
	var out []string
	for k := range o.dups {
		out = append(out, k.String())
	}
	sort.Strings(out)
	return out
}

// Get returns the object of that kind, namespace and name, or nil.
func (o *Objects) Get(kind, namespace, name string) map[string]any {
	return o.byKey[objectKey{kind, namespace, name}]
}

// stringMap is obj's field as a map of strings (null values as "").
func stringMap(obj map[string]any, field string) (map[string]string, error) {
	out := map[string]string{}
	m, ok := obj[field].(map[string]any)
	if !ok && obj[field] != nil {
		return nil, fmt.Errorf("%s is not a map", field)
	}
	for k, v := range m {
		s, ok := v.(string)
		if !ok && v != nil {
			return nil, fmt.Errorf("%s.%s is not a string", field, k)
		}
		out[k] = s
	}
	return out, nil
}

// configMapData is a ConfigMap's data, as the API's typed ConfigMap holds
// it (binaryData is never read for values).
func configMapData(obj map[string]any) (map[string]string, error) {
	return stringMap(obj, "data")
}

// secretData is a Secret's data as the API server stores it: data's
// values decoded from base64, then stringData's written over them.
func secretData(obj map[string]any) (map[string][]byte, error) {
	data, err := stringMap(obj, "data")
	if err != nil {
		return nil, err
	}
	sd, err := stringMap(obj, "stringData")
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(data)+len(sd))
	for k, s := range data {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("data.%s: %w", k, err)
		}
		out[k] = b
	}
	for k, s := range sd {
		out[k] = []byte(s)
	}
	return out, nil
}
