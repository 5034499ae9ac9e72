// Package kustfile reads and rewrites a kustomization file the way
// `kustomize edit` does (kustomize v5.8.2): the file is decoded strictly
// into the Kustomization fields, and written back field by field, fields
// that were in the file first in their original order with the comment and
// blank lines that preceded them, then new fields in kustomize's order;
// each field's value is written with sorted keys, as kustomize's
// JSON-to-YAML marshalling writes it. Writes are atomic (temporary file and
// rename).
//
// It reads and writes the loaders' kustomization types, kpipe's one
// schema: it imports loaders and the internal packages fsread and resyaml
// (kyaml's document splitting).
package kustfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v2"

	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/loaders"
)

// FileNames are the kustomization file names, in kustomize's order.
var FileNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// field is one top-level Kustomization field: its Go name (as kustomize's
// order list spells it) and its JSON name.
type field struct{ goName, jsonName string }

// fieldOrder is kustomize's marshalling order (kustfile.determineFieldOrder).
// imageTags is absent there, as in kustomize.
var fieldOrder = []field{
	{"APIVersion", "apiVersion"}, {"Kind", "kind"},
	{"MetaData", "metadata"}, {"SortOptions", "sortOptions"},
	{"Resources", "resources"}, {"Bases", "bases"},
	{"NamePrefix", "namePrefix"}, {"NameSuffix", "nameSuffix"},
	{"Namespace", "namespace"}, {"Crds", "crds"},
	{"CommonLabels", "commonLabels"}, {"Labels", "labels"},
	{"CommonAnnotations", "commonAnnotations"},
	{"PatchesStrategicMerge", "patchesStrategicMerge"},
	{"PatchesJson6902", "patchesJson6902"}, {"Patches", "patches"},
	{"ConfigMapGenerator", "configMapGenerator"},
	{"SecretGenerator", "secretGenerator"}, {"HelmCharts", "helmCharts"},
	{"HelmChartInflationGenerator", "helmChartInflationGenerator"},
	{"HelmGlobals", "helmGlobals"}, {"GeneratorOptions", "generatorOptions"},
	{"Vars", "vars"}, {"Images", "images"}, {"Replacements", "replacements"},
	{"Replicas", "replicas"}, {"Configurations", "configurations"},
	{"Generators", "generators"}, {"Transformers", "transformers"},
	{"Validators", "validators"}, {"Components", "components"},
	{"OpenAPI", "openapi"}, {"BuildMetadata", "buildMetadata"},
}

// commentedField is a field found in the file with the comment and blank
// lines written before it.
type commentedField struct {
	field   field
	comment []byte
}

// File is a kustomization file opened for editing.
type File struct {
	// Path is the file's path.
	Path   string
	mode   os.FileMode
	fields []*commentedField
}

// Find returns the path of the kustomization file in dir, with an error
// when there is none or more than one.
func Find(dir string) (string, error) {
	var found []string
	for _, n := range FileNames {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			found = append(found, filepath.Join(dir, n))
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("missing kustomization file 'kustomization.yaml' in %s", dir)
	case 1:
		if fi, err := os.Stat(found[0]); err == nil && fi.IsDir() {
			return "", fmt.Errorf("%s should be a file", found[0])
		}
		return found[0], nil
	}
	return "", fmt.Errorf("found multiple kustomization files in %s: %s", dir, strings.Join(found, ", "))
}

