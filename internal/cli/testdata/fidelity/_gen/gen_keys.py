# Writes the key-* roots: maps keyed by something that is not a string
# (a plain number or boolean, a tagged key) below an object's top level,
# where kustomize fails (kustomize#3446), beside the shapes it builds
# (quoted keys, top-level keys, `! a`, keys a patch or `$patch: delete`
# takes away). Usage: python3 gen_keys.py OUTDIR
import os, sys
out = sys.argv[1]
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tcp\n"
PATCH = ("resources: [r.yaml]\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n"
         "    metadata:\n      name: tcp\n")
cases = {
    # ingress-nginx's tcp-services ConfigMap: kustomize fails.
    "int-data": (CM + "data:\n  9000: default/svc:8080\n", "resources: [r.yaml]\n"),
    "int-quoted": (CM + "data:\n  \"9000\": default/svc:8080\n  '9001': default/svc:8081\n", "resources: [r.yaml]\n"),
    "int-top-level": (CM + "9000: x\ntrue: y\n", "resources: [r.yaml]\n"),
    "int-nested-list": (CM + "spec:\n  ports:\n  - map: {8443: PERMISSIVE}\n", "resources: [r.yaml]\n"),
    "bool-flow": (CM + "spec: {true: b}\n", "resources: [r.yaml]\n"),
    "tag-local": (CM + "data:\n  !x a: b\n", "resources: [r.yaml]\n"),
    "tag-nonspecific": (CM + "data:\n  ! a: b\n", "resources: [r.yaml]\n"),
    "tag-str": (CM + "data:\n  !!str 9000: b\n", "resources: [r.yaml]\n"),
    "list-item": ("apiVersion: v1\nkind: List\nitems:\n- " + CM.replace("\n", "\n  ").rstrip() + "\n  data:\n    1: a\n",
                  "resources: [r.yaml]\n"),
    "prefix": (CM + "data:\n  9000: x\n", "resources: [r.yaml]\nnamePrefix: p-\n"),
    "patch-delete-object": (CM + "data:\n  9000: x\n", PATCH + "    $patch: delete\n"),
    "patch-remove-key": (CM + "data:\n  9000: x\n  a: b\n", PATCH + "    data:\n      9000: null\n"),
    "patch-adds-int": (CM + "data:\n  a: b\n", PATCH + "    data:\n      9000: y\n"),
    "patch-adds-quoted": (CM + "data:\n  a: b\n", PATCH + "    data:\n      \"9000\": y\n"),
    "patch-quoted-over-int": (CM + "data:\n  9000: x\n", PATCH + "    data:\n      \"9000\": y\n"),
    "patch-int-over-quoted": (CM + "data:\n  \"9000\": x\n", PATCH + "    data:\n      9000: y\n"),
    "json6902": (CM + "data:\n  9000: x\n",
                 "resources: [r.yaml]\npatches:\n- target: {kind: ConfigMap}\n  patch: |-\n    - op: add\n      path: /data/a\n      value: b\n"),
    "json6902-quoted": (CM + "data:\n  \"9000\": x\n",
                        "resources: [r.yaml]\npatches:\n- target: {kind: ConfigMap}\n  patch: |-\n    - op: add\n      path: /data/a\n      value: b\n"),
    "gen-literal-int": (None, "configMapGenerator:\n- name: g\n  literals: [\"1=A\", \"b=2\"]\n"),
    "gen-literal-bool": (None, "secretGenerator:\n- name: g\n  literals: [\"true=A\"]\n"),
    "gen-literal-str": (None, "configMapGenerator:\n- name: g\n  literals: [\"a1=A\", \"1a=B\"]\n"),
    "gen-merge-quoted": (CM.replace("tcp", "g") + "data:\n  \"9000\": x\n",
                         "resources: [r.yaml]\nconfigMapGenerator:\n- name: g\n  behavior: merge\n  literals: [\"a=b\"]\n"),
    # Keys kustomize's labels and annotations add are plain scalars too.
    "labels-int": (CM + "data:\n  a: b\n", "resources: [r.yaml]\nlabels:\n- pairs:\n    \"1\": b\n"),
    "labels-existing-quoted": (CM.replace("name: tcp", "name: tcp\n  labels:\n    \"1\": q"),
                               "resources: [r.yaml]\nlabels:\n- pairs:\n    \"1\": b\n"),
    "commonannotations-bool": (CM + "data:\n  a: b\n", "resources: [r.yaml]\ncommonAnnotations:\n  \"true\": x\n"),
    "labels-str": (CM + "data:\n  a: b\n", "resources: [r.yaml]\nlabels:\n- pairs:\n    a1: b\n"),
}
for n, (r, k) in cases.items():
    d = os.path.join(out, "key-" + n)
    os.makedirs(d, exist_ok=True)
    if r is not None:
        open(d + "/r.yaml", "w").write(r)
    open(d + "/kustomization.yaml", "w").write(k)
