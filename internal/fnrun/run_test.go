package fnrun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/plugins"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fnConfig(name, script string) string {
	return "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: " + name + "\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + script + "\n"
}

// opts runs functions from dir, as fn run started there would.
func opts(dir string) Options {
	return Options{Plugins: plugins.Options{EnableExec: true}, WorkDir: dir}
}

func needShell(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the functions are shell scripts")
	}
}

func parse(t *testing.T, s string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func render(t *testing.T, n *yaml.Node) string {
	t.Helper()
	s, err := resyaml.EncodeNode(n)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// setAnnotation edits as kyaml does: a new value single-quoted and last,
// an existing one in place keeping its style, an empty annotations map
// (or metadata) dropped and made again at the end.
func TestSetAnnotation(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"kind: A\nmetadata:\n  name: x\n  annotations:\n    b: \"1\"\n", "kind: A\nmetadata:\n  name: x\n  annotations:\n    b: \"1\"\n    k: '0'\n"},
		{"kind: A\nmetadata:\n  annotations:\n    k: \"5\" # c\n  name: x\n", "kind: A\nmetadata:\n  annotations:\n    k: \"0\"\n  name: x\n"},
		{"kind: A\nmetadata:\n  annotations:\n    k: 5\n", "kind: A\nmetadata:\n  annotations:\n    k: \"0\"\n"},
		{"metadata:\n  annotations: {}\n  name: x\nkind: A\n", "metadata:\n  name: x\n  annotations:\n    k: '0'\nkind: A\n"},
		{"metadata: {}\nkind: A\n", "kind: A\nmetadata:\n  annotations:\n    k: '0'\n"},
		{"kind: A\nmetadata: {name: x}\n", "kind: A\nmetadata: {name: x, annotations: {k: '0'}}\n"},
	} {
		n := parse(t, c.in)
		if err := setAnnotation(n, "k", "0"); err != nil {
			t.Fatal(err)
		}
		if got := render(t, n); got != c.want {
			t.Errorf("%q: got\n%s\nwant\n%s", c.in, got, c.want)
		}
	}
	if err := setAnnotation(parse(t, "just a scalar\n"), "k", "0"); err == nil || !strings.Contains(err.Error(), "wrong node kind: expected MappingNode but got ScalarNode") {
		t.Errorf("a scalar document: %v", err)
	}
}

