package flux

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFind runs the lookups of the reference corpus's cli-refusals cases
// (flux build's answers, recorded with the flux CLI) and bootstrap's
// gotk-sync.yaml, whose GitRepository comes before the Kustomization.
func TestFind(t *testing.T) {
	for _, tc := range []struct {
		file, name, namespace string
		wantNS                string // the namespace of the object found
		err                   string
	}{
		{file: "./ks.yaml", name: "app", namespace: "flux-system", wantNS: "flux-system"},
		{file: "./ks.yaml", name: "other", namespace: "apps", wantNS: "apps"}, // r9
		{file: "./ks.yaml", name: "nons", namespace: "anything", wantNS: ""},  // r10: no namespace matches any
		{file: "./ks.yaml", name: "missing", namespace: "flux-system", // r7
			err: "failed to get kustomization object: failed find kustomization with name 'missing' and namespace 'flux-system' in file './ks.yaml'"},
		{file: "./ks.yaml", name: "other", namespace: "flux-system", // r8: wrong namespace
			err: "failed to get kustomization object: failed find kustomization with name 'other' and namespace 'flux-system' in file './ks.yaml'"},
		{file: "./bad-ks.yaml", name: "app", namespace: "flux-system", // r11
			err: `failed to get kustomization object: failed to unmarshall kustomization file ./bad-ks.yaml: error unmarshaling JSON: while decoding JSON: time: invalid duration "not-a-duration"`},
		{file: "./notyaml.yaml", name: "app", namespace: "flux-system", // r12
			err: `failed to get kustomization object: failed to unmarshall kustomization file ./notyaml.yaml: json: offset 2: invalid character '{' looking for beginning of object key string`},
		{file: "./gotk-sync.yaml", name: "flux-system", namespace: "flux-system", // allenporter/k8s-gitops
			err: "failed to get kustomization object: failed to unmarshall kustomization file ./gotk-sync.yaml: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field .spec.ignore of type []v1.IgnoreRule"},
	} {
		data, err := os.ReadFile(filepath.Join("testdata/find", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		k, err := Find(data, tc.file, tc.name, tc.namespace)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Find(%s, %s, %s): %v\nwant error %s", tc.file, tc.name, tc.namespace, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Find(%s, %s, %s): %v", tc.file, tc.name, tc.namespace, err)
			continue
		}
		if k.Name != tc.name || k.Namespace != tc.wantNS || k.Spec.Path != "./src" || k.Spec.SourceRef.Kind != "GitRepository" {
			t.Errorf("Find(%s, %s, %s) = %+v", tc.file, tc.name, tc.namespace, k)
		}
	}
}

// TestYAML11Typing: the object is read as YAML 1.1 into typed fields, as
// flux reads it (synthetic cases subst-ks-numeric-value, subst-number-key,
// patches-v1beta2-psm).
func TestYAML11Typing(t *testing.T) {
	find := func(file string) *Kustomization {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("testdata/find", file))
		if err != nil {
			t.Fatal(err)
		}
		k, err := Find(data, file, "app", "flux-system")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	// Numbers and booleans in string fields become strings, YAML 1.1's way.
	if got, want := find("numeric-values.yaml").Spec.PostBuild.Substitute, map[string]string{"NUMV": "5", "FLT": "1.1", "BOOLV": "true"}; !reflect.DeepEqual(got, want) {
		t.Errorf("substitute = %v, want %v", got, want)
	}
	// A key N is the boolean false.
	if got, want := find("number-key.yaml").Spec.PostBuild.Substitute, map[string]string{"false": "5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("substitute = %v, want %v", got, want)
	}
	// v1beta2's patchesStrategicMerge is not in v1: dropped.
	k := find("v1beta2.yaml")
	if k.APIVersion != "kustomize.toolkit.fluxcd.io/v1beta2" || len(k.Spec.Patches) != 0 {
		t.Errorf("v1beta2 object = %+v", k)
	}
}

