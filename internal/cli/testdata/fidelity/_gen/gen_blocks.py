# Writes the block-* roots: a patch given inline as a block scalar (or in a
# file without a final line break) whose operations' values are block
# scalars themselves. The outer block's chomping decides whether the patch
# text ends in a line break, and a block scalar at the very end of a text
# with no final line break keeps no final line break, whatever its own
# chomping says (found on redhat-cop/gitops-catalog's amq-broker overlays).
# Usage: python3 gen_blocks.py OUTDIR
import os, sys
out = sys.argv[1]
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: x\n  b: y\n"
# an inner value: indicator, and its lines (a trailing "" is a blank line)
INNER = {
    "clip": ("|", ["line1", "line2"]),
    "strip": ("|-", ["line1", "line2"]),
    "keep": ("|+", ["line1", "line2"]),
    "keep-blank": ("|+", ["line1", "line2", ""]),
    "folded": (">", ["line1", "line2"]),
}
OUTER = {"strip": "|-", "clip": "|", "keep": "|+"}

def block(ind, lines, indent):
    return ind + "\n" + "".join((" " * indent + l if l else "") + "\n" for l in lines)

def json_ops(inner, last):
    ind, lines = INNER[inner]
    op = lambda key, val: "- op: replace\n  path: /data/" + key + "\n  value: " + val
    ops = [op("a", block(ind, lines, 4)), op("b", "z\n")]
    if last:
        ops.reverse()
    return "".join(ops)

def smp(inner, last):
    ind, lines = INNER[inner]
    a = "  a: " + block(ind, lines, 4)
    b = "  b: z\n"
    return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n" + (b + a if last else a + b)

def inline(text, outer, indent):
    body = "".join((" " * indent + l if l else "") + "\n" for l in text.rstrip("\n").split("\n"))
    return OUTER[outer] + "\n" + body

def write(name, files):
    d = os.path.join(out, "block-" + name)
    os.makedirs(d, exist_ok=True)
    open(d + "/r.yaml", "w").write(CM)
    for f, text in files.items():
        open(os.path.join(d, f), "w").write(text)

for outer in OUTER:
    for inner in INNER:
        for last in (True, False):
            pos = "last" if last else "first"
            write(f"json-{outer}-{inner}-{pos}", {"kustomization.yaml":
                  "resources: [r.yaml]\npatches:\n- target: {kind: ConfigMap, name: cfg}\n  patch: "
                  + inline(json_ops(inner, last), outer, 4)})
            write(f"smp-{outer}-{inner}-{pos}", {"kustomization.yaml":
                  "resources: [r.yaml]\npatches:\n- patch: " + inline(smp(inner, last), outer, 4)})
# the deprecated fields take inline patches too
for outer in ("strip", "clip"):
    write(f"json6902-field-{outer}", {"kustomization.yaml":
          "resources: [r.yaml]\npatchesJson6902:\n- target: {version: v1, kind: ConfigMap, name: cfg}\n  patch: "
          + inline(json_ops("clip", True), outer, 4)})
    write(f"smp-field-{outer}", {"kustomization.yaml":
          "resources: [r.yaml]\npatchesStrategicMerge:\n- " + inline(smp("clip", True), outer, 2)})
# patch files with and without a final line break
for inner in ("clip", "keep", "strip"):
    for final in (True, False):
        tail = "" if final else "-nofinal"
        j = json_ops(inner, True)
        s = smp(inner, True)
        if not final:
            j, s = j.rstrip("\n"), s.rstrip("\n")
        write(f"json-file-{inner}{tail}", {"patch.yaml": j, "kustomization.yaml":
              "resources: [r.yaml]\npatches:\n- target: {kind: ConfigMap, name: cfg}\n  path: patch.yaml\n"})
        write(f"smp-file-{inner}{tail}", {"patch.yaml": s, "kustomization.yaml":
              "resources: [r.yaml]\npatches:\n- path: patch.yaml\n"})
