package stages

import (
	"context"
	"testing"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

func TestReplicasCases(t *testing.T) {
	runTxCases(t, "ReplicaCountTransformer", ReplicasFromConfig, replicasCases)
}

// TestReplicasPreviousNames follows kustomize: a replicas entry finds an
// object by a name it had before namePrefix renamed it, as well as by its
// current name.
func TestReplicasPreviousNames(t *testing.T) {
	rs, err := resyaml.Decode([]byte(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: e
spec:
  replicas: 1
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		r.RememberID()
		r.SetName("p-" + r.Name())
	}
	l := resource.NewList(rs...)
	l.Freeze()
	tc := defaultFieldSpecs(t)
	for _, rep := range []loaders.Replica{{Name: "d", Count: 2}, {Name: "p-e", Count: 4}} {
		if err := NewReplicas(ReplicasConfig{Replica: rep, FieldSpecs: tc.Replicas}).Run(context.Background(), l); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := output.Marshal(l.All())
	want := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: p-d
spec:
  replicas: 2
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: p-e
spec:
  replicas: 4
`
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestReplicasFingerprint(t *testing.T) {
	tc := defaultFieldSpecs(t)
	a := NewReplicas(ReplicasConfig{Replica: loaders.Replica{Name: "d", Count: 2}, FieldSpecs: tc.Replicas})
	b := NewReplicas(ReplicasConfig{Replica: loaders.Replica{Name: "d", Count: 2}, FieldSpecs: tc.Replicas})
	c := NewReplicas(ReplicasConfig{Replica: loaders.Replica{Name: "d", Count: 3}, FieldSpecs: tc.Replicas})
	d := NewReplicas(ReplicasConfig{Replica: loaders.Replica{Name: "d", Count: 2}, FieldSpecs: tc.Replicas[:1]})
	if string(a.Fingerprint()) != string(b.Fingerprint()) {
		t.Error("equal configs have different fingerprints")
	}
	if string(a.Fingerprint()) == string(c.Fingerprint()) || string(a.Fingerprint()) == string(d.Fingerprint()) {
		t.Error("fingerprint does not cover the config")
	}
}

var replicasCases = []txCase{
	{
		name: "TestNoMatch",
		config: `
apiVersion: builtin
kind: ReplicaCountTransformer
metadata:
  name: notImportantHere
replica:
  name: service
  count: 3
fieldSpecs:
- path: spec/replicas
  create: true
  kind: Deployment
`,
		input: `
kind: Service
metadata:
  name: service
spec:
`,
		wantErr: "resource with name service does not match a config with the following GVK [Deployment.[noVer].[noGrp]]",
	},
	{
		name: "TestReplicaCountTransformer",
		config: `
apiVersion: builtin
kind: ReplicaCountTransformer
metadata:
  name: notImportantHere

replica:
  name: myapp
  count: 23
fieldSpecs:
- path: spec/replicas
  create: true
  kind: Deployment

- path: spec/replicas
  create: true
  kind: ReplicationController

- path: spec/replicas
  create: true
  kind: ReplicaSet

- path: spec/replicas
  create: true
  kind: StatefulSet
`,
		input: `
apiVersion: apps/v1
kind: Service
metadata:
  name: myapp
spec:
  ports:
  - port: 1111
  targetport: 1111
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: otherapp
spec:
  replicas: 5
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: myapp
spec:
  replicas: 5
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: myapp
spec:
  selector:
    matchLabels:
      app: app
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: myapp
spec:
  selector:
    matchLabels:
      app: app
---
apiVersion: apps/v1
kind: ReplicationController
metadata:
  name: myapp
spec:
  selector:
    matchLabels:
      app: app
`,
		want: `apiVersion: apps/v1
kind: Service
metadata:
  name: myapp
spec:
  ports:
  - port: 1111
  targetport: 1111
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: otherapp
spec:
  replicas: 5
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: myapp
spec:
  replicas: 23
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: myapp
spec:
  replicas: 23
  selector:
    matchLabels:
      app: app
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: myapp
spec:
  replicas: 23
  selector:
    matchLabels:
      app: app
---
apiVersion: apps/v1
kind: ReplicationController
metadata:
  name: myapp
spec:
  replicas: 23
  selector:
    matchLabels:
      app: app
`,
	},
	{
		name: "replicas_edge",
		config: `apiVersion: builtin
kind: ReplicaCountTransformer
metadata:
  name: x
replica:
  name: d
  count: 5
fieldSpecs:
- path: spec/replicas
  kind: Deployment
- path: spec/replicas
  group: apps
- path: spec/x/replicas
  kind: Foo
  create: true
- path: spec/y/replicas
  kind: Foo
  create: true
`,
		input: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: null
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: d
spec:
  replicas: "2"
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: d
spec:
  replicas: abc
---
apiVersion: example.com/v1
kind: Foo
metadata:
  name: d
spec:
  y: null
---
apiVersion: v1
kind: Foo
metadata:
  name: e
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: other
spec:
  replicas: 1
`,
		want: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: 5
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: d
spec:
  replicas: "5"
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: d
spec:
  replicas: 5
---
apiVersion: example.com/v1
kind: Foo
metadata:
  name: d
spec:
  x:
    replicas: 5
  "y":
    replicas: 5
---
apiVersion: v1
kind: Foo
metadata:
  name: e
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: other
spec:
  replicas: 1
`,
	},
	{
		name: "replicas_err",
		config: `apiVersion: builtin
kind: ReplicaCountTransformer
metadata:
  name: x
replica:
  name: d
  count: 5
fieldSpecs:
- path: spec/replicas
  kind: Deployment
`,
		input: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: [1]
`,
		wantErr: "considering field 'spec/replicas' of object Deployment.v1.apps/d.[noNs]: wrong node kind: expected ScalarNode but got SequenceNode",
	},
	{
		name: "replicas_nomatch",
		config: `apiVersion: builtin
kind: ReplicaCountTransformer
metadata:
  name: x
replica:
  name: nope
  count: 5
fieldSpecs:
- path: spec/replicas
  kind: Deployment
- path: spec/replicas
  group: apps
  version: v1
`,
		input: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: [1]
`,
		wantErr: "resource with name nope does not match a config with the following GVK [Deployment.[noVer].[noGrp] [noKind].v1.apps]",
	},
}
