package generate

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/loaders"
)

// Flux re-encodes a kustomization file through kustomize v5.8.1's
// types.Kustomization with sigs.k8s.io/yaml. kpipe has one kustomization
// schema, loaders.Kustomization (kustomize v5.8.2's fields); what the
// re-encoding keeps, drops and coerces depends on how v5.8.1 shapes the
// same fields, so the file is decoded into a type made from the loaders'
// types with v5.8.1's shape (v581Shape), then carried over into
// loaders.Kustomization, which is what the Flux object's fields are
// applied to and what is encoded. v5.8.1's shape differs in:
//
//   - fields v5.8.1 does not have: labels[].includeVolumeClaimTemplates,
//     configMapGenerator[].type (its ConfigMapArgs has no type): dropped,
//     as unknown fields;
//   - embedded structs (TypeMeta in Kustomization, Gvk and ResId in
//     selectors and field specs, GeneratorArgs and KvPairSources in the
//     generators' entries): sigs.k8s.io/yaml coerces a YAML number or
//     boolean into a string field only when the field is not promoted
//     from an embedded struct, so `kind: 1` in a patch target is refused
//     where a flat field would take "1".
//
// Encoding needs no shape: keys come out sorted, the omitempty rules are
// the same, and what v5.8.1 lacks is empty after the decoding.

// embed is a group of a struct's fields that v5.8.1 has in an embedded
// struct (named Name there; Inner groups some of them again).
type embed struct {
	Name   string
	Fields []string
	Inner  *embed
}

// shapeRule is how v5.8.1 shapes one of the loaders' struct types.
type shapeRule struct {
	drop   []string
	embeds []embed
	name   string // kustomize's type name, for messages
}

var gvk = embed{Name: "Gvk", Fields: []string{"Group", "Version", "Kind"}}
var resID = embed{Name: "ResId", Fields: []string{"Name", "Namespace"}, Inner: &gvk}
var kvPairSources = embed{Name: "KvPairSources", Fields: []string{"Literals", "Files", "Envs", "Env"}}

var shapeRules = map[reflect.Type]shapeRule{
	reflect.TypeFor[loaders.Kustomization]():    {embeds: []embed{{Name: "TypeMeta", Fields: []string{"Kind", "APIVersion"}}}, name: "types.Kustomization"},
	reflect.TypeFor[loaders.Label]():            {drop: []string{"IncludeVolumeClaimTemplates"}, name: "types.Label"},
	reflect.TypeFor[loaders.Selector]():         {embeds: []embed{resID}, name: "types.Selector"},
	reflect.TypeFor[loaders.SourceSelector]():   {embeds: []embed{resID}, name: "types.SourceSelector"},
	reflect.TypeFor[loaders.FieldSpec]():        {embeds: []embed{gvk}, name: "types.FieldSpec"},
	reflect.TypeFor[loaders.VarTarget]():        {embeds: []embed{gvk}, name: "types.Target"},
	reflect.TypeFor[loaders.Patch]():            {name: "types.Patch"},
	reflect.TypeFor[loaders.Image]():            {name: "types.Image"},
	reflect.TypeFor[loaders.Replica]():          {name: "types.Replica"},
	reflect.TypeFor[loaders.Var]():              {name: "types.Var"},
	reflect.TypeFor[loaders.ReplacementField](): {name: "types.ReplacementField"},
	reflect.TypeFor[loaders.TargetSelector]():   {name: "types.TargetSelector"},
	reflect.TypeFor[loaders.HelmChart]():        {name: "types.HelmChart"},
	reflect.TypeFor[loaders.HelmChartArgs]():    {name: "types.HelmChartArgs"},
	reflect.TypeFor[loaders.ObjectMeta]():       {name: "types.ObjectMeta"},
}

// v581 is the decoding shape of a kustomization file, made once, and the
// kustomize names of its struct types.
var v581 = sync.OnceValues(func() (reflect.Type, map[reflect.Type]string) {
	names := map[reflect.Type]string{}
	t := shapeOf(reflect.TypeFor[loaders.Kustomization](), names)
	return t, names
})

// shapeOf is t with v5.8.1's shape, recursively.
func shapeOf(t reflect.Type, names map[reflect.Type]string) reflect.Type {
	switch t.Kind() {
	case reflect.Pointer:
		return reflect.PointerTo(shapeOf(t.Elem(), names))
	case reflect.Slice:
		return reflect.SliceOf(shapeOf(t.Elem(), names))
	case reflect.Map:
		return reflect.MapOf(t.Key(), shapeOf(t.Elem(), names))
	case reflect.Struct:
	default:
		return t
	}
	rule := shapeRules[t]
	fields := map[string]reflect.StructField{}
	var order []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if contains(rule.drop, f.Name) {
			continue
		}
		f.Type = shapeOf(f.Type, names)
		if t == reflect.TypeFor[loaders.Kustomization]() {
			f = generatorField(f, names)
		}
		f.Index, f.Offset = nil, 0
		fields[f.Name] = f
		order = append(order, f.Name)
	}
	for _, e := range rule.embeds {
		order = embedFields(fields, order, e)
	}
	out := make([]reflect.StructField, len(order))
	for i, name := range order {
		out[i] = fields[name]
	}
	st := reflect.StructOf(out)
	if rule.name != "" {
		names[st] = rule.name
	}
	return st
}