// Open reads the kustomization file in dir. The returned Kustomization has
// kustomize's read-time fixes applied (apiVersion and kind defaults, bases
// into resources, imageTags into images, envSource into envSources, helm
// parameters split into helmCharts and helmGlobals).
func Open(dir string) (*File, *loaders.Kustomization, error) {
	path, err := Find(dir)
	if err != nil {
		return nil, nil, err
	}
	data, err := fsread.File(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	return OpenData(path, data, fi.Mode().Perm())
}

// OpenData is Open for a kustomization file's content held in memory:
// path names it in errors (and is where Write would write it), mode is
// the permission Write would give it.
func OpenData(path string, data []byte, mode os.FileMode) (*File, *loaders.Kustomization, error) {
	k, err := Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &File{Path: path, mode: mode}
	f.parseCommentedFields(data)
	return f, k, nil
}

// Parse decodes a kustomization strictly (unknown fields are errors) and
// applies kustomize's read-time fixes.
func Parse(data []byte) (*loaders.Kustomization, error) {
	var doc interface{}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("invalid Kustomization: %w", err)
	}
	j, err := json.Marshal(jsonable(doc))
	if err != nil {
		return nil, fmt.Errorf("invalid Kustomization: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	e := reflect.New(editShape())
	if err := dec.Decode(e.Interface()); err != nil {
		return nil, fmt.Errorf("invalid Kustomization: %w", editError(err))
	}
	k := fromEditShape(e.Elem())
	fixOnRead(&k)
	return &k, nil
}

// editShape is the kustomization as `kustomize edit` decodes it: the
// loaders' schema, but for a configMapGenerator entry, which has no type
// (kustomize's ConfigMapArgs), so that a `type:` there is an unknown
// field, reported where encoding/json meets it, as kustomize reports it.
// It is built from loaders.Kustomization, so the schema is written once.
var editShape = sync.OnceValue(func() reflect.Type {
	kt := reflect.TypeFor[loaders.Kustomization]()
	fields := make([]reflect.StructField, kt.NumField())
	for i := range fields {
		fields[i] = kt.Field(i)
		if fields[i].Name == "ConfigMapGenerator" {
			fields[i].Type = reflect.SliceOf(configMapShape())
		}
	}
	return reflect.StructOf(fields)
})

// configMapShape is loaders.GeneratorArgs without its Type field.
var configMapShape = sync.OnceValue(func() reflect.Type {
	gt := reflect.TypeFor[loaders.GeneratorArgs]()
	var fields []reflect.StructField
	for i := range gt.NumField() {
		if f := gt.Field(i); f.Name != "Type" {
			fields = append(fields, f)
		}
	}
	return reflect.StructOf(fields)
})

// fromEditShape copies a decoded editShape value into a Kustomization.
func fromEditShape(e reflect.Value) loaders.Kustomization {
	var k loaders.Kustomization
	kv := reflect.ValueOf(&k).Elem()
	for i := range kv.NumField() {
		if kv.Type().Field(i).Name != "ConfigMapGenerator" {
			kv.Field(i).Set(e.Field(i))
			continue
		}
		if e.Field(i).IsNil() {
			continue
		}
		list := make([]loaders.GeneratorArgs, e.Field(i).Len())
		for j := range list {
			ev, gv := e.Field(i).Index(j), reflect.ValueOf(&list[j]).Elem()
			for f := range ev.NumField() {
				gv.FieldByName(ev.Type().Field(f).Name).Set(ev.Field(f))
			}
		}
		kv.Field(i).Set(reflect.ValueOf(list))
	}
	return k
}

// jsonable converts what yaml.v2 decodes into values encoding/json can
// marshal (string map keys).
func jsonable(v interface{}) interface{} {
	switch t := v.(type) {
	case map[interface{}]interface{}:
		m := make(map[string]interface{}, len(t))
		for k, v := range t {
			m[fmt.Sprint(k)] = jsonable(v)
		}
		return m
	case []interface{}:
		for i := range t {
			t[i] = jsonable(t[i])
		}
		return t
	}
	return v
}

func fixOnRead(k *loaders.Kustomization) {
	if k.Kind == "" {
		k.Kind = "Kustomization"
	}
	if k.APIVersion == "" {
		if k.Kind == "Component" {
			k.APIVersion = "kustomize.config.k8s.io/v1alpha1"
		} else {
			k.APIVersion = "kustomize.config.k8s.io/v1beta1"
		}
	}
	k.Resources = append(k.Resources, k.Bases...)
	k.Bases = nil
	k.Images = append(k.Images, k.ImageTags...)
	k.ImageTags = nil
	for i := range k.ConfigMapGenerator {
		fixEnvSource(&k.ConfigMapGenerator[i])
	}
	for i := range k.SecretGenerator {
		fixEnvSource(&k.SecretGenerator[i])
	}
	fixHelm(k)
}

// fixEnvSource moves a generator's env into envs.
func fixEnvSource(g *loaders.GeneratorArgs) {
	if g.Env != "" {
		g.Envs = append(g.Envs, g.Env)
		g.Env = ""
	}
}

// fixHelm moves helmChartInflationGenerator entries into helmCharts and
// helmGlobals, as kustomize's SplitHelmParameters does (the last non-empty
// chartHome and helmHome win; fields helmCharts has no place for are lost).
func fixHelm(k *loaders.Kustomization) {
	var globals loaders.HelmGlobals
	for _, old := range k.HelmChartInflationGenerator {
		k.HelmCharts = append(k.HelmCharts, loaders.HelmChart{
			Name: old.ChartName, Version: old.ChartVersion, Repo: old.ChartRepoURL,
			ValuesFile: old.Values, ValuesInline: old.ValuesLocal, ValuesMerge: old.ValuesMerge,
			ReleaseName: old.ReleaseName,
		})
		if old.HelmHome != "" {
			globals.ConfigHome = old.HelmHome
		}
		if old.ChartHome != "" {
			globals.ChartHome = old.ChartHome
		}
	}
	if k.HelmGlobals == nil && (globals.ChartHome != "" || globals.ConfigHome != "") {
		k.HelmGlobals = &globals
	}
	k.HelmChartInflationGenerator = nil
}

// parseCommentedFields records the top-level fields in the order the file
// has them, each with the comment and blank lines before it, exactly as
// kustomize's kustfile does (a comment followed by a line that is no field
// goes to the comment of the field before; a last line without a newline
// is not looked at).
func (f *File) parseCommentedFields(content []byte) {
	buf := bytes.NewBuffer(content)
	var comments []byte
	for {
		line, err := buf.ReadBytes('\n')
		if err != nil {
			return
		}
		if isCommentOrBlank(line) {
			comments = append(comments, line...)
			continue
		}
		if fl, ok := matchField(line); ok {
			f.fields = append(f.fields, &commentedField{field: fl, comment: comments})
			comments = nil
		} else if len(comments) > 0 && len(f.fields) > 0 {
			last := f.fields[len(f.fields)-1]
			last.comment = append(last.comment, comments...)
			comments = nil
		}
	}
}

func isCommentOrBlank(line []byte) bool {
	s := bytes.TrimRight(bytes.TrimLeft(line, " "), "\n")
	return len(s) == 0 || s[0] == '#'
}

func matchField(line []byte) (field, bool) {
	for _, fl := range fieldOrder {
		n := len(fl.goName)
		if len(line) > n && line[n] == ':' && strings.EqualFold(string(line[:n]), fl.goName) {
			return fl, true
		}
	}
	return field{}, false
}

// Marshal returns the file's new content for k.
func (f *File) Marshal(k *loaders.Kustomization) ([]byte, error) {
	var out []byte
	seen := map[string]bool{}
	for _, cf := range f.fields {
		out = append(out, cf.comment...)
		b, err := marshalField(cf.field, k)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
		seen[cf.field.goName] = true
	}
	for _, fl := range fieldOrder {
		if seen[fl.goName] {
			continue
		}
		b, err := marshalField(fl, k)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

// marshalField writes one field as kustomize does: JSON, then YAML with
// sorted keys; nothing when the field is empty.
func marshalField(fl field, k *loaders.Kustomization) ([]byte, error) {
	v := reflect.ValueOf(k).Elem().FieldByName(fl.goName)
	if !v.IsValid() || isEmpty(v) {
		return nil, nil
	}
	j, err := json.Marshal(map[string]interface{}{fl.jsonName: v.Interface()})
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", fl.jsonName, err)
	}
	// The JSON read back as the YAML parser would read it (kustomize reads
	// it with one), numbers as YAML resolves them, without the cost of a
	// YAML parse.
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var doc interface{}
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("writing %s: %w", fl.jsonName, err)
	}
	return yaml.Marshal(yamlNumbers(doc))
}

// yamlNumbers replaces the JSON numbers in v by what go.yaml.in/yaml/v2
// makes of them: an int (an int64 or a uint64 when larger), else a float64.
func yamlNumbers(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, e := range t {
			t[k] = yamlNumbers(e)
		}
	case []interface{}:
		for i, e := range t {
			t[i] = yamlNumbers(e)
		}
	case json.Number:
		s := string(t)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			if int64(int(i)) == i {
				return int(i)
			}
			return i
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return u
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
		return s
	}
	return v
}

func isEmpty(v reflect.Value) bool {
	if v.Kind() == reflect.Ptr {
		return v.IsNil()
	}
	return v.Len() == 0
}

// Write replaces the file with k's content atomically: a temporary file in
// the same directory, synced, then renamed over the file.
func (f *File) Write(k *loaders.Kustomization) error {
	if k == nil {
		return errors.New("kustfile: nil kustomization")
	}
	data, err := f.Marshal(k)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	// A symlinked kustomization file is written through the link (as
	// kustomize writes it), not replaced by a regular file.
	target, err := filepath.EvalSymlinks(f.Path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", f.Path, err)
	}
	return WriteAtomic(target, data, f.mode)
}

// WriteAtomic writes data to path through a temporary file and a rename,
// so that readers see the old or the new content, never a part.
func WriteAtomic(path string, data []byte, mode os.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = io.Copy(tmp, bytes.NewReader(data)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
