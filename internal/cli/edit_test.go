package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/engine"
)

// editTree writes a kustomization tree (start as the kustomization file,
// plus the files the edits name) into a new directory.
func editTree(t *testing.T, start string) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "edit", start))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"kustomization.yaml":       string(data),
		"deploy.yaml":              "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - name: a\n        image: nginx:1.0\n      - name: b\n        image: redis\n",
		"cm.yaml":                  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
		"patch.yaml":               "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    p: smp\n",
		"base/kustomization.yaml":  "resources:\n- cm.yaml\n",
		"base/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
		"comp/kustomization.yaml":  "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  from: comp\n",
		"comp2/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
		"app.env":                  "# env\nX=1\nY\n",
		"config.properties":        "a=b\n",
		"transformer.yaml":         "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata:\n  name: t\n  namespace: tns\n",
		".hidden.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hidden\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runIn runs bin with args in dir and returns the exit status and output.
func runIn(t *testing.T, dir string, bin []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin[0], append(bin[1:], args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KPIPE_TEST_AS_KPIPE=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

// stdoutOf runs `edit fix` on fresh trees made from start and returns
// the standard output of kustomize and of kpipe.
func stdoutOf(t *testing.T, start string, kz, kp []string) (string, string) {
	t.Helper()
	out := func(dir string, bin []string) string {
		cmd := exec.Command(bin[0], append(bin[1:], "edit", "fix")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "KPIPE_TEST_AS_KPIPE=1")
		b, _ := cmd.Output()
		return string(b)
	}
	return out(editTree(t, start), kz), out(editTree(t, start), kp)
}

func kpipeBin(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "--"}
}

// TestEditDifferential runs every edit subcommand with kustomize v5.8.2
// and kpipe on copies of the same kustomization: the files must come out
// byte-identical and both must succeed or both fail.
func TestEditDifferential(t *testing.T) {
	kz := []string{kustomize582(t)}
	kp := kpipeBin(t)
	cases := [][]string{
		{"set", "nameprefix", "--", "pre-"},
		{"set", "namesuffix", "--", "-suf"},
		{"set", "namespace", "ns1"},
		{"set", "image", "nginx=reg.io:5000/nginx:2", "redis:7", "alpine@sha256:abc", "busybox=*:3", "nginx2=x/y:1@sha256:def"},
		{"set", "image", "nginx=*:9"},
		{"set", "replicas", "web=3", "other=1"},
		{"set", "label", "app:y", "new:\"quoted\""},
		{"set", "annotation", "note:false", "b:"},
		{"set", "buildmetadata", "originAnnotations,managedByLabel"},
		{"add", "resource", "cm.yaml", "deploy.yaml", "*.yaml"},
		{"add", "resource", "--no-verify", "https://example.com/x.yaml"},
		{"add", "resource", "missing.yaml"},
		{"add", "base", "base"},
		{"add", "component", "comp", "comp2"},
		{"add", "transformer", "transformer.yaml"},
		{"add", "generator", "transformer.yaml"},
		{"add", "configuration", "cm.yaml"},
		// A file that does not exist yet: logged, not added.
		{"add", "generator", "gen.yaml"},
		{"add", "transformer", "missing.yaml", "transformer.yaml", "transformer.yaml"},
		{"add", "configuration", "missing.yaml"},
		{"add", "generator", "kustomization.yaml", "*.yaml"},
		{"add", "transformer", ".hidden.yaml", "nothing*"},
		{"add", "label", "a:b,c:d"},
		{"add", "label", "e:f", "g:h"},
		{"add", "label", "app:again"},
		{"add", "label", "--force", "app:again"},
		{"add", "label", "app:again", "-f"},
		{"add", "resource", "base", "comp/*.yaml", "base/../cm.yaml"},
		{"add", "label", "--without-selector", "e:f", "g:h"},
		{"add", "label", "--without-selector", "--include-templates", "t:1"},
		{"add", "label", "--include-templates", "t:1"},
		{"add", "annotation", "x:y", "z:\"q\"", "n:1"},
		{"add", "annotation", "note:dup"},
		// Scalars YAML would read as something else, long and non-ASCII
		// values, a value with a newline: quoting and folding as kustomize.
		{"add", "annotation", "a:yes", "b:1.0", "c:null", "d:~", "e:x: y", "f:#x", "g:é ü", "h:0x1F", "i:" + strings.Repeat("word ", 30), "j:line1\nline2", "k:'q'", "l: lead"},
		{"set", "nameprefix", "--", "on"},
		{"set", "namesuffix", "--", "123"},
		{"set", "image", "nginx=reg.io/nginx:0755"},
		{"add", "buildmetadata", "transformerAnnotations"},
		{"add", "buildmetadata", "originAnnotations"},
		{"remove", "resource", "deploy.yaml"},
		{"remove", "resource", "*.yaml"},
		{"remove", "component", "comp"},
		{"remove", "transformer", "transformer.yaml"},
		{"remove", "label", "app"},
		{"remove", "label", "nope"},
		{"remove", "label", "-i", "nope"},
		{"remove", "annotation", "note"},
		{"remove", "buildmetadata", "originAnnotations"},
		{"add", "patch", "--path", "patch.yaml"},
		{"add", "patch", "--path", "patch.yaml", "--kind", "Deployment", "--name", "web"},
		{"add", "patch", "--patch", "[{\"op\": \"add\", \"path\": \"/x\", \"value\": 1}]", "--group", "apps", "--version", "v1", "--kind", "Deployment", "--namespace", "ns", "--label-selector", "a=b", "--annotation-selector", "c=d"},
		{"add", "patch"},
		{"add", "patch", "--path", "a", "--patch", "b"},
		{"remove", "patch", "--path", "patch.yaml", "--kind", "Deployment", "--name", "web"},
		{"remove", "patch", "--path", "nope.yaml"},
		{"add", "configmap", "app", "--from-literal=C=3", "--from-literal=D=a,b"},
		{"add", "configmap", "new", "--from-file=config.properties", "--from-file=k=app.env", "--behavior=merge", "--namespace", "default"},
		{"add", "configmap", "envcm", "--from-env-file=app.env", "--disableNameSuffixHash"},
		{"add", "configmap", "globbed", "--from-file=base/*.yaml,./config.properties", "--from-file=base/../app.env"},
		{"add", "configmap", "bad", "--from-literal=noequals"},
		{"add", "configmap", "bad", "--from-file=missing.txt"},
		{"add", "configmap", "dup", "--from-literal=A=1", "--from-literal=A=2"},
		{"add", "configmap", "nothing"},
		{"add", "secret", "creds", "--from-literal=pass=x"},
		{"add", "secret", "tls", "--type", "kubernetes.io/tls", "--from-file=tls.crt=config.properties", "--namespace", "ns"},
		// kustomize rewrites the literals of `set` in Go map order, so
		// only a one-literal generator has one right answer.
		{"set", "configmap", "one", "--from-literal=K=9"},
		{"set", "configmap", "app", "--namespace", "other", "--new-namespace", "moved"},
		{"set", "configmap", "app", "--from-literal=Z=1"},
		{"set", "configmap", "none", "--from-literal=A=1"},
		{"set", "secret", "creds", "--from-literal=user=root"},
		{"remove", "configmap", "app"},
		{"remove", "configmap", "app,none", "--namespace", "other"},
		{"remove", "configmap", "none"},
		{"remove", "secret", "creds"},
		{"fix"},
	}
	// Every case runs on the two richest starting files; the other
	// starting files (layout oddities) get one case of each kind, which
	// keeps the test's ~2 processes per case affordable under -race.
	few := map[string]bool{"set namespace ns1": true, "set image nginx=*:9": true, "add label e:f g:h": true,
		"add resource cm.yaml deploy.yaml *.yaml": true, "remove resource deploy.yaml": true,
		"add configmap envcm --from-env-file=app.env --disableNameSuffixHash": true,
		"add patch --path patch.yaml":                                         true, "remove label app": true, "fix": true}
	for _, start := range []string{"awkward.yaml", "generators.yaml", "plain.yaml", "nofields.yaml", "odd.yaml", "crlf.yaml", "nonewline.yaml", "helm.yaml"} {
		for _, args := range cases {
			if start != "awkward.yaml" && start != "generators.yaml" && !few[strings.Join(args, " ")] {
				continue
			}
			name := start + "/" + strings.Join(args, " ")
			t.Run(name, func(t *testing.T) {
				t.Parallel() // each case has its own trees; two processes each
				dk, dp := editTree(t, start), editTree(t, start)
				full := append([]string{"edit"}, args...)
				ck, ok := runIn(t, dk, kz, full...)
				cp, op := runIn(t, dp, kp, full...)
				if (ck == 0) != (cp == 0) {
					t.Fatalf("kustomize exit %d (%s), kpipe exit %d (%s)", ck, ok, cp, op)
				}
				// What a successful edit prints, but for the time of
				// kustomize's log lines (and `add patch`'s, which prints a
				// Go value with pointers).
				if ck == 0 && args[0] != "fix" && !(args[1] == "patch" && args[0] == "add") &&
					logTime.ReplaceAllString(ok, "") != logTime.ReplaceAllString(op, "") {
					t.Errorf("output differs\nkustomize:\n%s\nkpipe:\n%s", ok, op)
				}
				if args[0] == "fix" {
					// What fix prints (kustomize's build warnings aside).
					// The same text, and the same build warning (kpipe's
					// names kpipe build and carries kpipe's error message).
					so, sp := stdoutOf(t, start, kz, kp)
					kind := func(out string) (string, string) {
						text, warn, _ := strings.Cut(out, "Warning: 'Fixed' kustomization now produces ")
						w, _, _ := strings.Cut(warn, " when running")
						return text, w
					}
					tk, wk := kind(so)
					tp, wp := kind(sp)
					if tk != tp || wk != wp {
						t.Errorf("fix prints\n%s\nkustomize prints\n%s", sp, so)
					}
				}
				wk, _ := os.ReadFile(filepath.Join(dk, "kustomization.yaml"))
				wp, _ := os.ReadFile(filepath.Join(dp, "kustomization.yaml"))
				if !bytes.Equal(wk, wp) {
					t.Fatalf("files differ\nkustomize:\n%s\nkpipe:\n%s", wk, wp)
				}
			})
		}
	}
}

// TestEditArgoCDSequence runs the calls Argo CD makes for an Application
// with kustomize settings, then build, with kustomize and with kpipe; the
// kustomization files and the built output must be identical.
func TestEditArgoCDSequence(t *testing.T) {
	kz := []string{kustomize582(t)}
	kp := kpipeBin(t)
	dk, dp := editTree(t, "plain.yaml"), editTree(t, "plain.yaml")
	calls := [][]string{
		{"edit", "set", "nameprefix", "--", "pre-"},
		{"edit", "set", "namesuffix", "--", "-suf"},
		{"edit", "set", "image", "nginx=reg.example.com/nginx:1.27", "redis:7.2", "busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		{"edit", "set", "replicas", "web=4"},
		{"edit", "set", "namespace", "team-a"},
		{"edit", "add", "label", "app.kubernetes.io/part-of:shop,tier:web"},
		{"edit", "add", "annotation", "owner:team-a,argocd.argoproj.io/sync-wave:\"1\""},
		{"edit", "add", "component", "comp"},
	}
	for _, c := range calls {
		if code, out := runIn(t, dk, kz, c...); code != 0 {
			t.Fatalf("kustomize %v: %s", c, out)
		}
		if code, out := runIn(t, dp, kp, c...); code != 0 {
			t.Fatalf("kpipe %v: %s", c, out)
		}
	}
	wk, _ := os.ReadFile(filepath.Join(dk, "kustomization.yaml"))
	wp, _ := os.ReadFile(filepath.Join(dp, "kustomization.yaml"))
	if !bytes.Equal(wk, wp) {
		t.Fatalf("kustomization files differ\nkustomize:\n%s\nkpipe:\n%s", wk, wp)
	}
	// Build both trees with both tools: same output, and the edits show.
	_, bk := runIn(t, dk, kz, "build", ".")
	code, bp := runIn(t, dp, kp, "build", ".")
	if code != 0 {
		t.Fatalf("kpipe build: %s", bp)
	}
	if bk != bp {
		t.Fatalf("build output differs\nkustomize:\n%s\nkpipe:\n%s", bk, bp)
	}
	for _, want := range []string{"name: pre-web-suf", "namespace: team-a", "image: reg.example.com/nginx:1.27", "image: redis:7.2", "replicas: 4", "from: comp", "app.kubernetes.io/part-of: shop,tier:web"} {
		if !strings.Contains(bp, want) {
			t.Errorf("build output lacks %q:\n%s", want, bp)
		}
	}
}

// TestEditBadInput: a kustomization with an unknown field is refused with
// the file named, and the file is left as it was.
func TestEditBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := "resources:\n- a.yaml\nnotAField: 1\n"
	p := filepath.Join(dir, "kustomization.yaml")
	if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runIn(t, dir, kpipeBin(t), "edit", "set", "namespace", "x")
	if code == 0 || !strings.Contains(out, p) || !strings.Contains(out, "notAField") {
		t.Errorf("exit %d, output %q", code, out)
	}
	if got, _ := os.ReadFile(p); string(got) != bad {
		t.Errorf("file changed: %q", got)
	}
	code, out = runIn(t, t.TempDir(), kpipeBin(t), "edit", "set", "namespace", "x")
	if code == 0 || !strings.Contains(out, "missing kustomization file") {
		t.Errorf("no kustomization: exit %d, output %q", code, out)
	}
}

// argoSemver is the semantic-version pattern Argo CD (util/kustomize)
// applies to `kustomize version --short` after trimming the braces
// (Masterminds semver's pattern).
var argoSemver = regexp.MustCompile(`v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?` +
	`(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?` +
	`(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?`)

// argoVersion parses version output the way Argo CD's Version(true) does.
func argoVersion(out string) []string {
	v := strings.TrimSpace(out)
	v = strings.TrimSuffix(strings.TrimPrefix(v, "{"), "}")
	v = strings.TrimSpace(v)
	v = strings.ReplaceAll(v, "  ", " ")
	v = strings.TrimPrefix(v, "kustomize/")
	return argoSemver.FindStringSubmatch(v)
}

func TestVersionShortArgoCD(t *testing.T) {
	code, out, errOut := kpipe(t, "version", "--short")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m := argoVersion(out)
	if m == nil || "v"+m[1]+m[2]+m[3] != engine.KustomizeVersion {
		t.Fatalf("Argo CD's pattern on %q gives %q, want %s", out, m, engine.KustomizeVersion)
	}
	if !strings.HasPrefix(m[0], engine.KustomizeVersion+"+kpipe.") {
		t.Errorf("version %q lacks kpipe's build metadata", m[0])
	}
	if !strings.Contains(errOut, "deprecated") {
		t.Errorf("no deprecation warning on stderr: %q", errOut)
	}
}

// TestVersionShortShape: kpipe's --short output has the shape of
// kustomize v5.8.2's, and Argo CD's parsing reads kustomize's as v5.8.2.
func TestVersionShortShape(t *testing.T) {
	bin := kustomize582(t)
	_, out, _ := kpipe(t, "version", "--short")
	ko, err := exec.Command(bin, "version", "--short").Output()
	if err != nil {
		t.Fatal(err)
	}
	if km := argoVersion(string(ko)); km == nil || km[0] != "v5.8.2" {
		t.Errorf("kustomize's --short %q parses as %q", ko, km)
	}
	shape := regexp.MustCompile(`^\{v[0-9.]+\S*  unknown   \}\n$`)
	if !shape.MatchString(string(ko)) || !shape.MatchString(out) {
		t.Errorf("shapes differ: kustomize %q, kpipe %q", ko, out)
	}
}

func TestVersionForms(t *testing.T) {
	code, out, _ := kpipe(t, "version")
	if code != 0 || !regexp.MustCompile(`^`+regexp.QuoteMeta(engine.KustomizeVersion)+`\+kpipe\.[0-9A-Za-z.-]+\n$`).MatchString(out) {
		t.Errorf("version: exit %d, %q", code, out)
	}
	code, out, _ = kpipe(t, "version", "-o", "json")
	if code != 0 || !strings.Contains(out, `"version": "`+engine.KustomizeVersion+`+kpipe.`) || !strings.Contains(out, `"goOs": `) {
		t.Errorf("json: exit %d, %q", code, out)
	}
	code, out, _ = kpipe(t, "version", "--output", "yaml")
	if code != 0 || !strings.HasPrefix(out, "version: "+engine.KustomizeVersion+"+kpipe.") || !strings.Contains(out, "\ngitCommit: unknown\n") {
		t.Errorf("yaml: exit %d, %q", code, out)
	}
	if code, _, _ = kpipe(t, "version", "-o", "xml"); code == 0 {
		t.Error("-o xml accepted")
	}
}

// TestEditOtherFileNames: kustomization.yml and Kustomization are edited
// in place, as kustomize edits them.
func TestEditOtherFileNames(t *testing.T) {
	kz := []string{kustomize582(t)}
	for _, name := range []string{"kustomization.yml", "Kustomization"} {
		var got [2][]byte
		for i, bin := range [][]string{kz, kpipeBin(t)} {
			dir := t.TempDir()
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte("# c\nresources: []\nnamespace: a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, out := runIn(t, dir, bin, "edit", "set", "image", "x:1"); code != 0 {
				t.Fatalf("%v on %s: %s", bin, name, out)
			}
			got[i], _ = os.ReadFile(p)
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("%s: %d files in the directory", name, len(entries))
			}
		}
		if !bytes.Equal(got[0], got[1]) {
			t.Errorf("%s: kustomize\n%s\nkpipe\n%s", name, got[0], got[1])
		}
	}
}
