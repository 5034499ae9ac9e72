package fluxcorpus

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/flux"
)

// knownMisses are the testdata cases whose flux output kpipe's pieces do
// not reproduce when kustomize v5.8.2 builds, and why. A case listed here
// that comes to match fails the test, so that the list stays true.
var knownMisses = map[string]struct{ class, why string }{
	"synthetic/statefulset-vct-labels.r0": {classMiss, "kustomize v5.8.1 (Flux's) labels a StatefulSet's volumeClaimTemplates with labels[].includeTemplates; v5.8.2 (the reference here) does not"},
	"synthetic/image-invalid-regexp.r0":   {classMiss, "kustomize v5.8.1 panics on an image name that is not a valid regular expression (flux: recovered from kustomize build panic); v5.8.2 treats it as no match and builds"},
	"synthetic/yaml-inf.r0":               {classKustomizeError, "a .inf value: kustomize fails writing its output, flux fails writing its own after the owner labels, so its message shows them (phase 2: the engine hands the objects over without writing them)"},
}

// TestCases runs the corpus cases kept in testdata (the synthetic trap
// cases, with flux's argv, stdout and stderr; flux2's own
// build-kustomization test data is run by TestRealCorpus, from the
// reference corpus: fetched files are not committed) through Find, Generate, a kustomize binary and the
// post-build steps, and compares with flux's output: stdout byte for byte,
// or the error message.
func TestCases(t *testing.T) {
	kustomize := kustomizeCommand(t)
	inputs, err := filepath.Abs("testdata/inputs")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob("testdata/cases/*/*/case.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 80 {
		t.Fatalf("only %d cases in testdata/cases", len(dirs))
	}
	e := &env{kustomize: kustomize, origin: inputs, mirror: t.TempDir(), copied: map[string]bool{}}
	counts := map[string]int{}
	for _, f := range dirs {
		c, err := readCase(filepath.Dir(f))
		if err != nil {
			t.Fatal(err)
		}
		// The corpus ran in /work/ref/flux-corpus/inputs/<repo>/...
		_, rel, ok := strings.Cut(c.Cwd, "/inputs/")
		if !ok {
			t.Fatalf("%s: cwd %s is not under inputs/", f, c.Cwd)
		}
		_, rootRel, _ := strings.Cut(c.Root, "/inputs/")
		name := c.Repo + "/" + c.Case
		if save := os.Getenv("KPIPE_FLUX_SAVE_KUSTOMIZED"); save != "" {
			e.saveKustomized = func(k *flux.Kustomization, out []byte) {
				d := filepath.Join(save, c.Repo, c.Case)
				os.MkdirAll(d, 0o755)
				os.WriteFile(filepath.Join(d, "kustomized.yaml"), out, 0o644)
			}
		}
		var o outcome
		if c.NetworkDependent {
			o = e.runNetwork(t, c, filepath.Join(inputs, rel), filepath.Join(inputs, rootRel))
		} else {
			o = e.run(t, c, filepath.Join(inputs, rel), filepath.Join(inputs, rootRel))
		}
		counts[o.class]++
		want, known := knownMisses[name]
		switch {
		case known && o.class != want.class:
			t.Errorf("%s: %s, known as %s (%s)\n%s", name, o.class, want.class, want.why, o.detail)
		case known:
			t.Logf("%s: known: %s", name, want.why)
		case o.class == classMiss || o.class == classKustomizeError:
			t.Errorf("%s: %s\n%s", name, o.class, o.detail)
		}
	}
	classes := make([]string, 0, len(counts))
	for k := range counts {
		classes = append(classes, k)
	}
	sort.Strings(classes)
	for _, k := range classes {
		t.Logf("%s: %d", k, counts[k])
	}
}
