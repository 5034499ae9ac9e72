package cli

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fidelityDir holds small kustomization roots that exercise null, `~`,
// bare (`x:`) and empty values through every transformer, and scalar
// shapes through the output emitter; see its README.
const fidelityDir = "testdata/fidelity"

// fidelityCases lists the roots under testdata/fidelity.
func fidelityCases(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(fidelityDir)
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), "_") {
			roots = append(roots, e.Name())
		}
	}
	if len(roots) < 100 {
		t.Fatalf("only %d roots in %s", len(roots), fidelityDir)
	}
	return roots
}

// TestFidelityCases builds every root under testdata/fidelity and compares
// the output with kustomize v5.8.2's, recorded beside it (want.yaml), or
// requires the failure kustomize reports (want.err). It needs no
// kustomize; TestFidelityDifferential checks the recordings.
func TestFidelityCases(t *testing.T) {
	for _, name := range fidelityCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // builds read the tree only
			root := filepath.Join(fidelityDir, name)
			code, got, stderr := kpipe(t, "build", root, "--no-cache")
			if want, err := os.ReadFile(filepath.Join(root, "want.yaml")); err == nil {
				if code != 0 {
					t.Fatalf("exit %d, kustomize builds it:\n%s", code, stderr)
				}
				if got != string(want) {
					t.Errorf("output differs from kustomize's (want.yaml)\n--- kpipe\n%s\n--- kustomize\n%s", got, want)
				}
				return
			}
			want, err := os.ReadFile(filepath.Join(root, "want.err"))
			if err != nil {
				t.Fatal(err)
			}
			msg := strings.TrimSpace(string(want))
			if code == 0 {
				t.Fatalf("kpipe built it; kustomize fails with %q; kpipe printed:\n%s", msg, got)
			}
			if !strings.Contains(stderr, msg) {
				t.Errorf("error message %q does not contain kustomize's %q", stderr, msg)
			}
		})
	}
}

// kustomize582 finds kustomize v5.8.2, the version kpipe matches: where CI
// installs it, on PATH or in ~/go/bin. Other versions do not count.
func kustomize582(t *testing.T) string {
	t.Helper()
	var candidates []string
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates,
			filepath.Join(home, ".cache", "kpipe-ci", "kustomize-v5.8.2", "kustomize"),
			filepath.Join(home, "go", "bin", "kustomize"))
	}
	if p, err := exec.LookPath("kustomize"); err == nil {
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		out, err := exec.Command(p, "version").Output()
		if err == nil && strings.TrimSpace(string(out)) == "v5.8.2" {
			return p
		}
	}
	t.Skip("kustomize v5.8.2 not installed (go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.2): differential test skipped")
	return ""
}

// TestFidelityDifferential runs kustomize v5.8.2 and kpipe on every root
// under testdata/fidelity and requires the same bytes, or both to fail
// with kpipe's message containing kustomize's; it also requires the
// recordings TestFidelityCases uses to be what kustomize prints today.
func TestFidelityDifferential(t *testing.T) {
	kz := kustomize582(t)
	for _, name := range fidelityCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // builds read the tree only
			root := filepath.Join(fidelityDir, name)
			cmd := exec.Command(kz, "build", root)
			var kerr bytes.Buffer
			cmd.Stderr = &kerr
			want, err := cmd.Output()
			code, got, stderr := kpipe(t, "build", root, "--no-cache")
			var exitErr *exec.ExitError
			switch {
			case err == nil:
				if code != 0 {
					t.Fatalf("kpipe: exit %d, kustomize builds it:\n%s", code, stderr)
				}
				if got != string(want) {
					t.Errorf("output differs\n--- kpipe\n%s\n--- kustomize\n%s", got, want)
				}
				if rec, _ := os.ReadFile(filepath.Join(root, "want.yaml")); !bytes.Equal(rec, want) {
					t.Errorf("want.yaml is stale: kustomize now prints\n%s", want)
				}
			case errors.As(err, &exitErr):
				msg := ""
				for _, line := range strings.Split(kerr.String(), "\n") {
					if m, ok := strings.CutPrefix(line, "Error: "); ok {
						msg = m
					}
				}
				if code == 0 {
					t.Fatalf("kpipe built it; kustomize fails with %q", msg)
				}
				if !strings.Contains(stderr, msg) {
					t.Errorf("kpipe's error %q does not contain kustomize's %q", stderr, msg)
				}
				if rec, _ := os.ReadFile(filepath.Join(root, "want.err")); strings.TrimSpace(string(rec)) != msg {
					t.Errorf("want.err is stale: kustomize now fails with %q", msg)
				}
			default:
				t.Fatalf("running kustomize: %v", err)
			}
		})
	}
}

