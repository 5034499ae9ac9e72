package stages

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// Generation behaviors: how a generated object meets an object of the same
// ID already in the list (from a base, or an earlier generator).
const (
	// behaviorCreate adds a new object; one of the same ID is an error.
	// Any value but merge and replace behaves like create.
	behaviorCreate = "create"
	// behaviorMerge merges the generated data into the existing object.
	behaviorMerge = "merge"
	// behaviorReplace replaces the existing object's data.
	behaviorReplace = "replace"
)

// MergeGeneratorOptions merges a kustomization's generatorOptions (global)
// into one entry's options (local) as kustomize does: labels and
// annotations of the entry win over the global ones, and either side can
// turn on disableNameSuffixHash and immutable. local is not modified.
func MergeGeneratorOptions(local, global *loaders.GeneratorOptions) *loaders.GeneratorOptions {
	if global == nil {
		return local
	}
	out := &loaders.GeneratorOptions{}
	if local != nil {
		*out = *local
		out.Labels = copyStringMap(local.Labels)
		out.Annotations = copyStringMap(local.Annotations)
	}
	out.Labels = overrideStringMap(out.Labels, global.Labels)
	out.Annotations = overrideStringMap(out.Annotations, global.Annotations)
	out.DisableNameSuffixHash = out.DisableNameSuffixHash || global.DisableNameSuffixHash
	out.Immutable = out.Immutable || global.Immutable
	return out
}

// overrideStringMap adds the entries of global that local lacks; a nil
// local becomes a copy of global.
func overrideStringMap(local, global map[string]string) map[string]string {
	if local == nil {
		return copyStringMap(global)
	}
	for k, v := range global {
		if _, ok := local[k]; !ok {
			local[k] = v
		}
	}
	return local
}

// generatorPluginConfig is the builtin plugin config of both generators:
// the entry's fields at the top level, with metadata's name and namespace
// used where the top level has none. The deprecated `env` field is read
// but, as in kustomize's plugins, not used.
type generatorPluginConfig struct {
	Metadata struct {
		Name      string `json:"name,omitempty"`
		Namespace string `json:"namespace,omitempty"`
	} `json:"metadata"`
	loaders.GeneratorArgs
}

// NewConfigMapGenerator returns the ConfigMapGenerator stage for one
// configMapGenerator entry, reading its files and env files with read. The
// ConfigMap is made here: text values go to data, values that are not
// UTF-8 go base64-encoded to binaryData.
func NewConfigMapGenerator(cfg loaders.GeneratorArgs, read ReadFile) (Stage, error) {
	cfg.Type = ""
	return newGenerator("ConfigMap", cfg, read)
}

// NewSecretGenerator returns the SecretGenerator stage for one
// secretGenerator entry, reading its files and env files with read. Every
// value is base64-encoded into data.
func NewSecretGenerator(cfg loaders.GeneratorArgs, read ReadFile) (Stage, error) {
	return newGenerator("Secret", cfg, read)
}

// ConfigMapGeneratorFromConfig configures a ConfigMapGenerator from its
// builtin plugin config.
func ConfigMapGeneratorFromConfig(data []byte, read ReadFile) (Stage, error) {
	cfg, err := decodeGeneratorConfig(data)
	if err != nil {
		return nil, err
	}
	return NewConfigMapGenerator(cfg, read)
}

// SecretGeneratorFromConfig configures a SecretGenerator from its builtin
// plugin config.
func SecretGeneratorFromConfig(data []byte, read ReadFile) (Stage, error) {
	cfg, err := decodeGeneratorConfig(data)
	if err != nil {
		return nil, err
	}
	return NewSecretGenerator(cfg, read)
}

func decodeGeneratorConfig(data []byte) (loaders.GeneratorArgs, error) {
	var pc generatorPluginConfig
	if err := decodeLenientConfig(data, &pc); err != nil {
		return loaders.GeneratorArgs{}, err
	}
	cfg := pc.GeneratorArgs
	cfg.Env = ""
	if cfg.Name == "" {
		cfg.Name = pc.Metadata.Name
	}
	if cfg.Namespace == "" {
		cfg.Namespace = pc.Metadata.Namespace
	}
	return cfg, nil
}

// generatorStage adds (or merges, or replaces) one generated object.
type generatorStage struct {
	kind    string
	obj     *resource.Resource
	release Release
}

