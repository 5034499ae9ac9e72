package postbuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

func TestSubstitute(t *testing.T) {
	in := `apiVersion: v1
data:
  bool: ${B}
  missing: ${MISSING}
  num: ${N}
  obj: ${J}
kind: ConfigMap
metadata:
  name: cm-${ENV}
`
	o := Options{Name: "app", Namespace: "", PostBuild: true, Vars: map[string]string{"B": "yes", "N": "3", "J": `{"a": 1}`, "ENV": "prod"}}
	got, err := Apply([]byte(in), o)
	if err != nil {
		t.Fatal(err)
	}
	// The text is re-read as YAML 1.1: yes is a boolean, 3 a number, the
	// JSON a map, nothing null; names are substituted too; the owner
	// namespace label is the object's own, here "".
	want := `apiVersion: v1
data:
  bool: true
  missing: null
  num: 3
  obj:
    a: 1
kind: ConfigMap
metadata:
  labels:
    kustomize.toolkit.fluxcd.io/name: app
    kustomize.toolkit.fluxcd.io/namespace: ""
  name: cm-prod
---
`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// Without variables (flux build --dry-run with substituteFrom only),
	// nothing is substituted, defaults included; with Always, defaults
	// apply.
	in2 := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: ${A:=dflt}\n"
	for _, always := range []bool{false, true} {
		got, err := Apply([]byte(in2), Options{PostBuild: true, Always: always})
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(got), "a: ${A:=dflt}"); has == always {
			t.Errorf("Always=%v:\n%s", always, got)
		}
	}

	// The opt-out, as a label or an annotation; "Disabled" is not one.
	for _, meta := range []string{"labels", "annotations"} {
		doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  " + meta + ":\n    kustomize.toolkit.fluxcd.io/substitute: disabled\n  name: x\ndata:\n  a: ${A}\n"
		got, err := Apply([]byte(doc), Options{PostBuild: true, Vars: map[string]string{"A": "v"}})
		if err != nil || !strings.Contains(string(got), "a: ${A}") {
			t.Errorf("opt-out by %s: %v\n%s", meta, err, got)
		}
	}
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    kustomize.toolkit.fluxcd.io/substitute: Disabled\n  name: x\ndata:\n  a: ${A}\n"
	if got, err := Apply([]byte(doc), Options{PostBuild: true, Vars: map[string]string{"A": "v"}}); err != nil || !strings.Contains(string(got), "a: v") {
		t.Errorf("Disabled opted out: %v\n%s", err, got)
	}
}

func TestSubstituteErrors(t *testing.T) {
	for _, tc := range []struct {
		in     string
		vars   map[string]string
		strict bool
		want   string
	}{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: ${X}\n", map[string]string{"Y": "1"}, true,
			`var substitution failed for 'a': envsubst error: variable substitution failed: variable not set (strict mode): "X"`},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", map[string]string{"bad-name": "1"}, false,
			`var substitution failed for 'a': envsubst error: 'bad-name' var name is invalid, must match '^[_[:alpha:]][_[:alpha:][:digit:]]*$'`},
		// Two resources left with one id by substitution: kustomize's
		// ResMap.Replace refuses.
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${A}-x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${B}-x\n", map[string]string{"C": "1"}, false,
			"in Replace: id matched 2 resources"},
	} {
		_, err := Apply([]byte(tc.in), Options{PostBuild: true, Vars: tc.vars, Strict: tc.strict})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v\nwant %s", err, tc.want)
		}
	}
}

