import os, sys, json
out = sys.argv[1]
vals = {
 "blank-lines": "a\n\nb\n\n\nc\n",
 "blank-lines-nofinal": "a\n\nb",
 "trailing-spaces": "a  \nb\n",
 "trailing-space-last": "a\nb \n",
 "space-only-line": "a\n   \nb\n",
 "leading-spaces": "  a\nb\n",
 "leading-space-second": "a\n  b\n",
 "tab-inside": "a\tb\nc\n",
 "tab-leading": "\ta\nb\n",
 "cr": "a\r\nb\n",
 "lone-cr": "a\rb",
 "control": "a\x01b",
 "nbsp": "a\u00a0b",
 "bom": "\ufeffa",
 "line-sep": "a\u2028b",
 "non-ascii": "h\u00e9llo \u4e16\u754c \U0001F600",
 "non-ascii-multiline": "\u00e9\n\u4e16\n",
 "long-line": "word " * 30,
 "long-word": "x" * 120,
 "long-multiline": ("word " * 20 + "\n") * 3,
 "keep-trailing": "a\n\n\n",
 "only-newline": "\n",
 "only-newlines": "\n\n",
 "empty": "",
 "space": " ",
 "int-like": "123",
 "octal-like": "0755",
 "hex-like": "0x1F",
 "float-like": "1.5",
 "exp-like": "1e3",
 "inf-like": ".inf",
 "bool-true": "true",
 "bool-yes": "yes",
 "bool-y": "y",
 "bool-on": "On",
 "bool-no": "NO",
 "null-word": "null",
 "null-tilde": "~",
 "date": "2024-01-02",
 "datetime": "2024-01-02T03:04:05Z",
 "colon-space": "a: b",
 "hash": "a #b",
 "leading-dash": "- a",
 "leading-star": "*a",
 "leading-amp": "&a",
 "leading-bang": "!a",
 "leading-percent": "%a",
 "leading-at": "@a",
 "leading-backtick": "`a",
 "quote-single": "'a'",
 "quote-double": "\"a\"",
 "braces": "{a}",
 "brackets": "[a]",
 "comma": "a, b",
 "question": "? a",
 "pipe": "| a",
 "gt": "> a",
 "trailing-colon": "a:",
 "doc-start": "---",
 "doc-end": "...",
 "backslash": "a\\nb",
 "equals": "=",
 "merge-key": "<<",
}
keys = {"123": "int key", "true": "bool key", "null": "null key", "a b": "space key", "a:b": "colon key", "-k": "dash key", "": "empty key", "y": "y key", "~": "tilde key", "\u00e9": "non-ascii key", "a\tb": "tab key", "x" * 90: "long key"}
data = dict(vals); data.update(keys)
# kustomize itself fails on a few shapes (kpipe renders them): a string
# with DEL (its JSON-to-YAML step rejects the raw byte), an empty key under
# a strategic-merge patch, and a line starting with a tab after a JSON
# patch (yaml.v3 cannot read back what it wrote). They are left out where
# they fail.
def doc(skip=()):
    d = {k: v for k, v in data.items() if k not in skip}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s"}, "data": d}
    # JSON is YAML: write the object as JSON so that every value reaches
    # the tools exactly as written.
    res = json.dumps(cm, indent=1, ensure_ascii=False)
    for ch in ["\x7f", "\ufeff", "\u2028", "\u0085", "\u00a0"]:
        res = res.replace(ch, "\\u%04x" % ord(ch))
    return res + "\n"
res = doc()
def w(name, files):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    for f, c in files.items():
        open(os.path.join(d, f), "w").write(c)
w("scalars-plain", {"r.yaml": res, "kustomization.yaml": "resources: [r.yaml]\n"})
w("scalars-smp", {"r.yaml": doc(skip=("",)), "kustomization.yaml": "resources: [r.yaml]\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: s\n    data:\n      added: \"x\"\n"})
w("scalars-json-patch", {"r.yaml": doc(skip=("tab-leading",)), "kustomization.yaml": "resources: [r.yaml]\npatches:\n- target: {kind: ConfigMap}\n  patch: |-\n    - op: add\n      path: /data/added\n      value: x\n"})
w("scalars-labels", {"r.yaml": res, "kustomization.yaml": "resources: [r.yaml]\ncommonLabels: {app: x}\ncommonAnnotations: {note: \"a\\n\\nb  \\n\"}\n"})
# Block scalars written as YAML blocks in the input.
blocks = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n" + \
 "  lit: |\n    line1\n\n    line3  \n    line4\n\n\n    end\n" + \
 "  lit-spaces-line: |\n    a\n      \n    b\n" + \
 "  lit-keep: |+\n    keep\n\n\n" + \
 "  lit-strip: |-\n    strip\n\n" + \
 "  lit-indent: |2\n      two more\n    base\n" + \
 "  folded: >\n    folded\n    more\n\n    para\n\n      indented\n    back\n" + \
 "  folded-strip: >-\n    a\n    b\n" + \
 "  tabs: |\n    a\tb\n    \tc\n" + \
 "  quoted-fold: \"a\n\n    b  \n    c\"\n" + \
 "  single-fold: 'a\n\n    b'\n" + \
 "  plain-fold: a\n\n    b\n"
w("scalars-blocks", {"r.yaml": blocks, "kustomization.yaml": "resources: [r.yaml]\n"})
w("scalars-blocks-smp", {"r.yaml": blocks, "kustomization.yaml": "resources: [r.yaml]\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: b\n    data:\n      lit: |\n        patched\n\n        with blank  \n        lines\n"})
w("scalars-crlf", {"r.yaml": blocks.replace("\n", "\r\n"), "kustomization.yaml": "resources: [r.yaml]\n"})
