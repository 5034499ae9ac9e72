"""Writes the `kpipe fn run` cases (args, pkg/, chmod, bin/) into the
current directory, cmd/kpipe/testdata/fn; see ../README.md. Run from
there: python3 _gen/make_cases.py"""
import os
cases = {}
FN = lambda name, body, kind="Fn": f"apiVersion: example.com/v1\nkind: {kind}\nmetadata:\n  name: {name}\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: {body}\n"

STYLES = """# a comment before the document

# the head comment of kind
kind: ConfigMap   # kind comes first here
apiVersion: v1
metadata:
  name: styles # the name
  labels:
    z: "1"
    a: 'x'
data:
  single: '1'
  double: "2"
  plain: value
  old: old-value
  # about the block
  block: |
    line one
    line two
  strip: |-
    no final newline
  folded: >
    folded
    text
  number: 3
  yes: yes
  empty: ""
  nul: ~
  list:
  - b # second
  - a
  flow: {k: v, n: 1}
  flowlist: [1, "2", '3']
# a foot comment
---
# the second document
apiVersion: v1
kind: Secret
metadata: {name: flow-meta}
stringData:
  key: old-value
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
      # the main container
      - name: app
        image: nginx:old-value # pinned
        env:
        - name: A
          value: "1"
"""
SED_OLD = "#!/bin/sh\n# changes every old-value to new-value\nsed -e 's/old-value/new-value/g'\n"

def case(name, args, files, chmod=None, bins=None):
    cases[name] = (args, files, chmod, bins)

case("set-value", ". --enable-exec", {"fn.yaml": FN("set", "./set.sh"), "set.sh": SED_OLD, "styles.yaml": STYLES},
     chmod="0600 styles.yaml\n0640 fn.yaml\n")
case("set-value-dry-run", ". --dry-run --enable-exec", {"fn.yaml": FN("set", "./set.sh"), "set.sh": SED_OLD, "styles.yaml": STYLES})

ADD = r"""#!/bin/sh
# adds objects: one without a path (it goes to [namespace/]kind_name.yaml),
# one with a path in a new directory, two into an existing file
sed -e '/^items:/a\
- apiVersion: v1\
  kind: ConfigMap\
  metadata:\
    name: no-path\
    namespace: team-a\
- apiVersion: v1\
  kind: Service\
  metadata:\
    name: pathed\
    annotations:\
      config.kubernetes.io/path: "made/here/svc.yaml"\
- apiVersion: v1\
  kind: ConfigMap\
  metadata:\
    name: front\
    annotations:\
      internal.config.kubernetes.io/path: two.yaml' -e '/^functionConfig:/i\
- apiVersion: v1\
  kind: ConfigMap\
  metadata:\
    name: back\
    annotations:\
      config.kubernetes.io/path: two.yaml\
  data: {"quoted": "1", plain: 2}'
"""
TWO = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n"
case("add-resources", ". --enable-exec", {"fn.yaml": FN("add", "./add.sh"), "add.sh": ADD, "two.yaml": TWO})
case("add-resources-dry-run", ". --enable-exec --dry-run", {"fn.yaml": FN("add", "./add.sh"), "add.sh": ADD, "two.yaml": TWO})

DROP = r"""#!/bin/sh
# drops every object named gone (and prints the rest as a ResourceList)
awk '
/^- / || /^functionConfig:/ { flush(); keep = 1 }
/^functionConfig:/ { fc = 1 }
fc { print; next }
{ buf = buf $0 "\n" }
/name: gone$/ { keep = 0 }
function flush() { if (keep || buf !~ /^- /) printf "%s", buf; buf = "" }
END { flush() }'
"""
case("delete-resources", ". --enable-exec", {"fn.yaml": FN("drop", "./drop.sh"), "drop.sh": DROP,
     "gone.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: gone\n",
     "mixed.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stays\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stays-too\n",
     "sub/gone.yml": "# only a comment survives? no: the file goes\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n",
     "empty.yaml": "# no object here\n"})

LABEL = """#!/bin/sh
# appends its first argument and $SUFFIX to every "seen" annotation
sed -e "s/^\\(      seen: \\)'\\{0,1\\}\\([^']*\\)'\\{0,1\\}$/\\1\\2-$1$SUFFIX/"
"""
FORMS = {
 "label.sh": LABEL,
 "fn.yaml": """# functions of the top directory run last
apiVersion: example.com/v1
kind: Block
metadata:
  name: block
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ./label.sh
        args: [block]
        envs: [SUFFIX=!]
---
apiVersion: example.com/v1
kind: Quoted
metadata:
  name: quoted
  annotations:
    config.kubernetes.io/function: "exec: {path: ./label.sh, args: [quoted]}"
---
apiVersion: example.com/v1
kind: Json
metadata:
  name: json
  annotations:
    config.kubernetes.io/function: '{"exec": {"path": "./label.sh", "args": ["json"]}}'
""",
 "a/legacy.yaml": """apiVersion: example.com/v1
kind: Legacy
metadata:
  name: legacy
  annotations:
    config.k8s.io/function: |-
      exec:
        path: ./label.sh
        args:
        - legacy
""",
 "a/b/functions/configfn.yaml": """apiVersion: example.com/v1
kind: ConfigFn
metadata:
  name: configfn
  configFn:
    exec:
      path: ./label.sh
      args: [configfn]
""",
 "a/b/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deepest\n  annotations:\n    seen: x\n",
 "a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: middle\n  annotations:\n    seen: x\n",
 "ab/cm.yaml": "# a/ is a string prefix of ab/: kustomize scopes a/'s functions over ab/ too\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sibling\n  annotations:\n    seen: x\n",
 "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: top\n  annotations:\n    seen: 'x'\n",
}
case("function-forms-and-scope", ". --enable-exec -e SUFFIX=? --env OTHER=1", FORMS)

