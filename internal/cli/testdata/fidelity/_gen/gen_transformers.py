# Writes the null-in-* roots: a Deployment whose namespace, replicas,
# image and configMapRef name are bare (`x:`), null or "", through each
# transformer. Usage: python3 gen_transformers.py OUTDIR
import os, sys
out = sys.argv[1]
D = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  namespace:%s
spec:
  replicas:%s
  template:
    spec:
      containers:
      - name: c
        image:%s
        envFrom:
        - configMapRef:
            name:%s
      - name: e
        image: nginx
      volumes:
      - name: v
        configMap:
          name: cm
        secret:
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
data:
  k:
"""
cases = {}
for tag, v in [("bare", ""), ("null", " null"), ("empty", ' ""')]:
    r = D % (v, v, v, v)
    cases["ns-"+tag] = (r, "resources: [r.yaml]\nnamespace: ns1\n")
    cases["img-"+tag] = (r, "resources: [r.yaml]\nimages:\n- name: nginx\n  newTag: v2\n")
    cases["rep-"+tag] = (r, "resources: [r.yaml]\nreplicas:\n- name: d\n  count: 3\n")
    cases["prefix-"+tag] = (r, "resources: [r.yaml]\nnamePrefix: p-\n")
    cases["suffix-gen-"+tag] = (r, "resources: [r.yaml]\nconfigMapGenerator:\n- name: g\n  literals: [a=b]\n")
    cases["labels-"+tag] = (r, "resources: [r.yaml]\nlabels:\n- pairs: {a: b}\n  includeSelectors: true\n  includeTemplates: true\n")
    cases["smp-ns-"+tag] = (r, "resources: [r.yaml]\nnamespace: ns1\npatches:\n- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: d\n      namespace: ns1\n    spec:\n      replicas: 2\n")
    cases["repl-"+tag] = (r, "resources: [r.yaml]\nreplacements:\n- source: {kind: ConfigMap, name: cm, fieldPath: data.k}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [\"spec.template.spec.containers.[name=c].image\"]\n")
    cases["repl-src-"+tag] = (r, "resources: [r.yaml]\nreplacements:\n- source: {kind: Deployment, name: d, fieldPath: spec.replicas}\n  targets:\n  - select: {kind: ConfigMap}\n    fieldPaths: [data.k]\n")
    cases["vars-"+tag] = (r.replace("name: e\n        image: nginx", "name: e\n        image: nginx\n        args: [\"$(V)\"]"), "resources: [r.yaml]\nvars:\n- name: V\n  objref: {kind: ConfigMap, name: cm, apiVersion: v1}\n  fieldref: {fieldPath: data.k}\n")
    cases["cm-merge-"+tag] = (r, "resources: [r.yaml]\nconfigMapGenerator:\n- name: cm\n  behavior: merge\n  literals: [a=b]\n")
    cases["sort-"+tag] = (r, "resources: [r.yaml]\nsortOptions:\n  order: fifo\n")
for n, (r, k) in cases.items():
    d = os.path.join(out, "null-in-" + n)
    os.makedirs(d, exist_ok=True)
    open(d + "/r.yaml", "w").write(r)
    open(d + "/kustomization.yaml", "w").write(k)