// The reader splits on `---` lines (refusing one with more than a
// comment after it), skips empty documents and numbers the others; the
// writer removes what the reader added and drops emptied maps.
func TestReadWriteRoundTrip(t *testing.T) {
	in := "---\n# only a comment\n---\nkind: A # a\nmetadata:\n    name: x\n---  # sep\n\n---\nb: [1, 2]\n"
	r := &reader{set: map[string]string{PathAnnotation: "f.yaml", LegacyPathAnnotation: "f.yaml"}}
	nodes, err := r.read([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || indexOf(nodes[0]) != "0" || indexOf(nodes[1]) != "1" || pathOf(nodes[1]) != "f.yaml" {
		t.Fatalf("read %d objects: %v %v", len(nodes), annotations(nodes[0]), annotations(nodes[1]))
	}
	var buf bytes.Buffer
	if err := (writer{clear: []string{PathAnnotation, LegacyPathAnnotation}}).write(&buf, nodes); err != nil {
		t.Fatal(err)
	}
	if want := "kind: A # a\nmetadata:\n  name: x\n---\nb: [1, 2]\n"; buf.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
	if _, err := (&reader{}).read([]byte("a: 1\n--- b: 2\nc: 3\n")); err == nil || !strings.Contains(err.Error(), "invalid document separator: --- b: 2") {
		t.Errorf("bad separator: %v", err)
	}
}

// One object bound for a .json file is written as JSON, keys sorted and
// HTML characters escaped, as kyaml's writer does.
func TestWriteJSON(t *testing.T) {
	nodes, err := (&reader{set: map[string]string{PathAnnotation: "x.json"}}).read([]byte(`{"z": "<1>", "a": 1.50}`))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := (writer{clear: []string{PathAnnotation}}).write(&buf, nodes); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"a\": 1.5,\n  \"z\": \"\\u003c1\\u003e\"\n}\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

// A function that drops comments and sorts keys gets them back where the
// keys are the same; a folded scalar becomes double-quoted on the way.
func TestCopyCommentsAndSyncOrder(t *testing.T) {
	from := parse(t, "# head\nkind: A # kind\napiVersion: v1\ndata:\n  # about z\n  z: 1\n  f: >\n    text\n  list:\n  - a # first\n")
	to := content(parse(t, "apiVersion: v1\ndata:\n  f: >\n    text\n  list:\n  - a\n  new: 2\n  z: 1\nkind: A\n"))
	if err := copyComments(from, to); err != nil {
		t.Fatal(err)
	}
	if err := syncOrder(from, to); err != nil {
		t.Fatal(err)
	}
	want := "# head\nkind: A # kind\napiVersion: v1\ndata:\n  # about z\n  z: 1\n  f: \"text\\n\"\n  list:\n  - a # first\n  new: 2\n"
	if got := render(t, to); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A field that changed kind is kyaml's error.
	err := copyComments(parse(t, "a: x\n"), content(parse(t, "a: {b: 1}\n")))
	if err == nil || !strings.Contains(err.Error(), "wrong node kind: expected ScalarNode but got MappingNode") {
		t.Errorf("kind change: %v", err)
	}
}

// Functions run deepest scope first, each over its own directory (a
// config in `functions/` over the directory above); an exec path is
// relative to WorkDir; a changed file keeps its comments and the
// permission bits it had.
func TestRunScopeOrderAndWriteBack(t *testing.T) {
	needShell(t)
	dir := t.TempDir()
	label := "#!/bin/sh\nsed -e \"s/^\\(      seen: .*\\)$/\\1-$1/\"\n"
	writeFiles(t, dir, map[string]string{
		"tools/label.sh":        label,
		"fn.yaml":               strings.Replace(fnConfig("top", "./tools/label.sh"), "path:", "args: [top]\n        path:", 1),
		"sub/functions/fn.yaml": strings.Replace(fnConfig("deep", "tools/label.sh"), "path:", "args: [deep]\n        path:", 1),
		"top.yaml":              "# a comment that stays\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: top\n  annotations:\n    seen: x\n",
		"sub/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep # why\n  annotations:\n    seen: x\n",
	})
	if err := os.Chmod(filepath.Join(dir, "top.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A relative path with a slash (tools/label.sh) is looked up against
	// the working directory, as os/exec does for kustomize.
	o := opts(dir)
	if _, err := Run(context.Background(), dir, o); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "sub/cm.yaml")); !strings.Contains(got, "name: deep # why\n  annotations:\n    seen: x-deep-top\n") {
		t.Errorf("sub/cm.yaml: the deep and the top function should both have run, deep first:\n%s", got)
	}
	if got := readFile(t, filepath.Join(dir, "top.yaml")); got != "# a comment that stays\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: top\n  annotations:\n    seen: x-top\n" {
		t.Errorf("top.yaml:\n%s", got)
	}
	if st, err := os.Stat(filepath.Join(dir, "top.yaml")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("top.yaml lost its mode: %v %v", st.Mode(), err)
	}
	// From another working directory the same relative path is not found.
	o.WorkDir = t.TempDir()
	if _, err := Run(context.Background(), dir, o); err == nil || !strings.Contains(err.Error(), "fork/exec tools/label.sh") {
		t.Errorf("exec path from another directory: %v", err)
	}
}

// A function that drops objects removes the files they emptied; one
// that names a path outside the package, or through a symlink out of it,
// fails the run before anything is written.
func TestRunRemovesAndRefusesEscapes(t *testing.T) {
	needShell(t)
	dir := t.TempDir()
	outside := t.TempDir()
	script := "#!/bin/sh\ncat >/dev/null\ncat <<END\napiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: new\n    annotations:\n      config.kubernetes.io/path: $TARGET\nEND\n"
	writeFiles(t, dir, map[string]string{
		"fn.yaml":   fnConfig("f", "./f.sh"),
		"f.sh":      script,
		"gone.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: gone\n",
	})
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Skip("no symlinks:", err)
	}
	for _, target := range []string{"../outside.yaml", "link/x.yaml", "link/deeper/x.yaml", "/abs.yaml"} {
		o := opts(dir)
		o.Plugins.Env = []string{"TARGET=" + target}
		if _, err := Run(context.Background(), dir, o); err == nil {
			t.Errorf("%s: no error", target)
		}
		if _, err := os.Stat(filepath.Join(dir, "gone.yaml")); err != nil {
			t.Errorf("%s: a failed run removed a file: %v", target, err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Fatalf("%s: wrote outside the package: %v", target, entries)
		}
	}
	o := opts(dir)
	o.Plugins.Env = []string{"TARGET=made/new.yaml"}
	res, err := Run(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"gone.yaml", "fn.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s should have been removed (its objects are gone)", f)
		}
	}
	if got := readFile(t, filepath.Join(dir, "made/new.yaml")); got != "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n" {
		t.Errorf("made/new.yaml:\n%s", got)
	}
	if strings.Join(res.Removed, ",") != "fn.yaml,gone.yaml" || strings.Join(res.Written, ",") != "made/new.yaml" {
		t.Errorf("removed %v, written %v", res.Removed, res.Written)
	}
}

// --dry-run prints the objects with their path annotations (no index
// annotations) and writes nothing; a failing function writes nothing.
func TestRunDryRunAndFailure(t *testing.T) {
	needShell(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"fn.yaml": fnConfig("f", "./f.sh"),
		"f.sh":    "#!/bin/sh\nsed 's/name: cm/name: renamed/'\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
	})
	var buf bytes.Buffer
	o := opts(dir)
	o.DryRun = &buf
	if _, err := Run(context.Background(), dir, o); err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: renamed\n  annotations:\n    config.kubernetes.io/path: 'cm.yaml'\n    internal.config.kubernetes.io/path: 'cm.yaml'\n"
	if !strings.HasPrefix(buf.String(), want) || strings.Contains(buf.String(), "index") {
		t.Errorf("dry run printed:\n%s", buf.String())
	}
	if got := readFile(t, filepath.Join(dir, "cm.yaml")); !strings.Contains(got, "name: cm") {
		t.Errorf("a dry run wrote cm.yaml: %s", got)
	}
	writeFiles(t, dir, map[string]string{"f.sh": "#!/bin/sh\nsed 's/name: cm/name: renamed/'\nexit 2\n"})
	var stderr bytes.Buffer
	o = opts(dir)
	o.Stderr = &stderr
	if _, err := Run(context.Background(), dir, o); err == nil || err.Error() != "exit status 2" {
		t.Errorf("failing function: %v", err)
	}
	if got := readFile(t, filepath.Join(dir, "cm.yaml")); !strings.Contains(got, "name: cm") {
		t.Errorf("a failed run wrote cm.yaml: %s", got)
	}
}