// embedFields replaces e's fields in fields and order with one embedded
// struct holding them (at the place of the first).
func embedFields(fields map[string]reflect.StructField, order []string, e embed) []string {
	var inner []reflect.StructField
	if e.Inner != nil {
		embedFields(fields, nil, *e.Inner) // (makes fields[e.Inner.Name])
		inner = append(inner, fields[e.Inner.Name])
		order = replaceFirst(order, e.Inner.Fields, e.Inner.Name)
	}
	for _, name := range e.Fields {
		inner = append(inner, fields[name])
	}
	emb := reflect.StructField{Name: e.Name, Type: reflect.StructOf(inner), Anonymous: true, Tag: `json:",inline,omitempty"`}
	fields[e.Name] = emb
	all := e.Fields
	if e.Inner != nil {
		all = append([]string{e.Inner.Name}, e.Fields...)
	}
	return replaceFirst(order, all, e.Name)
}

// replaceFirst removes names from order, putting name where the first of
// them was.
func replaceFirst(order, names []string, name string) []string {
	var out []string
	placed := false
	for _, o := range order {
		if contains(names, o) {
			if !placed {
				out = append(out, name)
				placed = true
			}
			continue
		}
		out = append(out, o)
	}
	return out
}

// generatorField gives the generators' entries v5.8.1's shape:
// ConfigMapArgs{GeneratorArgs} and SecretArgs{GeneratorArgs, Type}, with
// KvPairSources embedded in GeneratorArgs.
func generatorField(f reflect.StructField, names map[reflect.Type]string) reflect.StructField {
	if f.Name != "ConfigMapGenerator" && f.Name != "SecretGenerator" {
		return f
	}
	t := reflect.TypeFor[loaders.GeneratorArgs]()
	fields := map[string]reflect.StructField{}
	var order []string
	for i := 0; i < t.NumField(); i++ {
		g := t.Field(i)
		if g.Name == "Type" {
			continue
		}
		g.Type = shapeOf(g.Type, names)
		g.Index, g.Offset = nil, 0
		fields[g.Name] = g
		order = append(order, g.Name)
	}
	order = embedFields(fields, order, kvPairSources)
	var args []reflect.StructField
	for _, name := range order {
		args = append(args, fields[name])
	}
	entry := []reflect.StructField{{Name: "GeneratorArgs", Type: reflect.StructOf(args), Anonymous: true, Tag: `json:",inline,omitempty"`}}
	name := "types.ConfigMapArgs"
	if f.Name == "SecretGenerator" {
		typ, _ := t.FieldByName("Type")
		typ.Index, typ.Offset = nil, 0
		entry = append(entry, typ)
		name = "types.SecretArgs"
	}
	et := reflect.StructOf(entry)
	names[et] = name
	f.Type = reflect.SliceOf(et)
	return f
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// decodeKustomization reads a kustomization file as Flux's generator
// does: sigs.k8s.io/yaml into kustomize v5.8.1's types, prefilled with
// apiVersion and kind.
func decodeKustomization(data []byte) (*loaders.Kustomization, error) {
	t, names := v581()
	v := reflect.New(t)
	v.Elem().FieldByName("APIVersion").SetString("kustomize.config.k8s.io/v1beta1")
	v.Elem().FieldByName("Kind").SetString("Kustomization")
	if err := yaml.Unmarshal(data, v.Interface()); err != nil {
		return nil, typeNamed(err, names)
	}
	j, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, err
	}
	k := &loaders.Kustomization{}
	if err := json.Unmarshal(j, k); err != nil {
		return nil, err
	}
	return k, nil
}

// typeNamed rewords a JSON type error of the decoding with kustomize's
// type names (types.Patch) where it names one of the shape's types.
func typeNamed(err error, names map[reflect.Type]string) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil {
		return err
	}
	name := typeName(te.Type, names)
	if name == te.Type.String() {
		return err
	}
	return errors.New(strings.Replace(err.Error(), "of type "+te.Type.String(), "of type "+name, 1))
}

func typeName(t reflect.Type, names map[reflect.Type]string) string {
	if n, ok := names[t]; ok {
		return n
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + typeName(t.Elem(), names)
	case reflect.Slice:
		return "[]" + typeName(t.Elem(), names)
	case reflect.Map:
		return "map[" + typeName(t.Key(), names) + "]" + typeName(t.Elem(), names)
	}
	return t.String()
}