// newGenerator makes the object of kind ConfigMap or Secret.
func newGenerator(kind string, cfg loaders.GeneratorArgs, read ReadFile) (Stage, error) {
	if cfg.Name == "" {
		// kustomize says "configmap" for secrets too.
		return nil, errors.New("a configmap must have a name")
	}
	pairs, err := loadPairs(cfg, read)
	if err != nil {
		return nil, fmt.Errorf("loading KV pairs: %w", err)
	}
	values := map[string]string{}
	for _, p := range pairs {
		if _, ok := values[p.key]; ok {
			return nil, fmt.Errorf("configmap %s illegally repeats the key `%s`", cfg.Name, p.key)
		}
		values[p.key] = p.value
	}
	md := map[string]any{"name": cfg.Name}
	if cfg.Namespace != "" {
		md["namespace"] = cfg.Namespace
	}
	obj := map[string]any{"apiVersion": "v1", "kind": kind, "metadata": md}
	if kind == "Secret" {
		t := cfg.Type
		if t == "" {
			t = "Opaque"
		}
		obj["type"] = t
		data := map[string]any{}
		for k, v := range values {
			data[k] = encodeBase64(v)
		}
		obj["data"] = data
	} else {
		loadConfigMapData(obj, values, false)
	}
	needsHash := true
	if o := cfg.Options; o != nil {
		if len(o.Labels) > 0 {
			md["labels"] = stringsToAny(o.Labels)
		}
		if len(o.Annotations) > 0 {
			md["annotations"] = stringsToAny(o.Annotations)
		}
		if o.Immutable {
			obj["immutable"] = true
		}
		needsHash = !o.DisableNameSuffixHash
	}
	r := resource.New(obj)
	r.Gen = &resource.Generated{Behavior: normalBehavior(cfg.Behavior), NeedsHash: needsHash}
	// kustomize writes a generator's keys as plain scalars: `1=A` makes
	// the key 1, a number, on which its output fails.
	r.AddNonStringKeys("data")
	r.AddNonStringKeys("binaryData")
	r.Freeze()
	return &generatorStage{kind: kind + "Generator", obj: r}, nil
}

// normalBehavior maps a behavior to create, merge, replace or "" (not
// given, or not one of those: kustomize treats both as create).
func normalBehavior(b string) string {
	switch b {
	case behaviorCreate, behaviorMerge, behaviorReplace:
		return b
	}
	return ""
}

// loadConfigMapData sets a ConfigMap's data (UTF-8 values) and binaryData
// (other values, base64-encoded) from values; with binary, every value goes
// to binaryData. Empty maps are not created.
func loadConfigMapData(obj map[string]any, values map[string]string, binary bool) {
	for _, k := range resource.SortedKeys(values) {
		v := values[k]
		field := "data"
		if binary {
			field = "binaryData"
		}
		if !utf8.ValidString(v) {
			field, v = "binaryData", encodeBase64(v)
		}
		m, ok := obj[field].(map[string]any)
		if !ok {
			m = map[string]any{}
			obj[field] = m
		}
		m[k] = v
	}
}

func stringsToAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (s *generatorStage) Kind() string { return s.kind }

// Fingerprint covers the generated object (and so the files it was made
// from) and its generator options.
func (s *generatorStage) Fingerprint() []byte {
	if s.release != Kustomize582 {
		return Fingerprint(s.kind, struct {
			Object    map[string]any
			Behavior  string
			NeedsHash bool
			Release   Release
		}{s.obj.Object(), s.obj.Gen.Behavior, s.obj.Gen.NeedsHash, s.release})
	}
	return Fingerprint(s.kind, struct {
		Object    map[string]any
		Behavior  string
		NeedsHash bool
	}{s.obj.Object(), s.obj.Gen.Behavior, s.obj.Gen.NeedsHash})
}

// Run adds the generated object to rs as kustomize absorbs a generator's
// output: with behavior create (or none) it must be new; with merge or
// replace it must match exactly one object by any of its current or
// previous IDs, whose place, name, namespace and build state it takes
// over, with the labels and annotations of both (its own winning). Merge
// also keeps the data of the existing object that it does not set.
func (s *generatorStage) Run(_ context.Context, rs *resource.List) error {
	if err := absorb(rs, s.obj.Clone(), s.release); err != nil {
		return fmt.Errorf("merging from generator %s %q: %w", s.kind, s.obj.Name(), err)
	}
	return nil
}

