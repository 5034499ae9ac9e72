package helmrelease

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/flux/helmrelease/internal/hroracle"
)

// The differential tests against helm-controller's own libraries
// (tools/hroracle): helm's strvals parser, chartutil's targetPath setters
// and the whole values merge. They skip, naming the build command, when
// the oracle does not build (offline without the modules).
//
//	go test ./internal/flux/helmrelease -run '^$' -fuzz '^FuzzStrvals$' -fuzztime 100000x
//	go test ./internal/flux/helmrelease -run '^$' -fuzz '^FuzzValues$' -fuzztime 20000x

// picker draws choices from fuzz bytes (zero when they run out).
type picker struct{ b []byte }

func (p *picker) n(k int) int {
	if len(p.b) == 0 || k <= 1 {
		return 0
	}
	v := int(p.b[0])
	p.b = p.b[1:]
	return v % k
}

func (p *picker) pick(s []string) string { return s[p.n(len(s))] }

// destShapes are maps a path is set into: what earlier merges leave.
func destShape(i int) map[string]any {
	switch i % 6 {
	case 0:
		return map[string]any{}
	case 1:
		return map[string]any{"a": map[string]any{"b": float64(1), "shared": "inline"}, "l": []any{"x", float64(2)}}
	case 2:
		return map[string]any{"a": "scalar", "l": map[string]any{"k": "v"}}
	case 3:
		return map[string]any{"a": []any{map[string]any{"b": "c"}, nil}, "c": nil}
	case 4:
		return map[string]any{"l": []any{[]any{"x"}, "y"}, "a": map[string]any{"b": []any{}}}
	default:
		return map[string]any{"a": map[string]any{"b": map[string]any{"c": true}}, "x.y": int64(3)}
	}
}

func TestStrvalsSeedsAgainstLibrary(t *testing.T) {
	o := hroracle.Start(t)
	for _, s := range strvalsSeeds {
		for shape := 0; shape < 6; shape++ {
			for _, asString := range []bool{false, true} {
				compareStrvals(t, o, s, shape, asString)
			}
		}
	}
}

var strvalsSeeds = []string{
	"a=1", "a.b=2", "a.b.c=x,d=y", "l[0]=1", "l[2]=z", "l[0][1]=q", "l[1].k=v", "a[0].b=1",
	"a={x,y}", "a={}", "a={x", "a=", "a", "a,", ".a=1", "a..b=1", "a.=1", "=1", "a[x]=1", "a[-1]=1",
	"a[99999999]=1", "a[1]x=1", `a\.b=1`, `a\=b=c`, `a=b\,c`, "a=b,c", "a.b=1,a.b.c=2", "a=TRUE",
	"a=null", "a=0", "a=007", "a=-5", "a=9223372036854775808", "a=1e3", "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.aa.bb.cc.dd.ee=1",
	"l[0]=1,l[0].x=2", "c.d=1", "x.y=2", "a[0][0]=1", "l={a,b}[0]", "a=\xff", "a.b[1]=", "a.b=}",
}

func compareStrvals(t *testing.T, o *hroracle.Oracle, s string, shape int, asString bool) {
	t.Helper()
	mine := destShape(shape)
	var err error
	if asString {
		err = parseIntoString(s, mine)
	} else {
		err = parseInto(s, mine)
	}
	want := o.Strvals(t, s, destShape(shape), asString)
	if want.Panic != nil {
		t.Fatalf("strvals %q (dest %d): the library panicked: %s", s, shape, *want.Panic)
	}
	checkSame(t, fmt.Sprintf("strvals %q (dest %d, string %v)", s, shape, asString), mine, err, want)
}

func checkSame(t *testing.T, what string, got map[string]any, err error, want hroracle.Response) {
	t.Helper()
	var gotErr, wantErr string
	if err != nil {
		gotErr = err.Error()
	}
	if want.Err != nil {
		wantErr = *want.Err
	}
	if gotErr != wantErr {
		t.Fatalf("%s: error %q, the library says %q", what, gotErr, wantErr)
	}
	if want.Values == nil {
		return // an error without values (values)
	}
	if g, w := hroracle.Canonical(hroracle.Typed(got)), hroracle.Canonical(want.Values); g != w {
		t.Fatalf("%s:\ngot\n%s\nthe library gives\n%s", what, g, w)
	}
}

func FuzzStrvals(f *testing.F) {
	for i, s := range strvalsSeeds {
		f.Add(s, uint8(i), i%2 == 0)
	}
	o := hroracle.Start(f)
	f.Fuzz(func(t *testing.T, s string, shape uint8, asString bool) {
		compareStrvals(t, o, s, int(shape), asString)
		// The same text as a targetPath and a value, through chartutil's
		// setters.
		path, value, _ := strings.Cut(s, "=")
		for _, literal := range []bool{false, true} {
			mine := destShape(int(shape))
			var err error
			if literal {
				err = replacePathLiteralValue(mine, path, value)
			} else {
				err = replacePathValue(mine, path, value)
			}
			want := o.Path(t, path, value, destShape(int(shape)), literal)
			if want.Panic != nil {
				t.Fatalf("path %q value %q: the library panicked: %s", path, value, *want.Panic)
			}
			checkSame(t, fmt.Sprintf("path %q value %q (dest %d, literal %v)", path, value, shape, literal), mine, err, want)
		}
	})
}

