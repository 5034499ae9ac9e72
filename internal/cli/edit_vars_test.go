package cli

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// treeCopy copies the directory src into a new directory and returns it.
func treeCopy(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	copyTree(t, src, dst)
	return dst
}

// treeFiles reads every file under dir, by slash path.
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// runSplit runs bin with args in dir and returns the exit status, stdout
// and stderr.
func runSplit(t *testing.T, dir string, bin []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin[0], append(bin[1:], args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KPIPE_TEST_AS_KPIPE=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stdout.String(), stderr.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// logTime is the date and time Go's log package puts before a line
// (kustomize's log.Printf messages).
var logTime = regexp.MustCompile(`(?m)^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d `)

// neverReplaced is kustomize build's log line about unused vars.
var neverReplaced = regexp.MustCompile(`(?m)^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d well-defined vars that were never replaced: .*\n`)

// fixStdout is what `edit fix` prints on stdout, with the name of the
// build command and the text of a build error (kpipe's own) left out.
func fixStdout(s string) string {
	s = strings.ReplaceAll(s, "`kustomize build`", "`kpipe build`")
	if before, _, ok := strings.Cut(s, "now produces the error when running `kpipe build`: "); ok {
		s = before + "now produces the error when running `kpipe build`: ..."
	}
	return s
}

// TestEditFixVarsDifferential runs `edit fix --vars` with kustomize
// v5.8.2 and kpipe on copies of each tree under testdata/edit/vars: every
// file of the tree (the kustomization and the resource files rewritten
// with VAR_PLACEHOLDER) must come out byte-identical, with the same exit
// status, the same stderr and the same stdout (but for the build command's
// name and the text of its error, kpipe's own).
func TestEditFixVarsDifferential(t *testing.T) {
	kz := []string{kustomize582(t)}
	kp := kpipeBin(t)
	trees, err := filepath.Glob(filepath.Join("testdata", "edit", "vars", "*"))
	if err != nil || len(trees) == 0 {
		t.Fatalf("no trees under testdata/edit/vars: %v", err)
	}
	for _, tree := range trees {
		for _, args := range [][]string{{"edit", "fix", "--vars"}, {"edit", "fix"}} {
			t.Run(filepath.Base(tree)+"/"+strings.Join(args, " "), func(t *testing.T) {
				t.Parallel()
				dk, dp := treeCopy(t, tree), treeCopy(t, tree)
				ck, ok, ek := runSplit(t, dk, kz, args...)
				cp, op, ep := runSplit(t, dp, kp, args...)
				if ck != cp {
					t.Fatalf("kustomize exit %d (%s%s), kpipe exit %d (%s%s)", ck, ok, ek, cp, op, ep)
				}
				if ck == 0 {
					if fixStdout(ok) != fixStdout(op) {
						t.Errorf("stdout differs\nkustomize:\n%s\nkpipe:\n%s", ok, op)
					}
					// kpipe build does not print kustomize's log line about
					// vars defined but never replaced (a gap of its own).
					ek = neverReplaced.ReplaceAllString(ek, "")
					if ek != ep {
						t.Errorf("stderr differs\nkustomize:\n%s\nkpipe:\n%s", ek, ep)
					}
				}
				fk, fp := treeFiles(t, dk), treeFiles(t, dp)
				for name, want := range fk {
					if got, ok := fp[name]; !ok || got != want {
						t.Errorf("%s differs\nkustomize:\n%s\nkpipe:\n%s", name, want, got)
					}
				}
				if len(fk) != len(fp) {
					t.Errorf("kustomize left %d files, kpipe %d", len(fk), len(fp))
				}
			})
		}
	}
}

// TestEditFixVarsOutsideTheDirectory: kustomize rewrites a base's files
// at ../base; kpipe writes only under the directory it edits, so it
// refuses, naming the file, and changes nothing.
func TestEditFixVarsOutsideTheDirectory(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"base/kustomization.yaml":    "resources:\n- cm.yaml\n",
		"base/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: $(X)\n",
		"overlay/kustomization.yaml": "resources:\n- ../base\nvars:\n- name: X\n  objref:\n    apiVersion: v1\n    kind: ConfigMap\n    name: cm\n",
	})
	before := treeFiles(t, root)
	code, out, errOut := runSplit(t, filepath.Join(root, "overlay"), kpipeBin(t), "edit", "fix", "--vars")
	if code == 0 || !strings.Contains(errOut, filepath.Join(root, "base", "cm.yaml")) || !strings.Contains(errOut, "outside") {
		t.Errorf("exit %d, want an error naming base/cm.yaml as outside the directory:\n%s%s", code, out, errOut)
	}
	after := treeFiles(t, root)
	for name, want := range before {
		if after[name] != want {
			t.Errorf("%s changed:\n%s", name, after[name])
		}
	}
}

// TestEditFixVarsJSONPatchOfOneOperation: a JSON 6902 patch file of one
// operation using a var is converted with the patch's target (kustomize
// v5.8.2 panics there, reading the list as an object).
func TestEditFixVarsJSONPatchOfOneOperation(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"kustomization.yaml": "resources:\n- deploy.yaml\npatches:\n- path: ops.yaml\n  target:\n    kind: Deployment\n    name: app\nvars:\n- name: V\n  objref:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: app\n",
		"deploy.yaml":        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n",
		"ops.yaml":           "- op: add\n  path: /metadata/annotations\n  value:\n    v: $(V)\n",
	})
	if code, out, errOut := runSplit(t, dir, kpipeBin(t), "edit", "fix", "--vars"); code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	files := treeFiles(t, dir)
	want := "replacements:\n- source:\n    group: apps\n    kind: Deployment\n    name: app\n    version: v1\n  targets:\n  - fieldPaths:\n    - 0.value.v\n    select:\n      kind: Deployment\n      name: app\n"
	if !strings.HasSuffix(files["kustomization.yaml"], want) {
		t.Errorf("kustomization.yaml does not end with\n%s\n:\n%s", want, files["kustomization.yaml"])
	}
	if files["ops.yaml"] != "- op: add\n  path: /metadata/annotations\n  value:\n    v: V_PLACEHOLDER\n" {
		t.Errorf("ops.yaml:\n%s", files["ops.yaml"])
	}
}
