package output

import (
	"bytes"
	"testing"

	"github.com/kpipe/kpipe/internal/resource"
)

// TestDirectCoversTypicalResources checks that the direct emitter, not
// the fallback, prints the shapes most Kubernetes configuration is made
// of, and that it prints them as the reference path does. A regression
// here costs speed, not bytes: the fuzz targets guard the bytes.
func TestDirectCoversTypicalResources(t *testing.T) {
	docs, err := resource.DecodeValues([]byte(`apiVersion: apps/v1
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
		map[string]any{"a": "x\n\n"},
		map[string]any{"a": "0x1F"},
		map[string]any{"a": "  lead"},
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