// absorb adds a generated object to rs as kustomize's AbsorbAll does (see
// generatorStage.Run). res must be private.
func absorb(rs *resource.List, res *resource.Resource, release Release) error {
	id := res.ID()
	behavior := ""
	if res.Gen != nil {
		behavior = res.Gen.Behavior
	}
	matches := rs.ByAnyID(id)
	switch len(matches) {
	case 0:
		if behavior == behaviorMerge || behavior == behaviorReplace {
			return fmt.Errorf("id %s does not exist; cannot merge or replace", goSyntaxID(id))
		}
		return rs.Append(res)
	case 1:
	default:
		ids := make([]string, len(matches))
		for i, j := range matches {
			ids[i] = rs.At(j).ID().String()
		}
		return fmt.Errorf("found multiple objects [%s] that could accept merge of %s", strings.Join(ids, " "), id)
	}
	old := rs.At(matches[0])
	switch behavior {
	case behaviorReplace:
		// The labels and annotations of both, res's winning: res keeps
		// its own origin annotation, or takes old's.
		takeOver(res, old)
	case behaviorMerge:
		// A merged object keeps the origin of the one it merges into.
		oldData := resource.StringMap(old.Object()["data"])
		if release == Kustomize582 && res.APIVersion() == "v1" && res.Kind() == "Secret" {
			// kustomize v5.8.2 merges the Secret's stringData too, folded
			// into its data as the API server stores it.
			var err error
			if oldData, err = foldStringData(old, oldData); err != nil {
				return fmt.Errorf("failed to normalize stringData for %s: %w", id, err)
			}
		}
		takeOver(res, old)
		mergeData(res, old, oldData)
		if o, ok := old.Annotation(OriginAnnotation); ok {
			res.SetAnnotation(OriginAnnotation, o)
		}
	default:
		if behavior == "" {
			behavior = "unspecified"
		}
		return fmt.Errorf("id %s exists; can not use behavior: '%s', behavior must be merge or replace", goSyntaxID(id), behavior)
	}
	rs.Set(matches[0], res)
	return nil
}

// takeOver gives res the identity of old, which it replaces: old's name,
// namespace and build state, and the labels and annotations of both, res's
// winning, except build annotations, which come from old only. The hash
// suffix stays on only when both want it.
func takeOver(res, old *resource.Resource) {
	obj := res.Edit()
	md := resource.LookupMap(obj, "metadata")
	labels := old.Labels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range res.Labels() {
		labels[k] = v
	}
	setMetaMap(md, "labels", labels)
	ann := map[string]string{}
	for k, v := range old.Annotations() {
		ann[k] = v
	}
	for k, v := range res.Annotations() {
		if !isInternalAnnotation(k) {
			ann[k] = v
		}
	}
	setMetaMap(md, "annotations", ann)
	md["name"] = old.Name()
	if ns := old.Namespace(); ns != "" {
		md["namespace"] = ns
	} else {
		delete(md, "namespace")
	}
	res.CopyBuildStateFrom(old)
	if old.Gen == nil {
		res.Gen = nil
		return
	}
	res.Gen = &resource.Generated{Behavior: old.Gen.Behavior, NeedsHash: old.Gen.NeedsHash && res.Gen != nil && res.Gen.NeedsHash}
}

// setMetaMap sets a metadata map of strings, removing it when empty.
func setMetaMap(md map[string]any, field string, m map[string]string) {
	if len(m) == 0 {
		delete(md, field)
		return
	}
	md[field] = stringsToAny(m)
}

// foldStringData returns data (a Secret's) with the Secret's stringData
// base64-encoded into it, stringData's values winning.
func foldStringData(old *resource.Resource, data map[string]string) (map[string]string, error) {
	sd, ok := old.Object()["stringData"].(map[string]any)
	if !ok {
		return data, nil
	}
	out := make(map[string]string, len(data)+len(sd))
	for k, v := range data {
		out[k] = v
	}
	for _, k := range resource.SortedKeys(sd) {
		v, ok := resource.ScalarString(sd[k])
		if !ok {
			return nil, fmt.Errorf("read stringData: stringData value for key %q must be a scalar", k)
		}
		out[k] = encodeBase64(v)
	}
	return out, nil
}

// mergeData sets res's data and binaryData to old's entries (oldData for
// data) overridden by res's, every value as a string.
func mergeData(res, old *resource.Resource, oldData map[string]string) {
	obj := res.Edit()
	for _, field := range []string{"data", "binaryData"} {
		merged := map[string]string{}
		from := oldData
		if field == "binaryData" {
			from = resource.StringMap(old.Object()[field])
		}
		for k, v := range from {
			merged[k] = v
		}
		for k, v := range resource.StringMap(obj[field]) {
			merged[k] = v
		}
		delete(obj, field)
		loadConfigMapData(obj, merged, field == "binaryData")
	}
	// kustomize sets the merged data anew, every key a plain scalar.
	res.AddNonStringKeys("data")
	res.AddNonStringKeys("binaryData")
}

