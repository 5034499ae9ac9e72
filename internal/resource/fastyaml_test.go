package resource

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fastSeeds are documents in the shapes fastDecode reads, and near misses
// it must leave to yaml.v3.
var fastSeeds = []string{
	"a: b\n",
	"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k: v\n",
	"a:\n  b: c\n  d:\n  - 1\n  - two\n  -\n  - - x\n    - y\n  e: []\n  f: {}\n",
	"l:\n- a: 1\n  b: 2\n- c\n-   d: 3\n    e: 4\n",
	"desc: a plain scalar\n  continued on the next line\n\n  and a paragraph\nnext: x\n",
	"- a\n  b\n- c # comment\n- d #not\n",
	"a: |\n  line 1\n\n  line 3\n   indented\nb: |-\n  x\n\n\nc: |+\n  y\n\n\nd: x\n",
	"a: |\n\n  after an empty line\n",
	"a: |\n  x\n      \n  y\n",
	"a: |  # comment\n  x\n# end\nb: 1\n",
	"s: 'it''s'\nd: \"tab\\there \\\"q\\\" \\u00e9 \\x41 \\U0001F600 \\\\ \\'\"\n'k': 1\n\"k2\": 2\n",
	"n: 1\nf: 1.5\nh: 0x1F\no: 0o17\nz: 0755\nt: true\nF: False\nnu: null\nti: ~\ny: yes\nts: 2024-01-02\nneg: -1\nbig: 123456789012345678901\ninf: .inf\nu: 1_000\n",
	"a:\nb: # nothing\nc:\n\nd: x\n",
	"key with spaces: value with: colon\n",
	"a: b\n  c: d\n",
	"a: 'multi\n  line'\n",
	"a: \"multi\n  line\"\n",
	"a: >\n  folded\n",
	"a: |2\n    x\n",
	"a: &x 1\nb: *x\n",
	"a: !!str 1\n",
	"<<: {a: 1}\n",
	"a: [1, 2]\nb: {c: d}\n",
	"a: 1\na: 2\n",
	"? a\n: b\n",
	"a:\n  - b\n  c: d\n",
	"a: b # c\n  d\n",
	"a: b\n\tc: d\n",
	"1: a\ntrue: b\n",
	"a: x\n...\n",
	"a: |\n    x\n  y\n",
	"a: |\n      \n  x\n",
	"- - - a\n    - b\n  - c\n",
	"a:\n  # comment\n  b: c\n",
	"a: \"x\" # comment\nb: 'y'  \n",
	"a: -\n",
	"a: - b\n",
	"a: :x\nb: ?y\nc: -z\n",
	"a: b:c\nd: http://x.y/z#frag\n",
	"a: `x`\n",
	"a: \"\\q\"\n",
	"a: \"\\ud800\"\n",
	"a: ''\nb: \"\"\n",
	"a: '#not a comment'\n",
	"a:    \n  b\n",
	"  a: 1\n  b: 2\n",
	"a:\n- b\nc: d\n",
	"a: b\n- c\n",
	"a: b\nc\n",
	"a: |-\n  x\nb: |+\n  y\n",
	"a: |+\n  y\n",
	"x: \u00e9t\u00e9 \u4e16\n",
	"--- 0:\n",
	"a: 'Container name: required\n    for volumes, optional for env\n\n    vars'\nb: 1\n",
	"a: '\n  x\n\n\n  y  \n  '\n",
	"a: 'it''s\n  ''quoted'''\n- x\n",
	"- 'a\n  b'\n- \"c\n  d\"\n- \"e\\\n  f\"\n",
	"a: 'x\ny'\n",
	"a: 'x\n  y' z\n",
	"a: \"x\n  y\" # c\n",
	"a: \"x \\\n  y\\\n\n  z  \"\n",
	"a: \"first  \n  \\t second \\\"q\\\" \\u00e9\n\n\n  third\\\n  \"\n",
	"a: \"x\\\n\n  y\"\n",
	"- \"a\n  \\\n  b\"\n",
}

// TestFastDecodeMatchesNodes checks, for the seeds and the real CRDs under
// testdata, that fastDecode either leaves a document to yaml.v3 or reads
// exactly what the yaml.v3 path reads.
func TestFastDecodeMatchesNodes(t *testing.T) {
	for _, s := range fastSeeds {
		checkFast(t, s)
	}
}

// TestFastDecodeReadsCRDs checks fastDecode reads a generated CRD (the
// shape it exists for) itself, as yaml.v3 would.
func TestFastDecodeReadsCRDs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*crd*.yaml"))
	doc := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.16.5
  name: pytorchjobs.kubeflow.org
spec:
  versions:
  - additionalPrinterColumns:
    - jsonPath: .status.conditions[-1:].type
      name: State
      type: string
    name: v1
    schema:
      openAPIV3Schema:
        description: PyTorchJob Represents a PyTorchJob resource.
        properties:
          apiVersion:
            description: |-
              APIVersion defines the versioned schema of this representation of an object.
              More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
            type: string
          maxReplicas:
            description: upper limit for the number of pods that can be set
              by the autoscaler; cannot be smaller than MinReplicas, defaults
              to null.
            format: int32
            type: integer
          quantity:
            anyOf:
            - type: integer
            - type: string
            pattern: ^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$
            x-kubernetes-int-or-string: true
          ports:
            items:
              type: object
            type: array
            x-kubernetes-list-map-keys:
            - containerPort
            - protocol
            x-kubernetes-list-type: map
          containerName:
            description: 'Container name: required
              for volumes, optional for env
              vars'
          escaped:
            description: "Examples: \"ext4\", \"xfs\".\nApart
              from that, \u00e9 \
              joined"
          default:
            default: "TCP"
            enum:
            - 'A'
            - "B"
            minimum: 0
`
	if _, ok := fastDecode(doc); !ok {
		t.Errorf("fastDecode left a CRD to yaml.v3")
	}
	checkFast(t, doc)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := splitDocuments(strings.ReplaceAll(string(data), "\r\n", "\n"))
		if err != nil {
			continue
		}
		for _, d := range docs {
			checkFast(t, d.text)
		}
	}
}

func checkFast(t *testing.T, text string) {
	t.Helper()
	got, ok := fastDecode(text)
	if !ok {
		return
	}
	want, err := decodeNodes(document{text: text, firstLine: 1})
	if err != nil {
		t.Fatalf("fastDecode read %q, yaml.v3 fails: %v\nfast: %#v", text, err, got)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fastDecode reads %q differently\nfast:    %#v\nyaml.v3: %#v", text, got, want)
	}
}

// FuzzFastDecode requires fastDecode to read what yaml.v3 reads, or to
// leave the document to it.
func FuzzFastDecode(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		checkFast(t, text)
	})
}
