package stages

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/loaders"
)

// inlineValues parses valuesInline as the kustomization loader does.
func inlineValues(t *testing.T, y string) map[string]any {
	t.Helper()
	var k loaders.HelmChart
	if err := loaders.DecodeConfig([]byte("valuesInline:\n"+y), &k); err != nil {
		t.Fatal(err)
	}
	return k.ValuesInline
}

const chartValues = `# defaults
list:
- name: a
  v: 1
scalars: [x, y]
map:
  a: 1
kept:
  z: 1
b1: yes
oct: 010
ts: 2001-12-14
gone: 5
`

// TestHelmValuesMerge checks the values file helm gets for each valuesMerge
// mode against what kustomize v5.8.0 writes for the same inputs (helm reads
// JSON as YAML, so only the values matter).
func TestHelmValuesMerge(t *testing.T) {
	inline := `
  list:
  - name: a
    w: 2
  scalars: [z]
  map: {b: 2}
  kept: {}
  added: {}
  gone: null
  yy: yes
  num: 1.5
`
	for merge, want := range map[string]string{
		"override": `{"added":{},"b1":"yes","kept":{"z":1},"list":[{"name":"a","w":2}],"map":{"a":1,"b":2},"num":1.5,"oct":8,"scalars":["z"],"ts":"2001-12-14T00:00:00Z","yy":true}`,
		"":         `{"added":{},"b1":"yes","kept":{"z":1},"list":[{"name":"a","w":2}],"map":{"a":1,"b":2},"num":1.5,"oct":8,"scalars":["z"],"ts":"2001-12-14T00:00:00Z","yy":true}`,
		"merge":    `{"added":{},"b1":"yes","gone":5,"kept":{"z":1},"list":[{"name":"a","v":1}],"map":{"a":1,"b":2},"num":1.5,"oct":8,"scalars":["x","y"],"ts":"2001-12-14T00:00:00Z","yy":true}`,
		"replace":  `{"added":{},"gone":null,"kept":{},"list":[{"name":"a","w":2}],"map":{"b":2},"num":1.5,"scalars":["z"],"yy":true}`,
	} {
		args := HelmChartArgs{}
		args.ValuesMerge = merge
		if merge == "" {
			args.ValuesMerge = valuesMergeOverride
		}
		args.ValuesInline = inlineValues(t, inline)
		got, err := helmValues(args, "values.yaml", memFiles(map[string]string{"values.yaml": chartValues}))
		if err != nil {
			t.Fatalf("%s: %v", merge, err)
		}
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", merge, got, want)
		}
		var check any
		if err := json.Unmarshal(got, &check); err != nil {
			t.Errorf("%s: not valid JSON: %v", merge, err)
		}
	}
}

func TestHelmValuesWithoutInlineAreTheFileAsItIs(t *testing.T) {
	got, err := helmValues(HelmChartArgs{}, "values.yaml", memFiles(map[string]string{"values.yaml": chartValues}))
	if err != nil || string(got) != chartValues {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestHelmValuesErrors(t *testing.T) {
	for _, tc := range []struct{ merge, file, inline, want string }{
		{"override", chartValues, "\n  map: 5\n", "could not merge values: wrong node kind: expected MappingNode but got ScalarNode: node contents:\n5\n"},
		{"merge", chartValues, "\n  map: 5\n", "could not merge values: wrong node kind: expected ScalarNode but got MappingNode: node contents:\na: 1\n"},
		{"override", "", "\n  a: 1\n", "could not parse values file into rnode: EOF"},
		{"override", "[1, 2]", "\n  a: 1\n", "wrong node kind: expected SequenceNode but got MappingNode"},
	} {
		args := HelmChartArgs{}
		args.ValuesMerge = tc.merge
		args.ValuesInline = inlineValues(t, tc.inline)
		_, err := helmValues(args, "values.yaml", memFiles(map[string]string{"values.yaml": tc.file}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v", tc, err)
		}
	}
	// replace does not read the values file at all.
	args := HelmChartArgs{}
	args.ValuesMerge = valuesMergeReplace
	args.ValuesInline = map[string]any{"a": 1.0}
	if got, err := helmValues(args, "missing.yaml", memFiles(nil)); err != nil || string(got) != `{"a":1}` {
		t.Errorf("replace with no values file: %s, %v", got, err)
	}
}