// A random HelmRelease and objects, drawn from fuzz bytes.
var (
	fuzzKeys    = []string{"a", "b", "c", "l", "shared", "x.y", "n", "on", "1", ""}
	fuzzScalars = []any{"s", "1", "true", "null", "", "a,b", "{x,y}", float64(1), float64(5000000), 1.5, true, false, nil, "5000000", "0"}
	fuzzPaths   = []string{"a", "a.b", "a.shared", "a.b.c", "l[0]", "l[1]", "l[0].k", "a[0]", `x\.y`, "c.d[2].e", "b", "n", "a.b[0][1]", "l", "1"}
	fuzzTexts   = []string{"v", "'quoted'", `"dq"`, `"'mixed"`, "a,b", "{x,y}", "{x", "5000000", "0", "007", "null", "true", "", "x=y", "[1]", "-3",
		"a: 1\nb: [x]\n", "a:\n  b: 2\n  shared: fromvalues\n", "- 1\n- 2\n", "not: [valid", "null\n", "{}", "a: null\n", "c: {d: 1}\n", "on: yes\n", "\t", "~"}
	fuzzNames = []string{"cm1", "cm2", "s1", "s2", "missing"}
	fuzzDKeys = []string{"values.yaml", "v", "w", "other.yaml"}
)

func fuzzValue(p *picker, depth int) any {
	switch c := p.n(8); {
	case c < 2 && depth < 3:
		m := map[string]any{}
		for i, n := 0, p.n(4); i < n; i++ {
			m[p.pick(fuzzKeys)] = fuzzValue(p, depth+1)
		}
		return m
	case c == 2 && depth < 3:
		l := []any{}
		for i, n := 0, p.n(3); i < n; i++ {
			l = append(l, fuzzValue(p, depth+1))
		}
		return l
	default:
		return fuzzScalars[p.n(len(fuzzScalars))]
	}
}

func fuzzCase(data []byte) (hr string, objects []map[string]any) {
	p := &picker{data}
	spec := map[string]any{
		"interval": "5m",
		"chart":    map[string]any{"spec": map[string]any{"chart": "c", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "r"}}},
	}
	if p.n(4) != 0 {
		m := map[string]any{}
		for i, n := 0, p.n(5); i < n; i++ {
			m[p.pick(fuzzKeys)] = fuzzValue(p, 1)
		}
		spec["values"] = m
	}
	var refs []any
	for i, n := 0, p.n(5); i < n; i++ {
		kind := []string{"ConfigMap", "Secret", "ConfigMap", "Secret", "ConfigMap", "Secret", "ConfigMap", "Secret", "Other"}[p.n(9)]
		name := p.pick(fuzzNames)
		if c := p.n(8); c < 6 { // mostly a name of that kind
			name = map[bool]string{true: "s", false: "cm"}[kind == "Secret"] + fmt.Sprint(c%2+1)
		}
		ref := map[string]any{"kind": kind, "name": name}
		if k := p.n(len(fuzzDKeys) + 2); k < len(fuzzDKeys) {
			ref["valuesKey"] = fuzzDKeys[k]
		}
		if p.n(2) == 0 {
			ref["targetPath"] = p.pick(fuzzPaths)
		}
		if p.n(3) == 0 {
			ref["optional"] = true
		}
		if p.n(4) == 0 {
			ref["literal"] = true
		}
		refs = append(refs, ref)
	}
	if refs != nil {
		spec["valuesFrom"] = refs
	}
	obj := map[string]any{"apiVersion": V2, "kind": "HelmRelease", "metadata": map[string]any{"name": "hr", "namespace": "ns"}, "spec": spec}
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"cm1", "cm2", "s1", "s2"} {
		if p.n(8) == 0 {
			continue // absent
		}
		data := map[string]any{}
		for i, n := 0, 1+p.n(4); i < n; i++ {
			data[p.pick(fuzzDKeys)] = p.pick(fuzzTexts)
		}
		ns := "ns"
		if p.n(8) == 0 {
			ns = "elsewhere"
		}
		o := map[string]any{"apiVersion": "v1", "metadata": map[string]any{"name": name, "namespace": ns}}
		if strings.HasPrefix(name, "cm") {
			o["kind"] = "ConfigMap"
			o["data"] = data
		} else {
			o["kind"] = "Secret"
			enc := map[string]any{}
			sd := map[string]any{}
			for k, v := range data {
				if p.n(2) == 0 {
					sd[k] = v
				} else {
					enc[k] = base64.StdEncoding.EncodeToString([]byte(v.(string)))
				}
			}
			o["data"] = enc
			if len(sd) > 0 {
				o["stringData"] = sd
			}
		}
		objects = append(objects, o)
	}
	return string(b), objects
}

func compareValues(t *testing.T, o *hroracle.Oracle, hrText string, objects []map[string]any) {
	t.Helper()
	var stream strings.Builder
	for _, obj := range objects {
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		stream.Write(b)
		stream.WriteString("\n")
	}
	want := o.Values(t, hrText, stream.String())
	if want.Panic != nil {
		t.Fatalf("the library panicked: %s\n%s", *want.Panic, hrText)
	}
	hr := &HelmRelease{}
	if err := yaml.Unmarshal([]byte(hrText), hr); err != nil {
		t.Fatalf("decoding %s: %v", hrText, err)
	}
	objs := NewObjects()
	objs.Add(objects...)
	got, _, err := Values(hr, objs)
	checkSame(t, "values of "+hrText+"\nobjects "+stream.String(), got, err, want)
}

func FuzzValues(f *testing.F) {
	for i := 0; i < 64; i++ {
		seed := make([]byte, 48)
		for j := range seed {
			seed[j] = byte(i*31 + j*17)
		}
		f.Add(seed)
	}
	o := hroracle.Start(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		hr, objects := fuzzCase(data)
		compareValues(t, o, hr, objects)
	})
}
