package loaders

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// decodeCases are kustomizations whose fields decodeTree must decode as
// the JSON way does, or leave to it: keys in another case, unknown
// fields, values of other types, nulls, empty lists and maps, embedded
// fields, free-form values, strings that are not UTF-8.
var decodeCases = []string{
	"namePrefix: a-\nresources:\n- ../base\n",
	"NamePrefix: a-\n",
	"namePrefx: a-\n",
	"namePrefix: 1\n",
	"namespace: yes\n",
	"namespace: null\nresources: []\ncommonLabels: {}\n",
	"resources: x\n",
	"images: {}\n",
	"replicas:\n- name: a\n  count: 3\n- name: b\n  count: \"3\"\n",
	"replicas:\n- name: a\n  count: 3.0\n",
	"replicas:\n- name: a\n  count: 3.5\n",
	"replicas:\n- name: a\n  count: 99999999999999999999\n",
	"labels:\n- null\n- pairs: {a: b}\n  includeSelectors: true\n",
	"labels:\n- pairs: {a: 1}\n",
	"patches:\n- path: p.yaml\n  target: null\n- patch: x\n  target: {kind: Deployment, name: a}\n  options: {allowNameChange: true}\n",
	"replacements:\n- path: r.yaml\n- source: {kind: ConfigMap, fieldPath: data.x}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.replicas]\n    options: {create: true, index: 2}\n",
	"replacements:\n- sourceValue: null\n- sourceValue: v\n",
	"helmCharts:\n- name: c\n  valuesInline:\n    a: 1\n    b: [1, 2.5, x, null, true]\n    c: {d: 12345678901234567890}\n    e: .inf\n",
	"vars:\n- name: V\n  objref: {kind: Service, name: s, apiVersion: v1}\n  fieldref: {fieldpath: metadata.name}\n",
	"configMapGenerator:\n- name: c\n  literals: [a=b]\n  options: {disableNameSuffixHash: true, labels: {x: y}}\n",
	"sortOptions:\n  order: legacy\n  legacySortOptions: {orderFirst: [Namespace], orderLast: null}\n",
	"metadata: {name: n, annotations: {a: b}}\n",
	"1: x\n",
	"commonLabels: {a: \"\\xff\"}\n", // U+00FF
	"namePrefix: \"\\xff\"\n",
	"namePrefix: a\xffb\n", // not UTF-8: the YAML reader refuses it first
	"commonLabels:\n  a: b\xff\n",
	"helmCharts:\n- name: c\n  valuesInline:\n    a: b\xff\n",
	"- a\n- b\n",
	"a\n",
	"",
}

// checkDecode decodes data both ways and fails when decodeTree decoded
// what the JSON way refuses, or to another value. It reports whether
// decodeTree decoded it.
func checkDecode(t *testing.T, name string, data []byte) bool {
	t.Helper()
	tree, err := yamlTree(data)
	if err != nil {
		return false
	}
	var direct, viaJSON Kustomization
	ok := decodeTree(tree, &direct)
	jerr := decodeJSON(tree, &viaJSON)
	switch {
	case ok && jerr != nil:
		t.Errorf("%s: decoded directly, where the JSON way fails: %v", name, jerr)
	case ok && !reflect.DeepEqual(direct, viaJSON):
		t.Errorf("%s: decoded directly to\n%#v\nthe JSON way to\n%#v", name, direct, viaJSON)
	}
	return ok
}

// Every kustomization of the repository's test trees, and the cases
// above, decode directly as they decode the JSON way, and most of the
// real ones do decode directly.
func TestDecodeTreeMatchesJSON(t *testing.T) {
	for i, c := range decodeCases {
		checkDecode(t, fmt.Sprintf("case %d %q", i, c), []byte(c))
	}
	var files, direct int
	for _, top := range []string{"../testdata", "../internal/cli/testdata"} {
		filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			switch d.Name() {
			case "kustomization.yaml", "kustomization.yml", "Kustomization":
			default:
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			files++
			if checkDecode(t, p, data) {
				direct++
			}
			return nil
		})
	}
	if files < 50 || direct*10 < files*9 {
		t.Errorf("%d of %d kustomization files decoded directly; want nine in ten or more of at least 50", direct, files)
	}
}

// FuzzKustomizationDecode holds decodeTree to the JSON way on random
// kustomizations.
func FuzzKustomizationDecode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, "input", data)
	})
}
