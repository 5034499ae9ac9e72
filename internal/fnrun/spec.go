package fnrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/plugins"
)

// The function spec as kustomize reads it (kyaml's runtimeutil types; their
// names show in decoding errors).
type (
	// FunctionSpec is a function config's spec.
	FunctionSpec struct {
		DeferFailure bool          `json:"deferFailure,omitempty"`
		Container    ContainerSpec `json:"container,omitempty"`
		Exec         ExecSpec      `json:"exec,omitempty"`
	}
	// ExecSpec runs an executable.
	ExecSpec struct {
		Path string   `json:"path,omitempty"`
		Args []string `json:"args,omitempty"`
		Env  []string `json:"envs,omitempty"`
	}
	// ContainerSpec runs a container image.
	ContainerSpec struct {
		Image         string         `json:"image,omitempty"`
		Network       bool           `json:"network,omitempty"`
		StorageMounts []StorageMount `json:"mounts,omitempty"`
		Env           []string       `json:"envs,omitempty"`
	}
	// StorageMount is a container's mount.
	StorageMount struct {
		MountType     string `json:"type,omitempty"`
		Src           string `json:"src,omitempty"`
		DstPath       string `json:"dst,omitempty"`
		ReadWriteMode bool   `json:"rw,omitempty"`
	}
)

// The annotations that carry a function spec, newest first.
var functionAnnotations = []string{"config.kubernetes.io/function", "config.k8s.io/function"}

// functionSpec reads an object's function spec as kyaml's GetFunctionSpec
// does: the first function annotation set, else metadata.configFn, else
// the image of the legacy `config.kubernetes.io/container` annotation; nil
// when it has none. The spec is decoded strictly (an unknown field is an
// error).
func functionSpec(n *yaml.Node) (*FunctionSpec, error) {
	m, err := getMeta(n)
	if err != nil {
		return nil, fmt.Errorf("failed to get ResourceMeta: %w", err)
	}
	var fs FunctionSpec
	for _, key := range functionAnnotations {
		if v := m.Annotations[key]; v != "" {
			if err := unmarshalStrict([]byte(v), &fs); err != nil {
				return nil, fmt.Errorf("%s unmarshal error: %w", key, err)
			}
			return &fs, nil
		}
	}
	cfn, err := lookup(n, "metadata", "configFn")
	if err != nil {
		return nil, fmt.Errorf("failed to look up metadata.configFn: %w", err)
	}
	if !isMissingOrNull(cfn) {
		s, err := resyaml.EncodeNode(cfn)
		if err != nil {
			return nil, fmt.Errorf("configFn parse error: %w", err)
		}
		if err := unmarshalStrict([]byte(s), &fs); err != nil {
			return nil, fmt.Errorf("configFn unmarshal error: %w", err)
		}
		return &fs, nil
	}
	if img := m.Annotations["config.kubernetes.io/container"]; img != "" {
		fs.Container.Image = img
		return &fs, nil
	}
	return nil, nil
}

// pluginSpec is the spec as package plugins takes it.
func (fs *FunctionSpec) pluginSpec() plugins.FunctionSpec {
	var p plugins.FunctionSpec
	p.DeferFailure = fs.DeferFailure
	p.Exec.Path, p.Exec.Args, p.Exec.Env = fs.Exec.Path, fs.Exec.Args, fs.Exec.Env
	p.Container.Image, p.Container.Network, p.Container.Env = fs.Container.Image, fs.Container.Network, fs.Container.Env
	for _, m := range fs.Container.StorageMounts {
		p.Container.Mounts = append(p.Container.Mounts, plugins.Mount{Type: m.MountType, Src: m.Src, Dst: m.DstPath, RW: m.ReadWriteMode})
	}
	return p
}

// unmarshalStrict decodes YAML into out as sigs.k8s.io/yaml's
// UnmarshalStrict does: YAML 1.1 (yes is true) read strictly (no
// duplicate keys), converted to JSON (a scalar bound for a string field
// becomes a string), then decoded refusing unknown fields.
func unmarshalStrict(data []byte, out any) error {
	var v any
	if err := yamlv2.UnmarshalStrict(data, &v); err != nil {
		return fmt.Errorf("error converting YAML to JSON: %w", err)
	}
	j, err := json.Marshal(jsonable(v, reflect.TypeOf(out).Elem()))
	if err != nil {
		return fmt.Errorf("error converting YAML to JSON: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.DisallowUnknownFields()
	if err := d.Decode(out); err != nil {
		return fmt.Errorf("error unmarshaling JSON: while decoding JSON: %w", err)
	}
	return nil
}

// jsonable turns a YAML value into one encoding/json takes, guided by the
// target type t: map keys become strings, and a scalar bound for a string
// becomes its text.
func jsonable(v any, t reflect.Type) any {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			ks := fmt.Sprint(k)
			m[ks] = jsonable(e, fieldType(t, ks))
		}
		return m
	case []any:
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e, et)
		}
		return out
	}
	if t != nil && t.Kind() == reflect.String {
		switch x := v.(type) {
		case int:
			return strconv.Itoa(x)
		case int64:
			return strconv.FormatInt(x, 10)
		case uint64:
			return strconv.FormatUint(x, 10)
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64)
		case bool:
			return strconv.FormatBool(x)
		}
	}
	return v
}

// fieldType is the type of the struct field t's JSON name names.
func fieldType(t reflect.Type, name string) reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if n, _, _ := strings.Cut(tag, ","); n == name {
			return f.Type
		}
	}
	return nil
}
