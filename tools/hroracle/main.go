// Command hroracle runs the libraries helm-controller renders HelmRelease
// values with, at the versions Flux pins, for the differential tests of
// kpipe's port of them (internal/flux/helmrelease): the HelmRelease API
// types (github.com/fluxcd/helm-controller/api/v2), the values merge
// (github.com/fluxcd/pkg/chartutil ChartValuesFromReferences, over a fake
// client holding the given ConfigMaps and Secrets) and helm's strvals
// parser (helm.sh/helm/v4/pkg/strvals). The tests build it
// (internal/flux/helmrelease/internal/hroracle) with
//
//	go build -C tools/hroracle -o DIR/hroracle .
//
// and keep it running. It reads one JSON request per line on stdin and
// writes one JSON line per request:
//
//   - {"op": "values", "hr": YAML, "objects": YAML} -> {"values": T} or
//     {"err": "..."}: the HelmRelease decoded as the oracle of the
//     reference corpus decodes it (sigs.k8s.io/yaml into helmv2.HelmRelease),
//     the ConfigMaps and Secrets of the objects stream put in a fake
//     client (a Secret's stringData folded into data, as the API server
//     does), then ChartValuesFromReferences(hr.Namespace, hr.GetValues(),
//     hr.Spec.ValuesFrom...).
//   - {"op": "strvals", "s": "...", "dest": T, "string": false} -> {"values":
//     T} (dest after strvals.ParseInto, or ParseIntoString when string is
//     set) and "err" when the parser failed (dest is returned as left).
//   - {"op": "path", "path": "...", "value": "...", "dest": T, "literal":
//     false} -> the same, through chartutil.ReplacePathValue (or
//     ReplacePathLiteralValue).
//
// T is a value with its Go type kept (JSON would fold int64 into float64):
// {"m": {k: T}}, {"l": [T]}, {"s": "..."}, {"i": "int64 in decimal"},
// {"f": "float64 as strconv 'g' -1"}, {"b": bool}, {"n": true} for nil, and
// {"x": "%T"} for any other type. A panic of the library answers
// {"panic": "..."}.
//
// It has its own module (as tools/fluxoracle does), so that kpipe's module
// never depends on Flux or helm.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	sigsyaml "sigs.k8s.io/yaml"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/chartutil"
	"helm.sh/helm/v4/pkg/strvals"
)

type request struct {
	Op string `json:"op"`

	// values
	HR      string `json:"hr"`
	Objects string `json:"objects"`

	// strvals, path
	S       string          `json:"s"`
	Dest    json.RawMessage `json:"dest"`
	String  bool            `json:"string"`
	Path    string          `json:"path"`
	Value   string          `json:"value"`
	Literal bool            `json:"literal"`
}

type response struct {
	Values any     `json:"values,omitempty"`
	Err    *string `json:"err,omitempty"`
	Panic  *string `json:"panic,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<28)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "hroracle: bad request:", err)
			os.Exit(2)
		}
		res := serve(req)
		if err := enc.Encode(res); err != nil {
			fmt.Fprintln(os.Stderr, "hroracle:", err)
			os.Exit(2)
		}
		if err := out.Flush(); err != nil {
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "hroracle:", err)
		os.Exit(2)
	}
}

func fail(err error) response {
	e := err.Error()
	return response{Err: &e}
}

func serve(req request) (res response) {
	defer func() {
		if r := recover(); r != nil {
			p := fmt.Sprint(r)
			res = response{Panic: &p}
		}
	}()
	switch req.Op {
	case "values":
		return values(req)
	case "strvals", "path":
		dest := map[string]any{}
		if len(req.Dest) > 0 {
			var t any
			if err := json.Unmarshal(req.Dest, &t); err != nil {
				return fail(err)
			}
			m, ok := untype(t).(map[string]any)
			if !ok {
				return fail(fmt.Errorf("dest is not a map"))
			}
			dest = m
		}
		var err error
		switch {
		case req.Op == "path" && req.Literal:
			err = chartutil.ReplacePathLiteralValue(dest, req.Path, req.Value)
		case req.Op == "path":
			err = chartutil.ReplacePathValue(dest, req.Path, req.Value)
		case req.String:
			err = strvals.ParseIntoString(req.S, dest)
		default:
			err = strvals.ParseInto(req.S, dest)
		}
		res = response{Values: typed(dest)}
		if err != nil {
			e := err.Error()
			res.Err = &e
		}
		return res
	default:
		fmt.Fprintf(os.Stderr, "hroracle: unknown op %q\n", req.Op)
		os.Exit(2)
	}
	return
}

func values(req request) response {
	hr := &helmv2.HelmRelease{}
	if err := sigsyaml.Unmarshal([]byte(req.HR), hr); err != nil {
		return fail(err)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	var objs []client.Object
	d := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(req.Objects)), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(u); err != nil {
			if err == io.EOF {
				break
			}
			return fail(err)
		}
		switch u.GetKind() {
		case "ConfigMap":
			cm := &corev1.ConfigMap{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cm); err != nil {
				return fail(err)
			}
			objs = append(objs, cm)
		case "Secret":
			sec := &corev1.Secret{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, sec); err != nil {
				return fail(err)
			}
			if sec.Data == nil {
				sec.Data = map[string][]byte{}
			}
			for k, v := range sec.StringData {
				sec.Data[k] = []byte(v)
			}
			sec.StringData = nil
			objs = append(objs, sec)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	vals, err := chartutil.ChartValuesFromReferences(context.Background(), logr.Discard(), c, hr.Namespace,
		hr.GetValues(), hr.Spec.ValuesFrom...)
	if err != nil {
		return fail(err)
	}
	return response{Values: typed(map[string]any(vals))}
}

// typed encodes v with its Go types (see the package comment).
func typed(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = typed(x)
		}
		return map[string]any{"m": m}
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = typed(x)
		}
		return map[string]any{"l": l}
	case string:
		return map[string]any{"s": v}
	case int64:
		return map[string]any{"i": strconv.FormatInt(v, 10)}
	case float64:
		return map[string]any{"f": strconv.FormatFloat(v, 'g', -1, 64)}
	case bool:
		return map[string]any{"b": v}
	case nil:
		return map[string]any{"n": true}
	default:
		return map[string]any{"x": fmt.Sprintf("%T", v)}
	}
}

// untype decodes typed's form.
func untype(t any) any {
	m, ok := t.(map[string]any)
	if !ok || len(m) != 1 {
		panic(fmt.Sprintf("not a typed value: %v", t))
	}
	for k, v := range m {
		switch k {
		case "m":
			out := map[string]any{}
			for key, x := range v.(map[string]any) {
				out[key] = untype(x)
			}
			return out
		case "l":
			in := v.([]any)
			out := make([]any, len(in))
			for i, x := range in {
				out[i] = untype(x)
			}
			return out
		case "s":
			return v.(string)
		case "i":
			n, err := strconv.ParseInt(v.(string), 10, 64)
			if err != nil {
				panic(err)
			}
			return n
		case "f":
			f, err := strconv.ParseFloat(v.(string), 64)
			if err != nil {
				panic(err)
			}
			return f
		case "b":
			return v.(bool)
		case "n":
			return nil
		}
	}
	panic(fmt.Sprintf("not a typed value: %v", t))
}
