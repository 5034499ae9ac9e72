package resyaml

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/resource"
	yaml2 "go.yaml.in/yaml/v2"
)

// fastSeeds are documents in the shapes fastDecode reads, and near misses
// it must leave to yaml.v3.
var fastSeeds = []string{
	"a: b\n",
	"n: .nan\n", "l:\n- .NaN\n- .NAN\n", // NaN, which equals nothing
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
	"a: b\n   # comment\nc: d\n",
	"a: b # c\n   # comment\nc: d\n",
	"a: b\n   # comment\n   e\nc: d\n",
	"- b\n  # comment\n- d\n",
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
	if !reflect.DeepEqual(nanAsText(got), nanAsText(want)) {
		t.Fatalf("fastDecode reads %q differently\nfast:    %#v\nyaml.v3: %#v", text, got, want)
	}
}

// nanAsText returns v with every NaN replaced by a string, which
// reflect.DeepEqual can compare (NaN equals nothing, itself included);
// everything else stays as it is.
func nanAsText(v any) any { return mapLeaves(v, nanLeaf) }

func nanLeaf(v any) any {
	if f, ok := v.(float64); ok && f != f {
		return "NaN!"
	}
	return v
}

// mapLeaves returns a copy of the tree v (maps and lists) with leaf applied
// to every other value.
func mapLeaves(v any, leaf func(any) any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = mapLeaves(e, leaf)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = mapLeaves(e, leaf)
		}
		return l
	}
	return leaf(v)
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

// TestFastDecodeGenerated writes random documents in the block style
// fastDecode reads (nested maps and lists, indentless lists, "- k: v"
// items, every scalar style on one or more lines, comments, blank lines,
// indentation of 1 to 4 spaces) and checks each reads as yaml.v3 reads
// it; most must take the fast path.
func TestFastDecodeGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fast := 0
	n := 3000
	if s := os.Getenv("KPIPE_FASTYAML_DOCS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for i := 0; i < n; i++ {
		var b strings.Builder
		g := docGen{rng: rng, b: &b, step: 1 + rng.IntN(4)}
		g.mapping(0, 0)
		text := b.String()
		if _, ok := fastDecode(text); ok {
			fast++
		}
		checkFast(t, text)
	}
	t.Logf("%d of %d fast", fast, n)
	if fast < n/2 {
		t.Errorf("only %d of %d generated documents took the fast path", fast, n)
	}
}

type docGen struct {
	rng  *rand.Rand
	b    *strings.Builder
	step int
}

var genScalars = []string{
	"plain", "two words", "with: colon", "a #hash", "trailing # comment", "'single'", "'it''s'",
	"\"double \\\"q\\\" \\u00e9\"", "1", "-2", "0x1F", "1.5", "true", "no", "~", "null", "2024-01-02",
	"\u00e9t\u00e9", "-flag", "http://x/y#z", "[]", "{}", "''", "\"\"",
}

func (g *docGen) pad(ind int) { g.b.WriteString(strings.Repeat(" ", ind)) }

func (g *docGen) extras(ind int) {
	switch g.rng.IntN(8) {
	case 0:
		g.b.WriteString("\n")
	case 1:
		g.pad(g.rng.IntN(ind + 2))
		g.b.WriteString("# comment\n")
	}
}

// scalar writes a scalar value after "k:" or "-", its continuation lines
// indented past ind.
func (g *docGen) scalar(ind int) {
	cont := strings.Repeat(" ", ind+1+g.rng.IntN(3))
	switch g.rng.IntN(7) {
	case 0:
		fmt.Fprintf(g.b, " word%d and\n%smore words\n", g.rng.IntN(9), cont)
		if g.rng.IntN(2) == 0 {
			fmt.Fprintf(g.b, "\n%sa paragraph\n", cont)
		}
	case 1:
		fmt.Fprintf(g.b, " 'quoted: text\n%s  spans ''lines''\n\n%send'\n", cont, cont)
	case 2:
		fmt.Fprintf(g.b, " \"esc \\\"d\\\"\\t\n%sjoined \\\n%s here  \"\n", cont, cont)
	case 3, 4:
		head := []string{"|", "|-", "|+"}[g.rng.IntN(3)]
		body := strings.Repeat(" ", ind+1+g.rng.IntN(3))
		fmt.Fprintf(g.b, " %s\n%sline one\n\n%s  indented\n%slast\n", head, body, body, body)
		for k := g.rng.IntN(3); k > 0; k-- {
			g.b.WriteString("\n")
		}
	default:
		fmt.Fprintf(g.b, " %s\n", genScalars[g.rng.IntN(len(genScalars))])
	}
}