func TestMaskSOPS(t *testing.T) {
	secret := func(body string) map[string]any {
		obj, err := yamlObject([]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n" + body))
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	encode := func(obj map[string]any) string {
		b, err := encodeOne(normalize(obj).(map[string]any))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Encrypted by SOPS as a whole: every value masked, sops removed.
	obj := secret("data:\n  a: ENC[AES256_GCM,data:x]\nstringData:\n  b: ENC[AES256_GCM,data:y]\nsops:\n  mac: ENC[AES256_GCM,data:z]\n")
	if err := MaskSOPS(obj); err != nil {
		t.Fatal(err)
	}
	if got, want := encode(obj), "apiVersion: v1\ndata:\n  a: KipTT1BTKio=\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  b: '**SOPS**'\n"; got != want {
		t.Errorf("whole object:\n%s\nwant\n%s", got, want)
	}
	// A dockerconfigjson Secret: a JSON mask.
	obj = secret("type: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: ENC[x]\nsops:\n  mac: ENC[y]\n")
	if err := MaskSOPS(obj); err != nil {
		t.Fatal(err)
	}
	if got := obj["data"].(map[string]any)[".dockerconfigjson"]; got != "eyJtYXNrIjoiKipTT1BTKioifQ==" {
		t.Errorf("dockerconfigjson: %v", got)
	}
	// Value by value: only values whose decoding holds sops and ENC[;
	// a stringData value gets the base64 mask.
	obj = secret("data:\n  enc: " + b64("sops ENC[x]") + "\n  plain: " + b64("hello") + "\nstringData:\n  s: sops ENC[y]\n")
	if err := MaskSOPS(obj); err != nil {
		t.Fatal(err)
	}
	if got, want := encode(obj), "apiVersion: v1\ndata:\n  enc: KipTT1BTKio=\n  plain: aGVsbG8=\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  s: KipTT1BTKio=\n"; got != want {
		t.Errorf("per value:\n%s\nwant\n%s", got, want)
	}
	// A data value that is not base64 fails the build.
	if err := MaskSOPS(secret("data:\n  a: not base64!\n")); err == nil || err.Error() != "failed to mask secret s sops data: illegal base64 data at input byte 3" {
		t.Errorf("bad base64: %v", err)
	}
	// An empty data map is removed (kustomize's SetDataMap); ConfigMaps
	// are left alone.
	obj = secret("data: {}\n")
	if err := MaskSOPS(obj); err != nil || obj["data"] != nil {
		t.Errorf("empty data: %v %v", err, obj)
	}
}

func b64(s string) string {
	b, _ := json.Marshal([]byte(s))
	return strings.Trim(string(b), `"`)
}

func TestCommonMetadata(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    a: x\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    n: 1\n  name: b\n"
	objs, err := Objects([]byte(in), Options{Name: "app", Namespace: "ns", CommonLabels: map[string]string{"kustomize.toolkit.fluxcd.io/name": "over", "c": "y"}})
	if err != nil {
		t.Fatal(err)
	}
	// commonMetadata overrides the owner labels; an object with a label
	// that is not a string loses all its labels but commonMetadata's.
	got := func(i int) map[string]any { return objs[i]["metadata"].(map[string]any)["labels"].(map[string]any) }
	if l := got(0); l["kustomize.toolkit.fluxcd.io/name"] != "over" || l["a"] != "x" || l["c"] != "y" || l["kustomize.toolkit.fluxcd.io/namespace"] != "ns" {
		t.Errorf("a: %v", l)
	}
	if l := got(1); len(l) != 2 || l["c"] != "y" {
		t.Errorf("b: %v", l)
	}
}

func TestReadObjects(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMapList
items:
- apiVersion: v1
  kind: ConfigMap
  data:
    k: v
---
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
metadata:
  name: k
---
apiVersion: v1
kind: ConfigMap
data:
  big: 12345678901234567890
metadata:
  name: c
`
	got, err := Apply([]byte(in), Options{Name: "n"})
	if err != nil {
		t.Fatal(err)
	}
	// The list's item is kept without a name, the kustomize
	// Kustomization dropped, an integer past int64 printed as a float.
	want := `apiVersion: v1
data:
  k: v
kind: ConfigMap
---
apiVersion: v1
data:
  big: 12345678901234567000
kind: ConfigMap
metadata:
  labels:
    kustomize.toolkit.fluxcd.io/name: "n"
    kustomize.toolkit.fluxcd.io/namespace: ""
  name: c
---
`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got, err := Apply(nil, Options{}); err != nil || len(got) != 0 {
		t.Errorf("no objects: %q, %v", got, err)
	}
}

// referenceEncode is flux's way to print a document of kustomize's
// output, with sigs.k8s.io/yaml only: YAML 1.1 to JSON, apimachinery's
// numbers (int64 when they fit, float64 otherwise), JSON to YAML.
func referenceEncode(doc []byte) ([]byte, bool) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, false
	}
	j, err = json.Marshal(normalize(v))
	if err != nil {
		return nil, false
	}
	out, err := yaml.JSONToYAML(j)
	return out, err == nil
}

// FuzzEncode checks the output path (internal/output's emitter behind
// apimachinery's reading) against sigs.k8s.io/yaml's on random documents.
//
//	go test ./internal/flux/postbuild -run '^$' -fuzz FuzzEncode -fuzztime 50000x
func FuzzEncode(f *testing.F) {
	dirs, _ := filepath.Glob("testdata/cases/*/kustomized.yaml")
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, doc := range splitDocuments(b) {
			f.Add(doc)
		}
	}
	f.Add([]byte("a: 1.10\nb: 0755\nc: 12345678901234567890\nd: 1e3\ne: 2024-01-02\nf: \"x\\ty\"\ng: [~, .5, -0, 0x1F]\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if jsonKeysCollide(doc) {
			return // the reference itself picks one at random (see jsonKeysCollide)
		}
		want, ok := referenceEncode(doc)
		if !ok {
			return
		}
		obj, err := yamlObject(doc)
		if err != nil || obj == nil {
			t.Fatalf("reference reads %q, yamlObject: %v", doc, err)
		}
		got, err := encodeOne(normalize(obj).(map[string]any))
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %q\nwant %q", doc, got, want)
		}
	})
}

// jsonKeysCollide reports whether a mapping of doc has two keys that
// sigs.k8s.io/yaml's YAML-to-JSON conversion names alike (8 and 08, read
// by YAML 1.1 as an int and a float): the library walks a Go map there, so
// which value the JSON keeps changes from run to run, in Flux as in the
// reference, and no output can be compared. Each key is converted alone
// by the library itself.
func jsonKeysCollide(doc []byte) bool {
	var v any
	if yamlv2.Unmarshal(doc, &v) != nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[any]any:
			seen := map[string]bool{}
			for k, x := range v {
				one, err := yamlv2.Marshal(map[any]any{k: nil})
				if err != nil {
					return false
				}
				j, err := yaml.YAMLToJSON(one)
				if err != nil {
					return false
				}
				var m map[string]any
				if json.Unmarshal(j, &m) != nil {
					return false
				}
				for name := range m {
					if seen[name] {
						return true
					}
					seen[name] = true
				}
				if walk(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// BenchmarkApply post-builds the corpus cases' kustomize outputs together
// (640 objects), every one substituted.
func BenchmarkApply(b *testing.B) {
	files, _ := filepath.Glob("testdata/cases/*/kustomized.yaml")
	o := Options{Name: "app", Namespace: "flux-system", PostBuild: true, Always: true}
	var all []byte
	for i := 0; i < 4; i++ {
		for j, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Apply(data, o); err != nil {
				continue // the cases of errors
			}
			// Unique names, so that no two resources share an id.
			all = append(all, bytes.ReplaceAll(data, []byte("\n  name: "), fmt.Appendf(nil, "\n  name: b%d-%d-", i, j))...)
			all = append(all, "\n---\n"...)
		}
	}
	objs, err := Objects(all, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(all)))
	for b.Loop() {
		if _, err := Apply(all, o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(objs)), "objects")
}

// TestSubstituteWithoutExpressions: a text without "$" is substituted
// without being parsed again; the result must be what parsing gives.
func TestSubstituteWithoutExpressions(t *testing.T) {
	files, _ := filepath.Glob("testdata/cases/*/kustomized.yaml")
	files = append(files, "") // and the document below
	n := 0
	for _, f := range files {
		data := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: 12345678901234567\n  b: 1e+30\n  c: 0.1\n  d: [1, 2.5, 9007199254740993]\n")
		if f != "" {
			var err error
			if data, err = os.ReadFile(f); err != nil {
				t.Fatal(err)
			}
		}
		for _, doc := range splitDocuments(data) {
			if bytes.IndexByte(doc, '$') >= 0 {
				continue
			}
			obj, err := yamlObject(doc)
			if err != nil || obj == nil {
				continue
			}
			want, err := Substitute(doc, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := throughFloat64(obj); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s:\n got %v\nwant %v", doc, got, want)
			}
			n++
		}
	}
	if n < 60 {
		t.Fatalf("only %d documents", n)
	}
}
