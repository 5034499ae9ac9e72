package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/resyaml"
)

// TestDirectCoversTypicalResources checks that the direct emitter, not
// the fallback, prints the shapes most Kubernetes configuration is made
// of, and that it prints them as the reference path does. A regression
// here costs speed, not bytes: the fuzz targets guard the bytes.
func TestDirectCoversTypicalResources(t *testing.T) {
	docs, err := resyaml.DecodeValues([]byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app.kubernetes.io/name: web, app.kubernetes.io/version: "1.0.0", tier: "3"}
  annotations: {enabled: "true", note: "see ./docs/web.md"}
spec:
  replicas: 3
  paused: false
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {}}
    spec:
      containers:
      - name: web
        image: registry.example.com/web:1.2.3
        args: [--port=8080, "--log-level=info"]
        ports: [{containerPort: 8080, protocol: TCP}]
        resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 1Gi}}
        env: [{name: A, value: ""}, {name: B}]
      volumes: []
      nodeSelector: null
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data:
  application.properties: |
    LOG_LEVEL=info

    PORT=8080
  script: "echo a\necho b"
  description: a long line of words that yaml.v2 folds at a space once it passes column eighty, and again past it
  docs:
  - a long line of words in a list item that yaml.v2 folds at a space once it passes column eighty, twice over to be sure
  - {deep: {deeper: a long line of words deep in maps that yaml.v2 folds at a space once it passes column eighty}}
  nested:
  - - a
    - b
  - []
`))
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		var buf bytes.Buffer
		if !encodeDirect(&buf, d) {
			t.Errorf("document %d: the direct emitter fell back; it covers these shapes\n%s", i, buf.String())
			continue
		}
		want, err := referenceFromValue(d)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("document %d:\n--- direct\n%s\n--- reference\n%s", i, buf.Bytes(), want)
		}
	}
}

// TestDirectFallsBack checks shapes the direct emitter leaves to the
// reference path are detected (encodeDirect reports false) and still
// print the reference bytes through MarshalValue.
func TestDirectFallsBack(t *testing.T) {
	for _, v := range []any{
		map[string]any{"a": 1.5},
		map[string]any{"a": "next\u0085line"},
		map[string]any{"a": "line\u2028separator"},
		map[string]any{"a": "bad \xff byte"},
		map[string]any{strings.Repeat("k", 129): "a key yaml.v2 writes as a complex key"},
		map[string]any{"two\nlines": "a multi-line key"},
	} {
		var buf bytes.Buffer
		if encodeDirect(&buf, v) {
			t.Errorf("%#v: direct emitter took a shape it does not cover", v)
		}
		want, err := referenceFromValue(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := MarshalValue(v)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%#v: got %q (%v), want %q", v, got, err, want)
		}
	}
}

// TestDirectWritesEveryStyle checks that the direct emitter, not the
// fallback, prints strings in each style yaml.v2 picks, as the reference
// path prints them: a CRD's field descriptions (colons, quotes, backticks,
// "#", non-ASCII, long lines folded at column 80, several paragraphs), a
// shell script in a ConfigMap, and strings that read as other types.
func TestDirectWritesEveryStyle(t *testing.T) {
	docs, err := resyaml.DecodeValues([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: jobs.example.com
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        properties:
          spec:
            properties:
              runPolicy:
                description: 'RunPolicy encapsulates various runtime policies of the distributed training job, for example how to clean up resources and how long the job can stay active.'
              schedulingPolicy:
                description: "SchedulingPolicy encapsulates various scheduling policies of the distributed training\n job, for example \"minAvailable\" for gang-scheduling.\n\n\nDeprecated: use\n\tthe \x60scheduling\x60 field instead."
              ttl:
                description: |-
                  TTLSecondsAfterFinished is the TTL to clean up jobs.
                  It may take extra ReconcilePeriod seconds for the cleanup, since
                  reconcile gets called periodically.
                  Default to infinite.
              selector:
                description: "A label selector: {key: value} — matches \u00e9l\u00e8ves; # not a comment"
                pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'
                x-kubernetes-validations:
                - rule: "self.minReplicas <= self.maxReplicas"
                  message: 'must be ''less'' than max: see docs'
                example: "  indented text that is long enough to fold past column eighty, with  two spaces and more words"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: scripts
data:
  entrypoint.sh: |
    #!/bin/sh
    set -eu

    if [ -n "${DEBUG:-}" ]; then
      set -x
    fi
      exec "$@"   
  leading.sh: "  indented first line\nsecond\n"
  kept: "trailing lines kept\n\n\n"
  version: "1.20"
  octal: "0755"
  flag: "yes"
  time: "12:30:00"
  date: "2024-01-02"
  empty: ""
  hex: "0x1F"
  tabbed: "a\tb"
  emoji: "ok \U0001F600"
`))
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		var buf bytes.Buffer
		if !encodeDirect(&buf, d) {
			t.Errorf("document %d: the direct emitter fell back", i)
			continue
		}
		want, err := referenceFromValue(d)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("document %d:\n--- direct\n%s\n--- reference\n%s", i, buf.Bytes(), want)
		}
	}
}