func (g *docGen) mapping(ind, depth int) {
	for k := 1 + g.rng.IntN(4); k > 0; k-- {
		g.pad(ind)
		g.entry(ind, depth, fmt.Sprintf("key%d", k))
	}
}

// entry writes "key:" and a value at column ind (the key already
// indented).
func (g *docGen) entry(ind, depth int, key string) {
	g.b.WriteString(key + ":")
	switch r := g.rng.IntN(10); {
	case depth < 4 && r < 3:
		g.b.WriteString("\n")
		g.extras(ind)
		g.mapping(ind+g.step, depth+1)
	case depth < 4 && r < 5:
		g.b.WriteString("\n")
		g.sequence(ind+g.rng.IntN(2)*g.step, depth+1) // indentless or not
	case r == 5:
		g.b.WriteString("\n") // null
	default:
		g.scalar(ind)
	}
	g.extras(ind)
}

func (g *docGen) sequence(ind, depth int) {
	for k := 1 + g.rng.IntN(4); k > 0; k-- {
		g.pad(ind)
		g.b.WriteString("-")
		switch r := g.rng.IntN(6); {
		case depth < 4 && r < 2:
			// "- k: v" and more keys under it.
			g.b.WriteString(" ")
			g.entry(ind+2, depth+1, "a")
			g.pad(ind + 2)
			g.entry(ind+2, depth+1, "b")
		case depth < 4 && r == 2:
			g.b.WriteString("\n")
			g.mapping(ind+1+g.rng.IntN(3), depth+1)
		default:
			g.scalar(ind)
		}
	}
}

// v2Seeds are documents whose scalars YAML 1.1 (yaml.v2) reads otherwise
// than YAML 1.2 (yaml.v3), and kustomization files.
var v2Seeds = []string{
	// No final line break (a trimmed inline patch): a literal block
	// scalar that ends the text keeps no final line break.
	"- op: add\n  value: |\n    line1\n    line2", "a: |+\n  x\n\n  y", "a: |-\n  x", "a: b\nc: |\n  d\ne: f",
	"a: [b]", "a: 'b\n  c'", "- a\n- b",
	"a: yes\nb: on\nc: Off\nd: y\ne: N\nf: 0777\ng: 1:20\nh: .5\ni: +12\nj: 0b101\nk: 2001-12-14t21:59:43.10-05:00\n",
	"l: <<\nm: =\nn: .inf\no: -.Inf\np: .nan\nq: 1e3\nr: 1_000\ns: 0x_1F\nt: ...\nu: ---x\nv: -\nw: 1.\nx: -.5e-3\nz: 190:20:30.15\n",
	"yes: a\n", "on: b\n", "1.0: c\n", "~: d\n", "null: e\n", "0x10: f\n", "y: g\n", "Y: h\n", "n: i\n", "=: j\n", "<<: k\n",
	"'yes': a\n\"on\": b\n",
	"- Yes\n- YES\n- yEs\n- ON\n- oN\n- nO\n- True\n- tRUE\n- NULL\n- Null\n- nULL\n- ~x\n- y.\n- Off\n- OFF\n- FALSE\n- fAlse\n- N\n- Y\n",
	"- ../base\n- ./x\n- .\n- ..\n- .5\n- .e\n- .inf\n- .Inf\n- .NAN\n- .nan.\n- -\\n- -x\n- -1\n- -.5\n- -.inf\n- +.inf\n- +x\n- +1\n- --x\n- -..\n- 0\n- 0.5\n- 0x1F\n- <<\n- =\n- <x\n",
	"- 1\n- 12\n- 123456789012345678\n- 1234567890123456789\n- 99999999999999999999\n- 1_0\n- 1,0\n- 1e3\n- 1.0\n- 0\n- 00\n- 09\n- 0o7\n- +1\n- -0\n- 1:2\n- 12:30:00\n- 2001-12-14\n- 1 2\n",
	"- yes\n- 'yes'\n- 0777\n- \"0777\"\n- 12_3\n- 2024-01-02\n",
	"- +_0\n- -_1\n- +_.5\n- -_0x1F\n- ._5\n- +_\n- -_x\n- _1\n", "+_0: a\n", // yaml.v2 drops '_' before it parses a number
	"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: app-prod\nnamePrefix: prod-\nresources:\n- ../base\nimages:\n- name: registry.example.com/app\n  newTag: \"1.2.0\"\nreplicas:\n- name: app\n  count: 3\nconfigMapGenerator:\n- name: cfg\n  behavior: merge\n  literals:\n  - ENVIRONMENT=prod\npatches:\n- path: resources.yaml\n  target:\n    kind: Deployment\n    name: app\nlabels:\n- pairs:\n    app: x\n  includeSelectors: true\n",
	"images:\n- name: nginx\n  newTag: 1.10\n- name: redis\n  newTag: 6\n  digest: sha256:abc\n",
}

