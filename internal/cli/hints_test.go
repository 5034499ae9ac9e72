package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// An error a person can act on leads with one plain line (file:line, what
// is wrong, a hint), then kustomize's wording, which scripts grep for.
func TestErrorsLeadWithAPlainLine(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
	for _, c := range []struct {
		name, kust, first, kustomize string
	}{
		{"swallowed list item", "resources:\n- cm.yaml\n - x.yaml\n",
			"kustomization.yaml:2: resources entry 'cm.yaml - x.yaml' does not exist: it looks like two list items run together",
			"accumulation err='accumulating resources from 'cm.yaml - x.yaml'"},
		{"misspelt file", "namePrefix: p-\nresources:\n- cm.yml\n",
			"kustomization.yaml:3: resources entry 'cm.yml' is neither a file nor a directory; did you mean 'cm.yaml'?",
			"accumulating resources from 'cm.yml'"},
		{"misspelt patch", "resources:\n- cm.yaml\npatches:\n- path: cm-patch.yml\n",
			"kustomization.yaml:4: patches entry 'cm-patch.yml' does not exist; did you mean 'cm-patch.yaml'?",
			"failed to get the patch file from path(cm-patch.yml)"},
		{"unknown field", "resorces:\n- cm.yaml\n",
			"kustomization.yaml:1: unknown field 'resorces'; did you mean 'resources'?",
			`invalid Kustomization: json: unknown field "resorces"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"kustomization.yaml": c.kust, "cm.yaml": cm, "x.yaml": cm, "cm-patch.yaml": cm})
			code, _, errOut := kpipe(t, "build", dir)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if code == 0 || len(lines) != 2 {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if want := "Error: " + filepath.Join(dir, c.first); !strings.HasPrefix(lines[0], want) {
				t.Errorf("first line\n%s\nwant\n%s", lines[0], want)
			}
			if !strings.HasPrefix(lines[1], "Error: ") || !strings.Contains(lines[1], c.kustomize) {
				t.Errorf("second line %q lacks kustomize's wording %q", lines[1], c.kustomize)
			}
		})
	}
}
