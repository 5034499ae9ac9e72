package stages

import "testing"

func TestAnnotationsCases(t *testing.T) {
	runTxCases(t, "AnnotationsTransformer", AnnotationsFromConfig, annotationsCases)
}

var annotationsCases = []txCase{
	{
		name: "TestAnnotationsTransformer",
		config: `
apiVersion: builtin
kind: AnnotationsTransformer
metadata:
  name: notImportantHere
annotations:
  app: myApp
  greeting/morning: a string with blanks
  booleanNaked: true
  booleanQuoted: "true"
  numberNaked: 42
  numberQuoted: "42"
fieldSpecs:
  - path: metadata/annotations
    create: true
`,
		input: `
apiVersion: v1
kind: Service
metadata:
  name: myService
spec:
  ports:
  - port: 7002
`,
		want: `apiVersion: v1
kind: Service
metadata:
  annotations:
    app: myApp
    booleanNaked: "true"
    booleanQuoted: "true"
    greeting/morning: a string with blanks
    numberNaked: "42"
    numberQuoted: "42"
  name: myService
spec:
  ports:
  - port: 7002
`,
	},
	{
		name: "annotations_edge",
		config: `apiVersion: builtin
kind: AnnotationsTransformer
metadata:
  name: x
annotations:
  z: "1"
  a.io/b: 1.50
fieldSpecs:
- path: metadata/annotations
  create: true
- path: spec/template/metadata/annotations
  create: true
  kind: Deployment
`,
		input: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec: {}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations:
    z: old
`,
		want: `apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    a.io/b: "1.5"
    z: "1"
  name: d
spec:
  template:
    metadata:
      annotations:
        a.io/b: "1.5"
        z: "1"
    spec: {}
---
apiVersion: v1
kind: ConfigMap
metadata:
  annotations:
    a.io/b: "1.5"
    z: "1"
  name: c
`,
	},
}
