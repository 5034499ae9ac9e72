import os, sys, textwrap, shutil
out = sys.argv[1]
cases = {}
def case(name, files):
    assert name not in cases, name
    cases[name] = files
def ind(s, n=4): return textwrap.indent(s, " " * n)

DEP = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
%s
spec:
  template:
    spec:
      containers:
      - name: c
        image: i
"""
P = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"
def smp_k(patch, extra=""):
    return "resources: [r.yaml]\n" + extra + "patches:\n- patch: |-\n" + ind(patch) + "\n"
JSONADD = "patches:\n- target: {kind: Deployment}\n  patch: |-\n    - op: add\n      path: /metadata/annotations/x\n      value: z\n"
J6902ADD = "patchesJson6902:\n- target: {group: apps, version: v1, kind: Deployment, name: d}\n  patch: |-\n    - op: add\n      path: /metadata/annotations/x\n      value: z\n"
NULLS = [("null", "null"), ("tilde", "~"), ("bare", ""), ("empty", "{}")]

# 1. Patches that set null, on present and absent keys (issue 14 item 1).
case("smp-annotations-null-present", {"r.yaml": DEP % "  annotations: {a: b}", "kustomization.yaml": smp_k(P + "  annotations: null")})
case("smp-annotations-null-absent", {"r.yaml": DEP % "", "kustomization.yaml": smp_k(P + "  annotations: null")})
case("smp-annotations-bare-absent", {"r.yaml": DEP % "", "kustomization.yaml": smp_k(P + "  annotations:")})
case("smp-annotations-empty-absent", {"r.yaml": DEP % "", "kustomization.yaml": smp_k(P + "  annotations: {}")})
case("smp-annotations-empty-present", {"r.yaml": DEP % "  annotations: {a: b}", "kustomization.yaml": smp_k(P + "  annotations: {}")})
case("smp-matchlabels-null-absent", {"r.yaml": DEP % "", "kustomization.yaml": smp_k(P + "spec:\n  selector:\n    matchLabels: null")})
case("smp-matchlabels-null-present", {"r.yaml": (DEP % "").replace("spec:\n  template:", "spec:\n  selector:\n    matchLabels: {app: x}\n  template:"), "kustomization.yaml": smp_k(P + "spec:\n  selector:\n    matchLabels: null")})
AFF = "spec:\n  template:\n    spec:\n      affinity:\n        nodeAffinity:\n          preferredDuringSchedulingIgnoredDuringExecution: null\n          requiredDuringSchedulingIgnoredDuringExecution: null"
case("smp-every-key-null-absent", {"r.yaml": DEP % "", "kustomization.yaml": smp_k(P + AFF)})
case("smp-every-key-null-present", {"r.yaml": (DEP % "").replace("      containers:", "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms: []\n          preferredDuringSchedulingIgnoredDuringExecution:\n          - weight: 1\n            preference: {matchExpressions: [{key: a, operator: In, values: [b]}]}\n      containers:"), "kustomization.yaml": smp_k(P + AFF)})
case("smp-null-then-json-add", {"r.yaml": DEP % "  annotations: {a: b}", "kustomization.yaml": smp_k(P + "  annotations: null") + JSONADD[len("patches:\n"):]})

# 2. Objects holding null, ~, bare and {} values, through each transformer.
for nm, v in NULLS:
    r = DEP % ("  annotations: " + v)
    rl = DEP % ("  labels: " + v)
    case("ann-%s-plain" % nm, {"r.yaml": r, "kustomization.yaml": "resources: [r.yaml]\n"})
    case("ann-%s-buildmetadata" % nm, {"r.yaml": r, "kustomization.yaml": "resources: [r.yaml]\nbuildMetadata: [originAnnotations, transformerAnnotations]\n"})
    case("ann-%s-buildmetadata-prefix" % nm, {"r.yaml": r, "kustomization.yaml": "resources: [r.yaml]\nbuildMetadata: [originAnnotations, transformerAnnotations]\nnamePrefix: p-\n"})
    case("ann-%s-commonannotations" % nm, {"r.yaml": r, "kustomization.yaml": "resources: [r.yaml]\ncommonAnnotations: {x: w}\n"})
    case("ann-%s-namespace" % nm, {"r.yaml": r, "kustomization.yaml": "resources: [r.yaml]\nnamespace: ns1\n"})
    case("ann-%s-smp-other" % nm, {"r.yaml": r, "kustomization.yaml": smp_k(P + "  labels: {x: w}")})
    case("ann-%s-smp-set" % nm, {"r.yaml": r, "kustomization.yaml": smp_k(P + "  annotations: {x: w}")})
    case("ann-%s-smp-null" % nm, {"r.yaml": r, "kustomization.yaml": smp_k(P + "  annotations: null")})
    case("ann-%s-json-add" % nm, {"r.yaml": r, "kustomization.yaml": "resources: [r.yaml]\n" + JSONADD})
    case("ann-%s-json6902-add" % nm, {"r.yaml": r, "kustomization.yaml": "resources: [r.yaml]\n" + J6902ADD})
    case("ann-%s-prefix-json6902-add" % nm, {"r.yaml": r, "kustomization.yaml": "resources: [r.yaml]\nnamePrefix: p-\n" + J6902ADD})
    src = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n  k: val\n"
    case("ann-%s-replacement-create" % nm, {"r.yaml": r + src, "kustomization.yaml": "resources: [r.yaml]\nreplacements:\n- source: {kind: ConfigMap, name: src, fieldPath: data.k}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.annotations.x]\n    options: {create: true}\n"})
    case("ann-%s-replacement-nocreate" % nm, {"r.yaml": r + src, "kustomization.yaml": "resources: [r.yaml]\nreplacements:\n- source: {kind: ConfigMap, name: src, fieldPath: data.k}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.annotations.x]\n"})
    case("ann-%s-replacement-source" % nm, {"r.yaml": r.replace("name: d", "name: d2") + "---\n" + DEP % "", "kustomization.yaml": "resources: [r.yaml]\nreplacements:\n- source: {kind: Deployment, name: d2, fieldPath: metadata.annotations}\n  targets:\n  - select: {kind: Deployment, name: d}\n    fieldPaths: [spec.template.metadata.annotations]\n    options: {create: true}\n"})
    case("labels-%s-commonlabels" % nm, {"r.yaml": rl, "kustomization.yaml": "resources: [r.yaml]\ncommonLabels: {x: w}\n"})
    case("labels-%s-labels" % nm, {"r.yaml": rl, "kustomization.yaml": "resources: [r.yaml]\nlabels:\n- pairs: {x: w}\n"})
    case("labels-%s-labels-selectors" % nm, {"r.yaml": rl, "kustomization.yaml": "resources: [r.yaml]\nlabels:\n- pairs: {x: w}\n  includeSelectors: true\n"})
    case("labels-%s-smp-null" % nm, {"r.yaml": rl, "kustomization.yaml": smp_k(P + "  labels: null")})
    rs = (DEP % "").replace("spec:\n  template:", "spec:\n  selector:\n    matchLabels: %s\n  template:" % v)
    case("selector-%s-commonlabels" % nm, {"r.yaml": rs, "kustomization.yaml": "resources: [r.yaml]\ncommonLabels: {x: w}\n"})
    case("selector-%s-smp-null" % nm, {"r.yaml": rs, "kustomization.yaml": smp_k(P + "spec:\n  selector:\n    matchLabels: null")})
    case("selector-%s-smp-set" % nm, {"r.yaml": rs, "kustomization.yaml": smp_k(P + "spec:\n  selector:\n    matchLabels: {a: b}")})

# 3. Bare nulls (`x:`) and explicit nulls across a strategic-merge patch:
# kyaml drops the bare ones the patch does not name, in maps and in lists
# merged by key, and keeps explicit ones.
BARE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  creationTimestamp:
spec:
  strategy:
  paused: null
  minReadySeconds: ~
  template:
    metadata:
      creationTimestamp:
    spec:
      securityContext:
      nodeSelector: {}
      containers:
      - name: c
        image: i
        resources:
        env:
        args: [a, null, ~, ""]
        command:
        -
        - x
      - name: other
        image: o
        resources: {}
        livenessProbe:
      volumes:
      - name: v
        emptyDir:
"""
case("bare-smp-metadata", {"r.yaml": BARE, "kustomization.yaml": smp_k(P + "  labels: {a: b}")})
case("bare-smp-container", {"r.yaml": BARE, "kustomization.yaml": smp_k(P + "spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: j")})
case("bare-smp-delete-container", {"r.yaml": BARE, "kustomization.yaml": smp_k(P + "spec:\n  template:\n    spec:\n      containers:\n      - name: other\n        $patch: delete")})
case("bare-smp-replace", {"r.yaml": BARE, "kustomization.yaml": smp_k(P + "spec:\n  template:\n    spec:\n      $patch: replace\n      containers:\n      - name: n\n        image: n\n        resources:\n        env: null")})
case("bare-smp-patch-bare", {"r.yaml": BARE, "kustomization.yaml": smp_k(P + "spec:\n  template:\n    spec:\n      nodeSelector:\n      securityContext:\n      tolerations:")})
case("bare-smp-target", {"r.yaml": BARE, "kustomization.yaml": "resources: [r.yaml]\npatches:\n- target: {kind: Deployment}\n  patch: |-\n" + ind(P + "  labels: {a: b}") + "\n"})
case("bare-smp-twice", {"r.yaml": BARE, "kustomization.yaml": smp_k(P + "  labels: {a: b}") + "- patch: |-\n" + ind(P + "  labels: {c: d}") + "\n"})
case("bare-json-then-smp", {"r.yaml": BARE, "kustomization.yaml": "resources: [r.yaml]\npatches:\n- target: {kind: Deployment}\n  patch: |-\n    - op: add\n      path: /metadata/labels\n      value: {j: k}\n- patch: |-\n" + ind(P + "  labels: {a: b}") + "\n"})
case("bare-smp-then-json", {"r.yaml": BARE, "kustomization.yaml": smp_k(P + "  labels: {a: b}") + "- target: {kind: Deployment}\n  patch: |-\n    - op: add\n      path: /metadata/annotations\n      value: {j: k}\n"})
case("bare-transformers-then-smp", {"r.yaml": BARE, "kustomization.yaml": smp_k(P.replace("name: d", "name: d") + "  labels: {a: b}", "namespace: ns1\ncommonLabels: {lab: m}\ncommonAnnotations: {ann: o}\nimages:\n- name: i\n  newTag: v2\n")})
case("bare-patches-strategic-merge", {"r.yaml": BARE, "p.yaml": P + "  labels: {a: b}\n", "kustomization.yaml": "resources: [r.yaml]\npatchesStrategicMerge: [p.yaml]\n"})
CRD = """apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  empty:
  explicit: null
  list:
  - name: a
    value:
  - name: b
  nested:
    inner:
    keep: ~
"""
case("bare-smp-custom-kind", {"r.yaml": CRD, "kustomization.yaml": "resources: [r.yaml]\npatches:\n- patch: |-\n    apiVersion: example.com/v1\n    kind: Widget\n    metadata:\n      name: w\n    spec:\n      list:\n      - name: c\n"})
case("bare-base-overlay", {"base/r.yaml": BARE, "base/kustomization.yaml": "resources: [r.yaml]\nnamePrefix: b-\n", "kustomization.yaml": "resources: [base]\npatches:\n- target: {kind: Deployment}\n  patch: |-\n" + ind(P.replace("name: d", "name: b-d") + "  labels: {a: b}") + "\n"})
case("bare-generator-merge", {"base/kustomization.yaml": "configMapGenerator:\n- name: g\n  literals: [a=b]\n", "kustomization.yaml": "resources: [base]\nconfigMapGenerator:\n- name: g\n  behavior: merge\n  literals: [c=d]\npatches:\n- target: {kind: ConfigMap}\n  patch: |-\n    - op: add\n      path: /metadata/annotations/x\n      value: z\n"})

for name, files in sorted(cases.items()):
    d = os.path.join(out, name)
    for f, c in files.items():
        p = os.path.join(d, f)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write(c)
print(len(cases))
