package fnrun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const wrapInput = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: example.com/v1
  kind: Nginx
  metadata:
    name: test
  spec:
    replicas: 11
    ports: [80]
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: test
  spec:
    replicas: 5
    template:
      spec:
        containers:
        - name: test
          image: nginx:v1.7
          resources:
            limits:
              cpu: 500m
- apiVersion: v1
  kind: Service
  metadata:
    name: test
    annotations:
      config.kubernetes.io/path: svc/test.yaml
`

// The script checks what wrap gives it and prints a Deployment with the
// configured replicas (without the input's resources) and a new ConfigMap.
const wrapScript = `#!/bin/sh
in=$(cat)
case "$in" in
"apiVersion: v1
items:"*"kind: List") ;;
*) echo "stdin is not a List: $in" >&2; exit 1 ;;
esac
[ "$NAME" = test ] || { echo "NAME=$NAME" >&2; exit 1; }
[ -z "$PORTS" ] || { echo "PORTS=$PORTS" >&2; exit 1; }
case "$KUST_FUNCTION_CONFIG" in *"kind: Nginx"*) ;; *) echo "no KUST_FUNCTION_CONFIG" >&2; exit 1 ;; esac
cat <<END
apiVersion: apps/v1
kind: Deployment
metadata:
  name: test
spec:
  replicas: $REPLICAS
  template:
    spec:
      containers:
      - name: test
        image: nginx:v1.9
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: Made
END
`

func TestWrap(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "fn.sh")
	if err := os.WriteFile(script, []byte(wrapScript), 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := Wrap(context.Background(), []string{script}, strings.NewReader(wrapInput), &out, &errOut, os.Environ()); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	want := `apiVersion: config.kubernetes.io/v1
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    annotations:
      config.kubernetes.io/index: "0"
      config.kubernetes.io/path: config/made_configmap.yaml
      internal.config.kubernetes.io/index: "0"
      internal.config.kubernetes.io/path: config/made_configmap.yaml
    name: Made
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    annotations:
      config.kubernetes.io/index: "0"
      config.kubernetes.io/path: config/test_deployment.yaml
      internal.config.kubernetes.io/index: "0"
      internal.config.kubernetes.io/path: config/test_deployment.yaml
    name: test
  spec:
    replicas: 11
    template:
      spec:
        containers:
        - image: nginx:v1.9
          name: test
          resources:
            limits:
              cpu: 500m
- apiVersion: v1
  kind: Service
  metadata:
    annotations:
      config.kubernetes.io/index: "0"
      config.kubernetes.io/path: svc/test.yaml
      internal.config.kubernetes.io/index: "0"
      internal.config.kubernetes.io/path: svc/test.yaml
    name: test
kind: ResourceList
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}

	// KUST_MERGE=false: only the command's output.
	out.Reset()
	if err := Wrap(context.Background(), []string{script}, strings.NewReader(wrapInput), &out, &errOut, append(os.Environ(), "KUST_MERGE=false")); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "cpu") || strings.Contains(s, "Service") || !strings.Contains(s, "replicas: 11") {
		t.Errorf("without merging:\n%s", s)
	}

	// Failures: the command's, an unsupported override directory, bad input.
	errOut.Reset()
	err := Wrap(context.Background(), []string{script}, strings.NewReader(strings.Replace(wrapInput, "name: test\n  spec", "name: other\n  spec", 1)), &out, &errOut, os.Environ())
	if err == nil || !strings.Contains(err.Error(), "exit status 1") || !strings.Contains(errOut.String(), "NAME=other") {
		t.Errorf("failing command: %v, stderr %q", err, errOut.String())
	}
	if err := Wrap(context.Background(), []string{script}, strings.NewReader(wrapInput), &out, &errOut, []string{"KUST_OVERRIDE_DIR=/x"}); err == nil || !strings.Contains(err.Error(), "not supported yet") {
		t.Errorf("KUST_OVERRIDE_DIR: %v", err)
	}
	if err := Wrap(context.Background(), []string{script}, strings.NewReader("kind: ConfigMap\n"), &out, &errOut, nil); err == nil || !strings.Contains(err.Error(), "not a ResourceList") {
		t.Errorf("bad input: %v", err)
	}
}