// checkFastV2 requires FastDecodeV2 to read text as yaml.v2 reads it into
// an interface{}, or to leave it to yaml.v2.
func checkFastV2(t *testing.T, text string) {
	t.Helper()
	got, ok := FastDecodeV2(text)
	if !ok {
		return
	}
	var v2 any
	if err := yaml2.Unmarshal([]byte(text), &v2); err != nil {
		t.Fatalf("FastDecodeV2 read %q, yaml.v2 fails: %v\nfast: %#v", text, err, got)
	}
	want, err := v2Comparable(v2)
	if err != nil {
		t.Fatalf("FastDecodeV2 read %q, but yaml.v2 reads %v\nfast: %#v", text, err, got)
	}
	if g := fastComparable(got); !reflect.DeepEqual(g, want) {
		t.Fatalf("FastDecodeV2 reads %q differently\nfast:    %#v\nyaml.v2: %#v", text, g, want)
	}
}

// v2Comparable turns yaml.v2's tree into FastDecodeV2's form (string
// keys; NaN as a string, which DeepEqual can compare).
func v2Comparable(v any) (any, error) {
	switch t := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("a key of type %T (%v)", k, k)
			}
			c, err := v2Comparable(e)
			if err != nil {
				return nil, err
			}
			m[ks] = c
		}
		return m, nil
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			c, err := v2Comparable(e)
			if err != nil {
				return nil, err
			}
			l[i] = c
		}
		return l, nil
	case float64:
		if t != t {
			return "NaN!", nil
		}
	}
	return v, nil
}

// fastComparable turns FastDecodeV2's tree into v2Comparable's form: an
// empty value (EmptyNull) is yaml.v2's nil.
func fastComparable(v any) any {
	return mapLeaves(v, func(v any) any {
		if _, ok := v.(resource.EmptyNull); ok {
			return nil
		}
		return nanLeaf(v)
	})
}

// TestFastDecodeShortScalars checks every plain scalar of up to three
// characters drawn from those that make numbers, booleans, nulls and
// sexagesimals in YAML 1.1 or 1.2, as a key and as a value: both fast
// readers read each as their yaml package does, or leave it to it. ("+_0",
// which yaml.v2 reads as 0, was once read as a string.)
func TestFastDecodeShortScalars(t *testing.T) {
	const chars = "+-._019eExXbo:inNaf~"
	var walk func(s string, n int)
	walk = func(s string, n int) {
		if s != "" {
			for _, doc := range []string{s + ": x\n", "k: " + s + "\n"} {
				checkFast(t, doc)
				checkFastV2(t, doc)
			}
		}
		if n == 0 {
			return
		}
		for i := range len(chars) {
			walk(s+chars[i:i+1], n-1)
		}
	}
	walk("", 3)
}

// TestFastDecodeV2MatchesYAMLv2 checks the seeds, the YAML 1.1 seeds and
// 3,000 generated documents: FastDecodeV2 reads each as yaml.v2 does or
// leaves it to yaml.v2, and takes most of them itself.
func TestFastDecodeV2MatchesYAMLv2(t *testing.T) {
	for _, s := range append(append([]string(nil), fastSeeds...), v2Seeds...) {
		checkFastV2(t, s)
	}
	for _, s := range v2Seeds[len(v2Seeds)-2:] {
		if _, ok := FastDecodeV2(s); !ok {
			t.Errorf("FastDecodeV2 left a plain kustomization to yaml.v2:\n%s", s)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	fast, n := 0, 3000
	for i := 0; i < n; i++ {
		var b strings.Builder
		g := docGen{rng: rng, b: &b, step: 1 + rng.IntN(4)}
		g.mapping(0, 0)
		if _, ok := FastDecodeV2(b.String()); ok {
			fast++
		}
		checkFastV2(t, b.String())
	}
	if fast < n/2 {
		t.Errorf("only %d of %d generated documents took the fast path", fast, n)
	}
}

// FuzzFastDecodeV2 requires FastDecodeV2 to read what yaml.v2 reads, or
// to leave the document to it.
func FuzzFastDecodeV2(f *testing.F) {
	for _, s := range append(append([]string(nil), fastSeeds...), v2Seeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		checkFastV2(t, text)
	})
}