// TestDirectStyles pins what a user sees for a few strings.
func TestDirectStyles(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain words", "k: plain words\n"},
		{"a: b", "k: 'a: b'\n"},
		{"it's: here", "k: 'it''s: here'\n"},
		{"true", "k: \"true\"\n"},
		{"1:20", "k: \"1:20\"\n"},
		{"line one\nline two\n", "k: |\n  line one\n  line two\n"},
		{"no final break\nx", "k: |-\n  no final break\n  x\n"},
		{"kept\n\n", "k: |+\n  kept\n\n"},
		{" lead\n", "k: |2\n   lead\n"},
		{"tab\there", "k: \"tab\\there\"\n"},
		{"trailing space \nx", "k: \"trailing space \\nx\"\n"},
		{strings.Repeat("word ", 20) + "end", "k: " + strings.TrimSpace(strings.Repeat("word ", 16)) + "\n  " + strings.TrimSpace(strings.Repeat("word ", 4)) + " end\n"},
	} {
		got, err := MarshalValue(map[string]any{"k": c.in})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
		if want, _ := referenceFromValue(map[string]any{"k": c.in}); !bytes.Equal(got, want) {
			t.Errorf("%q: got %q, the reference path prints %q", c.in, got, want)
		}
	}
}

// TestASCIIKeyOrder checks the byte-wise key comparison used for ASCII
// keys orders every pair as the rune-wise one (yaml.v2's) does, on keys
// mixing letters, digits, zeros and punctuation.
func TestASCIIKeyOrder(t *testing.T) {
	alphabet := "a0Z1-9._0b"
	var keys []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		keys = append(keys, prefix)
		if n == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			gen(prefix+alphabet[i:i+1], n-1)
		}
	}
	gen("", 3)
	for _, a := range keys {
		for _, b := range keys {
			if asciiKeyLess(a, b) != runeKeyLess(a, b) {
				t.Fatalf("%q < %q: bytes say %v, runes say %v", a, b, asciiKeyLess(a, b), runeKeyLess(a, b))
			}
		}
	}
}

// TestSimplePlainAgreesWithAnalysis checks the quick test for plain
// strings never says plain where yaml.v2's full analysis would not.
func TestSimplePlainAgreesWithAnalysis(t *testing.T) {
	alphabet := []string{"a", "y", "n", "O", "0", " ", ":", "#", "-", "'", "\"", ",", "[", "{", "|", "\t", "\u00e9", ".", "~"}
	var check func(s string, n int)
	check = func(s string, n int) {
		if simplePlain(s) {
			info := analyzeScalar(s)
			if !info.plainOK || !readsAsString(s) || isBase60(s) {
				t.Errorf("%q: simplePlain says plain, the analysis does not", s)
			}
		}
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			check(s+c, n-1)
		}
	}
	check("", 4)
	for _, s := range []string{"true", "No", "off", "yes", "null", "y"} {
		if simplePlain(s) {
			t.Errorf("%q: simplePlain says plain", s)
		}
	}
}