MAPS = "#!/bin/sh\n# a function written against plain maps: keys sorted, comments and styles lost\nKPIPE_TEST_FUNCTION=maps exec \"$KPIPE_TEST_BINARY\"\n"
case("comments-and-order-restored", ". --enable-exec", {"fn.yaml": FN("maps", "./maps.sh"), "maps.sh": MAPS, "styles.yaml": STYLES.replace("  plain: value\n", "  plain: value\n  drop: me\n")})
case("comments-and-order-restored-dry-run", ". --enable-exec --dry-run", {"fn.yaml": FN("maps", "./maps.sh"), "maps.sh": MAPS, "styles.yaml": STYLES})

PLAIN = r"""#!/bin/sh
# prints plain YAML documents instead of a ResourceList: the items, unindented
sed -n -e '/^functionConfig:/q' -e '/^items:/d' -e 's/^- /---\n/' -e 's/^  //' -e 'p' | sed -e 's/old-value/plain-value/'
"""
case("plain-documents-output", ". --enable-exec", {"fn.yaml": FN("plain", "./plain.sh"), "plain.sh": PLAIN, "styles.yaml": STYLES})

FAIL = r"""#!/bin/sh
cat >/dev/null
echo "the function says why on stderr" >&2
cat <<END
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
results:
- message: replicas must be set
  severity: error
  resourceRef: {kind: Deployment, name: web}
END
exit 3
"""
case("function-fails", ". --enable-exec", {"fn.yaml": FN("fail", "./fail.sh"), "fail.sh": FAIL, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"})

RESULTS_OK = r"""#!/bin/sh
# reports an error result but exits 0: kustomize writes, results ignored
sed -e 's/old-value/new-value/' -e '$a\
results:\
- message: looks wrong\
  severity: error'
"""
case("error-results-exit-zero", ". --enable-exec", {"fn.yaml": FN("res", "./res.sh"), "res.sh": RESULTS_OK, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: old-value\n"})

DEFER = """apiVersion: example.com/v1
kind: Fn
metadata:
  name: deferred
  annotations:
    config.kubernetes.io/function: |
      deferFailure: true
      exec:
        path: ./fail-late.sh
---
""" + FN("after", "./set.sh")
case("defer-failure", ". --enable-exec", {"fn.yaml": DEFER, "set.sh": SED_OLD, "fail-late.sh": "#!/bin/sh\nsed -e 's/old-value/half-value/'\necho failing late >&2\nexit 5\n",
     "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: old-value\n"})

case("empty-output", ". --enable-exec", {"fn.yaml": FN("nothing", "./nothing.sh"), "nothing.sh": "#!/bin/sh\n# returns no objects: kustomize stops and writes nothing\ncat >/dev/null\n", "styles.yaml": STYLES})

INDEX = """apiVersion: v1
kind: ConfigMap
metadata:
  name: annotated
  annotations:
    config.kubernetes.io/index: "7"
    config.kubernetes.io/path: 'elsewhere.yaml'
    internal.config.kubernetes.io/path: "elsewhere.yaml"
    keep: me
data:
  k: old-value
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: second
  annotations:
    config.k8s.io/id: '9'
"""
REINDEX = r"""#!/bin/sh
# moves the first object to index 5 (current spelling only) and renames a path (legacy spelling only)
sed -e "s/internal.config.kubernetes.io\/index: '1'/internal.config.kubernetes.io\/index: '5'/" -e "s/^      config.kubernetes.io\/path: 'more.yaml'/      config.kubernetes.io\/path: 'renamed.yaml'/" -e 's/old-value/new-value/'
"""
case("index-annotations", ". --enable-exec", {"fn.yaml": FN("reindex", "./reindex.sh"), "reindex.sh": REINDEX, "cm.yaml": INDEX,
     "more.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: moved\n"})
case("index-annotations-dry-run", ". --enable-exec --dry-run", {"fn.yaml": FN("reindex", "./reindex.sh"), "reindex.sh": REINDEX, "cm.yaml": INDEX,
     "more.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: moved\n"})

JSON1 = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}, "data": {"z": "old-value", "a": "<b> & c"}}\n'
case("json-files", ". --enable-exec", {"fn.yaml": FN("set", "./set.sh"), "set.sh": SED_OLD, "one.json": JSON1,
     "two.json": '{"apiVersion": "v1", "kind": "List", "items": []}\n---\n{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "k"}}\n'})
case("json-dry-run-single", ". --enable-exec --dry-run", {"fn.yaml": FN("gone", "./drop.sh"), "drop.sh": DROP, "one.json": JSON1})
case("file-argument", "cm.yaml --enable-exec", {"cm.yaml": FN("gone", "./add.sh") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n", "add.sh": ADD, "two.yaml": TWO})

DOCKER = "#!/bin/sh\n# a fake docker: shows its arguments, then acts as the function\necho \"docker $*\" >&2\nsed -e 's/old-value/from-container/'\n"
CONTAINER = """apiVersion: example.com/v1
kind: Fn
metadata:
  name: image
  annotations:
    config.kubernetes.io/function: |
      container:
        image: example.com/fn:v1
        envs: [A=1, PASSED, Z=2]
        mounts:
        - type: bind
          src: ./data
          dst: /data
---
apiVersion: example.com/v1
kind: Legacy
metadata:
  name: legacy-image
  annotations:
    config.kubernetes.io/container: example.com/legacy:v2
"""
case("container-functions", ". -e B=3 -e PASSED2", {"fn.yaml": CONTAINER, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: old-value\n"}, bins={"docker": DOCKER})

case("bad-function-spec", ". --enable-exec", {"fn.yaml": "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: bad\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./set.sh\n        pth: typo\n", "set.sh": SED_OLD, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"})

ESCAPE = r"""#!/bin/sh
sed -e '/^items:/a\
- apiVersion: v1\
  kind: ConfigMap\
  metadata:\
    name: escapee\
    annotations:\
      config.kubernetes.io/path: ../outside.yaml'
"""
case("path-leaves-package", ". --enable-exec", {"fn.yaml": FN("escape", "./escape.sh"), "escape.sh": ESCAPE, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"})

KINDCHANGE = "#!/bin/sh\n# turns a string into a map: kustomize's comment copy refuses\nsed -e 's/^    k: old-value/    k: {now: a-map}/'\n"
case("field-kind-changed", ". --enable-exec", {"fn.yaml": FN("kind", "./kind.sh"), "kind.sh": KINDCHANGE, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: old-value\n"})

ENV = """#!/bin/sh
# records what it got in an annotation
sed -e "s|^\\(    annotations:\\)$|\\1\\n      env: '$SPEC_VAR $FLAG_VAR $BOTH ${EQUALS:-unset} $1 $2'|"
"""
case("environment-and-args", ". --enable-exec -e FLAG_VAR=flag -e BOTH=from-flag -e EQUALS=a=b", {
     "fn.yaml": "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: env\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./env.sh\n        args: [one, \"two words\"]\n        envs:\n        - SPEC_VAR=spec\n        - BOTH=from-spec\n",
     "env.sh": ENV, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  annotations:\n    a: b\n"})

case("missing-directory", "nope --enable-exec", {"fn.yaml": FN("set", "./set.sh"), "set.sh": SED_OLD})
case("exec-not-found", ". --enable-exec", {"fn.yaml": FN("missing", "./missing.sh"), "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"})

CRLF = "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\ndata:\r\n  k: old-value\r\n"
case("crlf-and-odd-documents", ". --enable-exec", {"fn.yaml": FN("set", "./set.sh"), "set.sh": SED_OLD, "crlf.yaml": CRLF,
     "odd.yaml": "---\n# a comment-only document\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\ndata: {k: old-value}\n---\n\n---  # a separator with a comment\nkind: NoVersion\nmetadata:\n  annotations: {}\n",
     "nometa.yaml": "a: old-value\nb: [1, 2]\n", ".hidden/h.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hidden\ndata:\n  k: old-value\n",
     "notes.txt": "old-value stays: not YAML by name\n"})

case("krmignore", ". --enable-exec", {"fn.yaml": FN("set", "./set.sh"), "set.sh": SED_OLD, ".krmignore": "ignored/\n*.skip.yaml\n",
     "ignored/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ignored\ndata:\n  k: old-value\n",
     "x.skip.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: skipped\ndata:\n  k: old-value\n",
     "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: old-value\n"})

for name, (args, files, chmod, bins) in cases.items():
    base = os.path.join(name)
    os.makedirs(base, exist_ok=True)
    open(os.path.join(base, "args"), "w").write(args + "\n")
    if chmod: open(os.path.join(base, "chmod"), "w").write(chmod)
    for f, content in files.items():
        p = os.path.join(base, "pkg", f)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w", newline="").write(content)
        os.chmod(p, 0o755 if f.endswith(".sh") else 0o644)
    for f, content in (bins or {}).items():
        p = os.path.join(base, "bin", f)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write(content)
        os.chmod(p, 0o755)
print(len(cases))