// TestFidelityRandomNulls writes small trees at random (fixed seed): a
// Deployment whose fields are absent, bare (`x:`), null, `~`, {}, [] or ""
// at random, and a kustomization with a random choice of namespace, prefix,
// labels, annotations, build metadata and images, and up to three patches
// (strategic-merge patches that set fields to null, bare or empty values,
// delete or replace list elements and maps; JSON patches that add to,
// remove or replace the maps). kustomize v5.8.2 and kpipe must print the
// same bytes, or both fail with kpipe's message containing kustomize's.
func TestFidelityRandomNulls(t *testing.T) {
	kz := kustomize582(t)
	rng := rand.New(rand.NewSource(14))
	n := 80
	if testing.Short() {
		n = 20
	}
	// The trees are drawn in order (the seed fixes them), then built in
	// parallel: each is its own directory.
	trees := make([]map[string]string, n)
	for i := range trees {
		trees[i] = map[string]string{"r.yaml": randomDeployment(rng), "kustomization.yaml": randomKustomization(rng)}
	}
	for i, files := range trees {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(kz, "build", root)
			var kerr bytes.Buffer
			cmd.Stderr = &kerr
			want, err := cmd.Output()
			code, got, stderr := kpipe(t, "build", root, "--no-cache")
			desc := func() string {
				return fmt.Sprintf("tree %d\n--- r.yaml\n%s--- kustomization.yaml\n%s", i, files["r.yaml"], files["kustomization.yaml"])
			}
			if err != nil {
				msg := strings.TrimSpace(strings.TrimPrefix(kerr.String(), "Error: "))
				msg, _, _ = strings.Cut(msg, "\n")
				if code == 0 || !strings.Contains(stderr, msg) {
					t.Errorf("kustomize fails with %q; kpipe: exit %d, %s\n%s", msg, code, stderr, desc())
				}
				return
			}
			if code != 0 || got != string(want) {
				t.Errorf("kpipe (exit %d) differs from kustomize\n%s\n--- kpipe\n%s%s\n--- kustomize\n%s", code, desc(), got, stderr, want)
			}
		})
	}
}

func pick(rng *rand.Rand, choices ...string) string { return choices[rng.Intn(len(choices))] }

// randomDeployment writes a Deployment with null and empty values at
// random.
func randomDeployment(rng *rand.Rand) string {
	v := func() string { return pick(rng, "", " null", " ~", " {}", " []", ` ""`) }
	m := func(full string) string { return pick(rng, "", " null", " {}", full) }
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n" +
		"  labels:" + m(" {app: a}") + "\n" +
		"  annotations:" + m(" {note: n}") + "\n" +
		"spec:\n  replicas:" + pick(rng, "", " null", " 2") + "\n" +
		"  selector:\n    matchLabels:" + m(" {app: a}") + "\n" +
		"  strategy:" + v() + "\n" +
		"  template:\n    metadata:\n      labels:" + m(" {app: a}") + "\n      annotations:" + v() + "\n" +
		"    spec:\n      nodeSelector:" + v() + "\n" +
		"      affinity:\n        nodeAffinity:" + pick(rng, "", " null", " {}") + "\n" +
		"        podAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:" + v() + "\n" +
		"      containers:\n      - name: c\n        image: nginx\n        resources:" + v() + "\n" +
		"        env:" + pick(rng, "", " null", " []", " [{name: A, value: b}]") + "\n" +
		"        ports:\n        - containerPort: 80\n          protocol:" + pick(rng, "", " null", " TCP") + "\n" +
		"      - name: s\n        image: side\n        args:" + pick(rng, "", " null", " []", " [a, '', null]") + "\n" +
		"      volumes:\n      - name: v\n        emptyDir:" + pick(rng, "", " null", " {}") + "\n"
}

