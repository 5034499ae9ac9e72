package fieldspec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/loaders"
	yaml2 "go.yaml.in/yaml/v2"
)

// Config lists, for each builtin transformer, the fields it works on. It
// mirrors kustomize's TransformerConfig, field for field and key for key, so
// a `configurations:` file reads the same here as in kustomize.
type Config struct {
	// NamePrefix: where namePrefix is prepended (metadata/name).
	NamePrefix []loaders.FieldSpec `json:"namePrefix,omitempty" yaml:"namePrefix,omitempty"`
	// NameSuffix: where nameSuffix is appended (metadata/name).
	NameSuffix []loaders.FieldSpec `json:"nameSuffix,omitempty" yaml:"nameSuffix,omitempty"`
	// Namespace: fields besides metadata/namespace that the namespace
	// transformer sets.
	Namespace []loaders.FieldSpec `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	// CommonLabels: where commonLabels (and labels with includeSelectors)
	// are added, selectors included.
	CommonLabels []loaders.FieldSpec `json:"commonLabels,omitempty" yaml:"commonLabels,omitempty"`
	// Labels: extra fields for every `labels:` entry. Empty by default.
	Labels []loaders.FieldSpec `json:"labels,omitempty" yaml:"labels,omitempty"`
	// TemplateLabels: where `labels:` entries with includeTemplates are
	// added (metadata and pod templates, no selectors).
	TemplateLabels []loaders.FieldSpec `json:"templateLabels,omitempty" yaml:"templateLabels,omitempty"`
	// VolumeClaimTemplateLabels: where `labels:` entries with
	// includeVolumeClaimTemplates are added besides metadata (kustomize
	// v5.8.1+: the StatefulSet volumeClaimTemplates, which templateLabels
	// no longer covers).
	VolumeClaimTemplateLabels []loaders.FieldSpec `json:"volumeClaimTemplateLabels,omitempty" yaml:"volumeClaimTemplateLabels,omitempty"`
	// CommonAnnotations: where commonAnnotations are added.
	CommonAnnotations []loaders.FieldSpec `json:"commonAnnotations,omitempty" yaml:"commonAnnotations,omitempty"`
	// NameReference: for each kind, the fields of other objects that hold
	// names of objects of that kind.
	NameReference []NameBackReference `json:"nameReference,omitempty" yaml:"nameReference,omitempty"`
	// VarReference: fields in which $(VAR) references are replaced.
	VarReference []loaders.FieldSpec `json:"varReference,omitempty" yaml:"varReference,omitempty"`
	// Images: fields holding container image references.
	Images []loaders.FieldSpec `json:"images,omitempty" yaml:"images,omitempty"`
	// Replicas: fields holding replica counts.
	Replicas []loaders.FieldSpec `json:"replicas,omitempty" yaml:"replicas,omitempty"`
}

// Defaults returns kustomize's builtin configuration (its default field
// spec tables), sorted as kustomize sorts them.
// Note that the default tables keep their duplicates (e.g. the Ingress
// spec/tls/secretName reference to Secrets appears twice).
//
// The tables are defaults/*.yaml, kustomize's own text, parsed once when
// kpipe is written rather than in every process (defaultConfig, written
// by TestDefaultConfigTable -update): parsing them took about 2 ms of a
// first build of a small root.
func Defaults() (*Config, error) {
	return defaultConfig.clone(), nil
}

// PlainDefaults returns the defaults merged into an empty configuration,
// (&Config{}).Merge(Defaults()): duplicates removed, sorted; what a
// kustomization without `configurations` builds with. It is worked out
// when kpipe is written (plainDefaultConfig, checked by
// TestDefaultConfigTable): merging took about 75 us of a first build of a
// small root.
func PlainDefaults() *Config {
	return plainDefaultConfig.clone()
}

// Make returns the configuration a kustomization builds with, as kustomize's
// MakeTransformerConfig does: with no configuration files, the defaults;
// otherwise the files are parsed and merged in order into an empty
// configuration (which removes duplicates within them and fails on
// conflicts), and that is merged into the defaults.
func Make(configurations ...[]byte) (*Config, error) {
	c, err := Defaults()
	if err != nil || len(configurations) == 0 {
		return c, err
	}
	acc := &Config{}
	for _, data := range configurations {
		t, err := Parse(data)
		if err != nil {
			return nil, err
		}
		if acc, err = acc.Merge(t); err != nil {
			return nil, err
		}
	}
	return c.Merge(acc)
}

// Parse reads a `configurations:` file as kustomize does (sigs.k8s.io/yaml
// UnmarshalStrict into TransformerConfig): the first YAML document is read
// with YAML 1.1 rules (yes/no are booleans), duplicate keys are errors, keys
// match field names case-insensitively, unknown keys at any level are errors,
// a number or boolean given for a path is taken as its text (but not for
// group, version or kind, which must be strings), and null leaves a field
// empty. An empty file gives an empty Config. Each list is then sorted by
// GVK as kustomize does; duplicates are kept (Make and Merge remove them).
// Error texts follow kustomize's.
func Parse(data []byte) (*Config, error) {
	// The shapes kustomize decodes into; their names appear in JSON errors.
	type Gvk struct {
		Group   string `json:"group,omitempty"`
		Version string `json:"version,omitempty"`
		Kind    string `json:"kind,omitempty"`
	}
	type FieldSpec struct {
		Gvk                `json:",inline,omitempty"`
		Path               string `json:"path,omitempty"`
		CreateIfNotPresent bool   `json:"create,omitempty"`
	}
	type FsSlice []FieldSpec
	type NameBackReferences struct {
		Gvk       `json:",inline,omitempty"`
		Referrers FsSlice `json:"fieldSpecs,omitempty"`
	}
	type nbrSlice []NameBackReferences
	type TransformerConfig struct {
		NamePrefix                FsSlice  `json:"namePrefix,omitempty"`
		NameSuffix                FsSlice  `json:"nameSuffix,omitempty"`
		NameSpace                 FsSlice  `json:"namespace,omitempty"`
		CommonLabels              FsSlice  `json:"commonLabels,omitempty"`
		Labels                    FsSlice  `json:"labels,omitempty"`
		TemplateLabels            FsSlice  `json:"templateLabels,omitempty"`
		VolumeClaimTemplateLabels FsSlice  `json:"volumeClaimTemplateLabels,omitempty"`
		CommonAnnotations         FsSlice  `json:"commonAnnotations,omitempty"`
		NameReference             nbrSlice `json:"nameReference,omitempty"`
		VarReference              FsSlice  `json:"varReference,omitempty"`
		Images                    FsSlice  `json:"images,omitempty"`
		Replicas                  FsSlice  `json:"replicas,omitempty"`
	}

	jsonData, err := yamlToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("error converting YAML to JSON: %w", err)
	}
	var t TransformerConfig
	dec := json.NewDecoder(bytes.NewReader(jsonData))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("error unmarshaling JSON: while decoding JSON: %w", &jsonError{err: err})
	}
	specs := func(s FsSlice) []loaders.FieldSpec {
		if s == nil {
			return nil
		}
		out := make([]loaders.FieldSpec, len(s))
		for i, f := range s {
			out[i] = loaders.FieldSpec{Group: f.Group, Version: f.Version, Kind: f.Kind,
				Path: f.Path, CreateIfNotPresent: f.CreateIfNotPresent}
		}
		return out
	}
	c := &Config{
		NamePrefix:                specs(t.NamePrefix),
		NameSuffix:                specs(t.NameSuffix),
		Namespace:                 specs(t.NameSpace),
		CommonLabels:              specs(t.CommonLabels),
		Labels:                    specs(t.Labels),
		TemplateLabels:            specs(t.TemplateLabels),
		VolumeClaimTemplateLabels: specs(t.VolumeClaimTemplateLabels),
		CommonAnnotations:         specs(t.CommonAnnotations),
		VarReference:              specs(t.VarReference),
		Images:                    specs(t.Images),
		Replicas:                  specs(t.Replicas),
	}
	for _, n := range t.NameReference {
		c.NameReference = append(c.NameReference, NameBackReference{
			Group: n.Group, Version: n.Version, Kind: n.Kind, FieldSpecs: specs(n.Referrers),
		})
	}
	c.sortFields()
	return c, nil
}

// jsonError renames the types in a JSON decoding error to the names
// kustomize's types have.
type jsonError struct{ err error }

func (e *jsonError) Error() string {
	return strings.NewReplacer(
		"fieldspec.Gvk", "resid.Gvk",
		"fieldspec.FsSlice", "types.FsSlice",
		"fieldspec.FieldSpec", "types.FieldSpec",
		"fieldspec.nbrSlice", "builtinconfig.nbrSlice",
		"fieldspec.NameBackReferences", "builtinconfig.NameBackReferences",
		"fieldspec.TransformerConfig", "builtinconfig.TransformerConfig",
	).Replace(e.err.Error())
}

func (e *jsonError) Unwrap() error { return e.err }

// target is what a YAML value is decoded into; it decides whether a number
// or boolean is turned into text before the JSON step (only for plain string
// fields: group, version and kind live in an embedded struct in kustomize
// and are not converted).
type target int

const (
	tAny target = iota
	tString
	tConfig
	tSpecList
	tSpec
	tRefList
	tRef
)

// field is one JSON field of a target struct.
type field struct {
	name string
	t    target
}

// fieldsOf lists the fields of a struct target, in declaration order.
func fieldsOf(t target) []field {
	switch t {
	case tConfig:
		return []field{
			{"namePrefix", tSpecList}, {"nameSuffix", tSpecList}, {"namespace", tSpecList},
			{"commonLabels", tSpecList}, {"labels", tSpecList}, {"templateLabels", tSpecList},
			{"volumeClaimTemplateLabels", tSpecList},
			{"commonAnnotations", tSpecList}, {"nameReference", tRefList},
			{"varReference", tSpecList}, {"images", tSpecList}, {"replicas", tSpecList},
		}
	case tSpec:
		return []field{{"group", tAny}, {"version", tAny}, {"kind", tAny}, {"path", tString}, {"create", tAny}}
	case tRef:
		return []field{{"group", tAny}, {"version", tAny}, {"kind", tAny}, {"fieldSpecs", tSpecList}}
	}
	return nil
}

// fieldTarget finds the field a key decodes into: an exact match, else the
// first case-insensitive one, as encoding/json matches.
func fieldTarget(t target, key string) target {
	fields := fieldsOf(t)
	for _, f := range fields {
		if f.name == key {
			return f.t
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, key) {
			return f.t
		}
	}
	return tAny
}

// yamlToJSON turns the first YAML document of data into JSON for the
// Config shapes.
func yamlToJSON(data []byte) ([]byte, error) {
	var v any
	if err := yaml2.UnmarshalStrict(data, &v); err != nil {
		return nil, err
	}
	j, err := jsonable(v, tConfig)
	if err != nil {
		return nil, err
	}
	return json.Marshal(j)
}

// jsonable converts a yaml.v2 value into one encoding/json can write:
// map keys become strings, and scalars bound for string fields become text.
func jsonable(v any, t target) (any, error) {
	switch x := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, err := keyString(k, e)
			if err != nil {
				return nil, err
			}
			if out[ks], err = jsonable(e, fieldTarget(t, ks)); err != nil {
				return nil, err
			}
		}
		return out, nil
	case []any:
		elem := tAny
		switch t {
		case tSpecList:
			elem = tSpec
		case tRefList:
			elem = tRef
		}
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if out[i], err = jsonable(e, elem); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if t == tString {
		switch x := v.(type) {
		case int:
			return strconv.Itoa(x), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case uint64:
			return strconv.FormatUint(x, 10), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 32), nil
		case bool:
			return strconv.FormatBool(x), nil
		}
	}
	return v, nil
}

// keyString writes a YAML map key as a JSON object key.
func keyString(k, v any) (string, error) {
	switch x := k.(type) {
	case string:
		return x, nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 32)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return s, nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("unsupported map key of type: %T, key: %+#v, value: %+#v", k, k, v)
}

// specOrder sorts field specs by GVK with sort.Sort, which is not stable:
// kustomize sorts the same way, and the order of equal GVKs follows from it.
type specOrder []loaders.FieldSpec

func (s specOrder) Len() int           { return len(s) }
func (s specOrder) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s specOrder) Less(i, j int) bool { return lessGVK(s[i].GVK(), s[j].GVK()) }

// refOrder sorts name references by the GVK referred to, as specOrder.
type refOrder []NameBackReference

func (s refOrder) Len() int           { return len(s) }
func (s refOrder) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s refOrder) Less(i, j int) bool { return lessGVK(s[i].GVK(), s[j].GVK()) }

// sortFields sorts every list by GVK (name references by the GVK referred
// to; the referrer lists inside them are left as they are), as kustomize's
// sortFields does after parsing and after merging.
func (c *Config) sortFields() {
	for _, s := range []*[]loaders.FieldSpec{
		&c.NamePrefix, &c.NameSuffix, &c.Namespace, &c.CommonLabels, &c.Labels,
		&c.TemplateLabels, &c.VolumeClaimTemplateLabels, &c.CommonAnnotations, &c.VarReference, &c.Images, &c.Replicas,
	} {
		sort.Sort(specOrder(*s))
	}
	sort.Sort(refOrder(c.NameReference))
}

// Merge returns a new Config that merges o into c as kustomize's
// TransformerConfig.Merge does. For each list, the specs of o that c does
// not already hold are appended (see MergeSpecs; a spec held with a
// different create is an error, "failed to merge <List> fieldSpec:
// conflicting fieldspecs"). A name reference of o whose GVK equals that of
// entries of c has its field specs merged into each of them the same way;
// one with a new GVK is appended. Every list is then sorted by GVK (an
// unstable sort, as kustomize's). A nil o gives an unsorted copy of c.
// Neither c nor o is changed.
func (c *Config) Merge(o *Config) (*Config, error) {
	if o == nil {
		return c.clone(), nil
	}
	m := &Config{}
	lists := []struct {
		name string
		dst  *[]loaders.FieldSpec
		a, b []loaders.FieldSpec
	}{
		{"NamePrefix", &m.NamePrefix, c.NamePrefix, o.NamePrefix},
		{"NameSuffix", &m.NameSuffix, c.NameSuffix, o.NameSuffix},
		{"NameSpace", &m.Namespace, c.Namespace, o.Namespace},
		{"CommonAnnotations", &m.CommonAnnotations, c.CommonAnnotations, o.CommonAnnotations},
		{"CommonLabels", &m.CommonLabels, c.CommonLabels, o.CommonLabels},
		{"Labels", &m.Labels, c.Labels, o.Labels},
		{"TemplateLabels", &m.TemplateLabels, c.TemplateLabels, o.TemplateLabels},
		{"VolumeClaimTemplateLabels", &m.VolumeClaimTemplateLabels, c.VolumeClaimTemplateLabels, o.VolumeClaimTemplateLabels},
		{"VarReference", &m.VarReference, c.VarReference, o.VarReference},
		{"NameReference", nil, nil, nil},
		{"Images", &m.Images, c.Images, o.Images},
		{"Replicas", &m.Replicas, c.Replicas, o.Replicas},
	}
	for _, l := range lists {
		var err error
		if l.dst == nil {
			m.NameReference, err = mergeRefs(c.NameReference, o.NameReference)
		} else {
			*l.dst, err = mergeList(l.a, l.b)
		}
		if err != nil {
			return nil, fmt.Errorf("failed to merge %s fieldSpec: %w", l.name, err)
		}
	}
	m.sortFields()
	return m, nil
}

// mergeList is MergeSpecs keeping an empty result nil.
func mergeList(a, b []loaders.FieldSpec) ([]loaders.FieldSpec, error) {
	if len(a) == 0 && len(b) == 0 {
		return nil, nil
	}
	return MergeSpecs(a, b...)
}

// mergeRefs merges name references as kustomize's nbrSlice.mergeAll does.
func mergeRefs(s, o []NameBackReference) ([]NameBackReference, error) {
	out := cloneRefs(s)
	for _, r := range o {
		found := false
		for i := range out {
			if out[i].GVK() != r.GVK() {
				continue
			}
			merged, err := MergeSpecs(out[i].FieldSpecs, r.FieldSpecs...)
			if err != nil {
				return nil, err
			}
			out[i].FieldSpecs = merged
			found = true
		}
		if !found {
			r.FieldSpecs = cloneSpecs(r.FieldSpecs)
			out = append(out, r)
		}
	}
	return out, nil
}

func cloneSpecs(s []loaders.FieldSpec) []loaders.FieldSpec {
	if s == nil {
		return nil
	}
	return append(make([]loaders.FieldSpec, 0, len(s)), s...)
}

func cloneRefs(s []NameBackReference) []NameBackReference {
	if s == nil {
		return nil
	}
	out := make([]NameBackReference, len(s))
	for i, r := range s {
		r.FieldSpecs = cloneSpecs(r.FieldSpecs)
		out[i] = r
	}
	return out
}

// IsEmpty reports whether c (which may be nil) has no field specs at all.
func (c *Config) IsEmpty() bool {
	return c == nil || len(c.NamePrefix)+len(c.NameSuffix)+len(c.Namespace)+len(c.CommonLabels)+len(c.Labels)+
		len(c.TemplateLabels)+len(c.VolumeClaimTemplateLabels)+len(c.CommonAnnotations)+len(c.NameReference)+len(c.VarReference)+len(c.Images)+len(c.Replicas) == 0
}

// clone returns a deep copy of c.
func (c *Config) clone() *Config {
	return &Config{
		NamePrefix:                cloneSpecs(c.NamePrefix),
		NameSuffix:                cloneSpecs(c.NameSuffix),
		Namespace:                 cloneSpecs(c.Namespace),
		CommonLabels:              cloneSpecs(c.CommonLabels),
		Labels:                    cloneSpecs(c.Labels),
		TemplateLabels:            cloneSpecs(c.TemplateLabels),
		VolumeClaimTemplateLabels: cloneSpecs(c.VolumeClaimTemplateLabels),
		CommonAnnotations:         cloneSpecs(c.CommonAnnotations),
		NameReference:             cloneRefs(c.NameReference),
		VarReference:              cloneSpecs(c.VarReference),
		Images:                    cloneSpecs(c.Images),
		Replicas:                  cloneSpecs(c.Replicas),
	}
}

// canonicalBytes returns a deterministic serialization of c (JSON, lists in
// their order, empty lists left out): two Configs with equal bytes make
// every transformer behave the same.
func (c *Config) canonicalBytes() []byte {
	b, err := json.Marshal(c)
	if err != nil {
		// Config holds only strings, booleans and slices of them.
		panic("fieldspec: cannot serialize Config: " + err.Error())
	}
	return b
}

// digest returns the hex SHA-256 of canonicalBytes, for cache keys.
func (c *Config) digest() string {
	sum := sha256.Sum256(c.canonicalBytes())
	return hex.EncodeToString(sum[:])
}
