package genrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// BigRoot is the single large root WriteBigRoot writes, relative to its
// directory: an overlay over one base that lists every app's file.
const BigRoot = "overlay"

// bigRootGenerated is the number of objects the overlay's generators add
// (a ConfigMap and a Secret that every Deployment refers to).
const bigRootGenerated = 2

// bigRootApps are the shapes of the apps, in turn: each has a Deployment
// whose container reads a key of its own ConfigMap, a Service and the
// ConfigMap, and some refer to more of their own objects. The number is
// how many objects an app of that shape has.
var bigRootApps = []struct {
	objects  int
	sa, pvc  bool // a ServiceAccount, a PersistentVolumeClaim
	secret   bool // a Secret read through secretKeyRef and a volume
	roleBind bool // a Role and a RoleBinding of the ServiceAccount to it
}{
	{objects: 3},
	{objects: 5, sa: true, pvc: true},
	{objects: 5, sa: true, secret: true},
	{objects: 7, sa: true, secret: true, roleBind: true},
}

// WriteBigRoot writes under dir one root (BigRoot) that builds exactly
// resources objects (at least 5: one app and the two generated), the
// shape of kustomize's best-known performance complaint
// (kubernetes-sigs/kustomize#5084): apps whose objects refer to each
// other by name (ConfigMaps, Secrets, ServiceAccounts,
// PersistentVolumeClaims, Roles), in one base that lists one file an app
// and declares a var; and an overlay with a name prefix, a namespace,
// labels, images, generators whose hashed names every Deployment refers
// to, two patches by target and replacements. Objects past the last whole
// app are ConfigMaps of their own.
func WriteBigRoot(dir string, resources int) error {
	if resources < 5 {
		return fmt.Errorf("a big root needs at least 5 resources, not %d", resources)
	}
	files := map[string]string{}
	var list strings.Builder
	left := resources - bigRootGenerated
	for a := 0; ; a++ {
		shape := bigRootApps[a%len(bigRootApps)]
		if shape.objects > left {
			break
		}
		left -= shape.objects
		name := fmt.Sprintf("app%05d", a)
		file := "apps/" + name + ".yaml"
		fmt.Fprintf(&list, "- %s\n", file)
		files["base/"+file] = bigRootApp(name, a, shape.sa, shape.pvc, shape.secret, shape.roleBind)
	}
	for i := 0; i < left; i++ {
		file := fmt.Sprintf("extra/extra%05d.yaml", i)
		fmt.Fprintf(&list, "- %s\n", file)
		files["base/"+file] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra%05d\ndata:\n  index: \"%d\"\n", i, i)
	}
	files["base/kustomization.yaml"] = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
` + list.String() + `vars:
- name: FIRST_APP_PORT
  objref:
    apiVersion: v1
    kind: ConfigMap
    name: app00000-config
  fieldref:
    fieldpath: data.PORT
`
	files[BigRoot+"/kustomization.yaml"] = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../base
namePrefix: prod-
namespace: production
labels:
- pairs:
    env: production
  includeSelectors: true
- pairs:
    owner: platform-team
  includeTemplates: true
images:
- name: registry.example.com/web
  newTag: "2.1.0"
- name: registry.example.com/worker
  newName: mirror.example.com/worker
  digest: sha256:24a0c4b4a4c0eb97a1aabb8e29f18e917d05abfe1b7a7c07857230879ce7d3d3
configMapGenerator:
- name: shared-settings
  literals:
  - REGION=eu-west-1
  - TIER=gold
secretGenerator:
- name: shared-token
  literals:
  - token=s3cr3t
patches:
- target:
    kind: Deployment
    labelSelector: tier=web
  patch: |-
    - op: add
      path: /spec/template/spec/containers/0/resources
      value:
        limits:
          memory: 512Mi
- target:
    kind: Service
    name: app.*
  patch: |-
    apiVersion: v1
    kind: Service
    metadata:
      name: any
      annotations:
        service.example.com/exposed: "true"
    spec:
      type: ClusterIP
replacements:
- source:
    kind: ConfigMap
    name: shared-settings
    fieldPath: data.REGION
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - metadata.annotations.region
    - spec.template.metadata.annotations.region
    options:
      create: true
- source:
    kind: Secret
    name: shared-token
    fieldPath: metadata.name
  targets:
  - select:
      kind: Deployment
      labelSelector: tier=worker
    fieldPaths:
    - spec.template.spec.volumes.[name=token].secret.secretName
`
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// bigRootApp is the file of the a-th app, named name.
func bigRootApp(name string, a int, sa, pvc, secret, roleBind bool) string {
	tier, image := "web", "registry.example.com/web:1.0.0"
	if a%2 == 1 {
		tier, image = "worker", "registry.example.com/worker:1.0.0"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s-config
data:
  LOG_LEVEL: info
  PORT: "8080"
  APP: %[1]s
---
apiVersion: v1
kind: Service
metadata:
  name: %[1]s
spec:
  selector:
    app: %[1]s
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  labels:
    app: %[1]s
    tier: %[2]s
spec:
  replicas: %[4]d
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
        tier: %[2]s
    spec:
`, name, tier, image, 1+a%3)
	if sa {
		fmt.Fprintf(&b, "      serviceAccountName: %s\n", name)
	}
	fmt.Fprintf(&b, `      containers:
      - name: main
        image: %[2]s
        args:
        - --peer-port=$(FIRST_APP_PORT)
        env:
        - name: LOG_LEVEL
          valueFrom:
            configMapKeyRef:
              name: %[1]s-config
              key: LOG_LEVEL
`, name, image)
	if secret {
		fmt.Fprintf(&b, `        - name: PASSWORD
          valueFrom:
            secretKeyRef:
              name: %s-creds
              key: password
`, name)
	}
	b.WriteString(`        envFrom:
        - configMapRef:
            name: shared-settings
        volumeMounts:
        - name: token
          mountPath: /var/run/token
`)
	if pvc {
		b.WriteString("        - name: data\n          mountPath: /data\n")
	}
	b.WriteString(`      volumes:
      - name: token
        secret:
          secretName: shared-token
`)
	if pvc {
		fmt.Fprintf(&b, "      - name: data\n        persistentVolumeClaim:\n          claimName: %s-data\n", name)
	}
	if secret {
		fmt.Fprintf(&b, "      - name: creds\n        secret:\n          secretName: %s-creds\n", name)
	}
	if sa {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: %s\n", name)
	}
	if pvc {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %s-data
spec:
  accessModes:
  - ReadWriteOnce
  resources:
    requests:
      storage: 1Gi
`, name)
	}
	if secret {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Secret
metadata:
  name: %s-creds
type: Opaque
stringData:
  password: pw-%d
`, name, a)
	}
	if roleBind {
		fmt.Fprintf(&b, `---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: %[1]s-reader
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  resourceNames: ["%[1]s-config"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: %[1]s-reader
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: %[1]s-reader
subjects:
- kind: ServiceAccount
  name: %[1]s
`, name)
	}
	return b.String()
}