// randomKustomization writes a kustomization for r.yaml with random
// transformers and patches.
func randomKustomization(rng *rand.Rand) string {
	var b strings.Builder
	b.WriteString("resources: [r.yaml]\n")
	for _, f := range rng.Perm(7)[:rng.Intn(4)] {
		b.WriteString([]string{
			"namespace: ns1\n",
			"namePrefix: p-\n",
			"labels:\n- pairs: {lab: l}\n  includeSelectors: " + pick(rng, "true", "false") + "\n",
			"commonAnnotations: {ann: a}\n",
			"buildMetadata: [originAnnotations, transformerAnnotations]\n",
			"images:\n- name: nginx\n  newTag: v2\n",
			"commonLabels: {cl: c}\n",
		}[f])
	}
	n := rng.Intn(4)
	if n > 0 {
		b.WriteString("patches:\n")
	}
	indent := func(s string) string {
		return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
	}
	for i := 0; i < n; i++ {
		if rng.Intn(2) == 0 {
			b.WriteString("- target: {kind: Deployment}\n  patch: |-\n" + indent(pick(rng,
				"- op: add\n  path: /metadata/annotations/x\n  value: z",
				"- op: add\n  path: /metadata/labels/x\n  value: z",
				"- op: add\n  path: /metadata/annotations\n  value: {}",
				"- op: remove\n  path: /metadata/annotations",
				"- op: replace\n  path: /spec/strategy\n  value: {}",
				"- op: add\n  path: /spec/template/spec/nodeSelector\n  value: null",
			)))
			continue
		}
		p := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"
		if rng.Intn(2) == 0 {
			p += "  annotations:" + pick(rng, "", " null", " {}", " {x: w}", " {note: null}") + "\n"
		}
		if rng.Intn(2) == 0 {
			p += "  labels:" + pick(rng, "", " null", " {}", " {x: w}") + "\n"
		}
		var spec, tmpl string
		if rng.Intn(2) == 0 {
			spec += "  selector:\n    matchLabels:" + pick(rng, "", " null", " {}", " {x: w}") + "\n"
		}
		if rng.Intn(2) == 0 {
			spec += "  strategy:" + pick(rng, "", " null", " {}", " {type: Recreate}") + "\n"
		}
		if rng.Intn(2) == 0 {
			tmpl += "      affinity:\n        nodeAffinity:\n          preferredDuringSchedulingIgnoredDuringExecution: null\n          requiredDuringSchedulingIgnoredDuringExecution:" + pick(rng, "", " null") + "\n"
		}
		switch rng.Intn(4) {
		case 0:
			tmpl += "      containers:\n      - name: c\n        image: j\n        resources:" + pick(rng, "", " null", " {}", " {limits: {cpu: 1}}") + "\n"
		case 1:
			tmpl += "      containers:\n      - name: s\n        $patch: delete\n"
		case 2:
			tmpl += "      volumes:\n      - name: v\n        emptyDir:" + pick(rng, "", " null", " {}") + "\n"
		}
		if rng.Intn(6) == 0 {
			tmpl = "      $patch: replace\n      containers:\n      - name: r\n        image: r\n        env:\n"
		}
		if tmpl != "" {
			spec += "  template:\n    spec:\n" + tmpl
		}
		if spec != "" {
			p += "spec:\n" + spec
		}
		b.WriteString("- patch: |-\n" + indent(p))
	}
	return b.String()
}
