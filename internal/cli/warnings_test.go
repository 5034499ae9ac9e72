package cli

import (
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/genrepo"
)

// warningLines are the lines of stderr that are warnings.
func warningLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "Warning") {
			out = append(out, l)
		}
	}
	return out
}

// TestWarningsNameTheirFile: a base with a deprecated field, shared by two
// roots, and a root with one of its own. build-all names the kustomization
// file of each warning, once per file, and the report carries each root's;
// --quiet prints none; diff prints only those of the roots it compared;
// build prints kustomize's words, as kustomize does.
func TestWarningsNameTheirFile(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) { writeFiles(t, dir, map[string]string{rel: s}) }
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n"
	write("base/cm.yaml", strings.ReplaceAll(cm, "%s", "cm"))
	write("base/kustomization.yaml", "resources:\n- cm.yaml\ncommonLabels:\n  team: x\n")
	write("a/kustomization.yaml", "resources:\n- ../base\nnamePrefix: a-\n")
	write("b/kustomization.yaml", "resources:\n- ../base\nnamePrefix: b-\n")
	write("c/cm.yaml", strings.ReplaceAll(cm, "%s", "c"))
	write("c/kustomization.yaml", "bases: []\nresources:\n- cm.yaml\n")
	t.Chdir(dir)

	code, rep, stderr := buildAll(t, ".", t.TempDir(), t.TempDir())
	want := []string{
		"Warning: base/kustomization.yaml: 'commonLabels' is deprecated. Please use 'labels' instead. Run 'kustomize edit fix' to update your Kustomization automatically.",
		"Warning: c/kustomization.yaml: 'bases' is deprecated. Please use 'resources' instead. Run 'kustomize edit fix' to update your Kustomization automatically.",
	}
	if got := warningLines(stderr); code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("build-all: exit %d, warnings:\n%s\nwant:\n%s", code, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	byRoot := map[string][]batch.Warning{}
	for _, rr := range rep.Roots {
		byRoot[rr.Path] = rr.Warnings
	}
	for root, file := range map[string]string{"a": "base/kustomization.yaml", "b": "base/kustomization.yaml", "c": "c/kustomization.yaml"} {
		if ws := byRoot[root]; len(ws) != 1 || ws[0].File != file || !strings.HasSuffix(ws[0].Message, "automatically.") {
			t.Errorf("report: root %s has warnings %+v, want one of %s", root, ws, file)
		}
	}
	if _, _, stderr := buildAll(t, ".", "", t.TempDir(), "--quiet"); len(warningLines(stderr)) != 0 {
		t.Errorf("build-all --quiet printed warnings:\n%s", stderr)
	}
	code, _, stderr = kpipe(t, "build", "--no-cache", "c")
	if code != 0 || strings.Join(warningLines(stderr), "\n") != "# Warning: 'bases' is deprecated. Please use 'resources' instead. Run 'kustomize edit fix' to update your Kustomization automatically." {
		t.Errorf("build: exit %d, want kustomize's warning:\n%s", code, stderr)
	}
	if code, _, stderr = kpipe(t, "build", "--no-cache", "-q", "c"); code != 0 || len(warningLines(stderr)) != 0 {
		t.Errorf("build -q: exit %d, printed warnings:\n%s", code, stderr)
	}

	// A change that reaches c only: diff names c's file, not base's.
	if err := genrepo.InitGit(dir); err != nil {
		t.Fatal(err)
	}
	write("c/cm.yaml", strings.ReplaceAll(cm, "%s", "c2"))
	code, _, stderr = kpipe(t, "diff", "--no-cache", "--base", "HEAD")
	if got := warningLines(stderr); code != 1 || len(got) != 1 || got[0] != want[1] {
		t.Errorf("diff: exit %d, warnings %q, want only %q", code, got, want[1])
	}
	if code, _, stderr = kpipe(t, "diff", "--no-cache", "--base", "HEAD", "--quiet"); code != 1 || len(warningLines(stderr)) != 0 {
		t.Errorf("diff --quiet: exit %d, printed warnings:\n%s", code, stderr)
	}
}