// goSyntaxID renders id as kustomize's errors print a resid.ResId (Go
// syntax).
func goSyntaxID(id resource.ID) string {
	return fmt.Sprintf("resid.ResId{Gvk:resid.Gvk{Group:%s, Version:%s, Kind:%s, isClusterScoped:%t}, Name:%s, Namespace:%s}",
		strconv.Quote(id.Group), strconv.Quote(id.Version), strconv.Quote(id.Kind), id.IsClusterScoped(),
		strconv.Quote(id.Name), strconv.Quote(id.Namespace))
}

// kvPair is one key and value of generated data.
type kvPair struct {
	key, value string
}

// loadPairs reads the pairs of an entry: env files, then literals, then
// files, each group in order.
func loadPairs(cfg loaders.GeneratorArgs, read ReadFile) ([]kvPair, error) {
	var all []kvPair
	for _, p := range cfg.Envs {
		content, err := read(p)
		if err == nil {
			var more []kvPair
			more, err = envFilePairs(content)
			all = append(all, more...)
		}
		if err != nil {
			return nil, fmt.Errorf("env source files: %v: %w", cfg.Envs, err)
		}
	}
	for _, s := range cfg.Literals {
		k, v, err := parseLiteralSource(s)
		if err != nil {
			return nil, fmt.Errorf("literal sources %v: %w", cfg.Literals, err)
		}
		all = append(all, kvPair{k, v})
	}
	for _, s := range cfg.Files {
		k, p, err := parseFileSource(s)
		if err == nil {
			var content []byte
			if content, err = read(p); err == nil {
				all = append(all, kvPair{k, string(content)})
			}
		}
		if err != nil {
			return nil, fmt.Errorf("file sources: %v: %w", cfg.Files, err)
		}
	}
	return all, nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// envFilePairs parses an env file as kustomize does: lines are split with a
// bufio.Scanner (so reading stops quietly at a line over 64 KiB), leading
// white space is dropped, empty lines and # comments are skipped, and each
// other line is key=value (or a bare key, with an empty value). A line
// whose key is empty is skipped; keys are not validated.
func envFilePairs(content []byte) ([]kvPair, error) {
	var out []kvPair
	sc := bufio.NewScanner(bytes.NewReader(content))
	for n := 0; sc.Scan(); n++ {
		line := sc.Bytes()
		if !utf8.Valid(line) {
			return nil, fmt.Errorf("line %d has invalid utf8 bytes : %v", line, string(line))
		}
		if n == 0 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		line = bytes.TrimLeftFunc(line, unicode.IsSpace)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		key, value, _ := strings.Cut(string(line), "=")
		if key == "" {
			continue
		}
		out = append(out, kvPair{key, value})
	}
	return out, nil
}

// parseLiteralSource splits key=value; the value loses one pair of
// matching surrounding quotes.
func parseLiteralSource(s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return "", "", fmt.Errorf("invalid literal source %v, expected key=value", s)
	}
	return k, removeQuotes(v), nil
}

// removeQuotes removes one pair of matching single or double quotes around
// s.
func removeQuotes(s string) string {
	if len(s) < 2 || s[0] != s[len(s)-1] {
		return s
	}
	if s[0] == '"' || s[0] == '\'' {
		return s[1 : len(s)-1]
	}
	return s
}

// parseFileSource splits a file source into its key and path: "path" (the
// key is the base name) or "key=path".
func parseFileSource(s string) (key, file string, err error) {
	switch n := strings.Count(s, "="); {
	case n == 0:
		return path.Base(s), s, nil
	case n == 1 && strings.HasPrefix(s, "="):
		return "", "", fmt.Errorf("missing key name for file path %q in source %q", strings.TrimPrefix(s, "="), s)
	case n == 1 && strings.HasSuffix(s, "="):
		return "", "", fmt.Errorf("missing file path for key name %q in source %q", strings.TrimSuffix(s, "="), s)
	case n > 1:
		return "", "", fmt.Errorf("source %q key name or file path contains '='", s)
	}
	key, file, _ = strings.Cut(s, "=")
	return key, file, nil
}

// encodeBase64 encodes s in base64 as kustomize writes generated values:
// an encoding longer than 70 characters is broken into lines of 70, each
// ending in a newline.
func encodeBase64(s string) string {
	const lineLen = 70
	enc := base64.StdEncoding.EncodeToString([]byte(s))
	if len(enc) < lineLen {
		return enc
	}
	var b strings.Builder
	for i := 0; i < len(enc); i += lineLen {
		j := min(i+lineLen, len(enc))
		b.WriteString(enc[i:j])
		b.WriteByte('\n')
	}
	return b.String()
}