func TestDecodeAll(t *testing.T) {
	data, err := os.ReadFile("testdata/find/gotk-sync.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Decode types only the Flux Kustomizations: the GitRepository before
	// it is skipped, not refused.
	ks, err := Decode(data)
	if err != nil || len(ks) != 1 || ks[0].Name != "flux-system" || ks[0].Spec.Decryption.Provider != "sops" {
		t.Fatalf("Decode = %v, %v", ks, err)
	}
	if _, err := Decode([]byte("a: [")); err == nil {
		t.Fatal("no error for a file that is not YAML")
	}
}

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"ks.yaml", "gotk-sync.yaml", "v1beta2.yaml", "notyaml.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata/find", f))
		if err != nil {
			t.Fatal(err)
		}
		sub := filepath.Join(dir, "clusters", f[:1])
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Files that are not YAML, or YAML without Flux objects, are not
	// errors; Flux objects of other files are found in walk order.
	objs, err := Discover(diskFS{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, filepath.Base(o.File)+":"+o.Name)
	}
	want := []string{"gotk-sync.yaml:flux-system", "ks.yaml:app", "ks.yaml:other", "ks.yaml:nons", "v1beta2.yaml:app"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Discover = %q, want %q", got, want)
	}
	// A Flux object that does not decode is an error naming its file.
	b, _ := os.ReadFile("testdata/find/bad-ks.yaml")
	os.WriteFile(filepath.Join(dir, "bad.yaml"), b, 0o644)
	if _, err := Discover(diskFS{}, dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "bad.yaml")+": ") {
		t.Errorf("Discover with a broken object: %v", err)
	}
}

// diskFS is the FS of the local disk.
type diskFS struct{}

func (diskFS) Stat(p string) (fs.FileInfo, error)  { return os.Stat(p) }
func (diskFS) Lstat(p string) (fs.FileInfo, error) { return os.Lstat(p) }
func (diskFS) ReadFile(p string, _ bool) ([]byte, fs.FileInfo, error) {
	b, err := os.ReadFile(p)
	return b, nil, err
}
func (diskFS) ReadDir(p string) (fs.FileInfo, []fs.DirEntry, error) {
	e, err := os.ReadDir(p)
	return nil, e, err
}

// TestFromJSON: a Flux Kustomization read from the JSON a record keeps
// (json.Marshal of the rendered object) is the one FromObject reads from
// the object, errors included.
func TestFromJSON(t *testing.T) {
	for _, obj := range []map[string]any{
		{"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": "apps", "namespace": "flux-system", "labels": map[string]any{"a": "<b>&"}},
			"spec": map[string]any{"path": "./apps", "interval": "10m", "prune": true, "timeout": "5m",
				"sourceRef":  map[string]any{"kind": "GitRepository", "name": "flux-system"},
				"postBuild":  map[string]any{"substitute": map[string]any{"N": "3", "S": "x\u2028y"}},
				"patches":    []any{map[string]any{"patch": "- op: add\n  path: /x\n  value: 1", "target": map[string]any{"kind": "Deployment"}}},
				"dependsOn":  []any{map[string]any{"name": "infra"}},
				"components": []any{"../c"}, "targetNamespace": "web"}},
		{"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization", "metadata": map[string]any{"name": "n"},
			"spec": map[string]any{"prune": "yes"}}, // a type error
		{"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization", "metadata": map[string]any{"name": "n"},
			"spec": map[string]any{"interval": "soon"}}, // a bad duration
		{"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization", "metadata": map[string]any{"name": "n"},
			"spec": map[string]any{"retryInterval": float64(60), "path": float64(1.5)}},
	} {
		want, werr := FromObject(obj)
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		got, gerr := FromJSON(b)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(want, got) {
			t.Errorf("FromJSON(%s) = %+v, %v\nFromObject: %+v, %v", b, got, gerr, want, werr)
		}
	}
}
