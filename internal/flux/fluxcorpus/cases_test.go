package fluxcorpus

import (
	"path/filepath"
	"strings"
	"testing"
)

// knownMisses are the testdata cases whose flux output kpipe does not
// reproduce, and why. A case listed here that comes to match fails the
// test, so that the list stays true.
var knownMisses = map[string]string{
	"synthetic/yaml-inf.r0": "a .inf value: flux fails converting kustomize's objects to JSON and prints the object as Go's %#v of kustomize's map (with fields kustomize adds to a ConfigMap in memory); kpipe fails as kustomize fails printing it",
}

// TestCases runs the corpus cases kept in testdata (the synthetic trap
// cases, with flux's argv, stdout and stderr; flux2's own
// build-kustomization test data is run by TestRealCorpus, from the
// reference corpus: fetched files are not committed) through `kpipe flux
// build kustomization`, in-process, and compares stdout, stderr and the
// exit status with flux's.
func TestCases(t *testing.T) {
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
	counts := tally{}
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
		o := run(t, c, filepath.Join(inputs, rel), filepath.Join(inputs, rootRel))
		counts.add("synthetic", o.class)
		why, known := knownMisses[name]
		switch {
		case known && o.class != classMiss:
			t.Errorf("%s: %s, listed as a known miss (%s)", name, o.class, why)
		case known:
			t.Logf("%s: known miss: %s", name, why)
		case o.class == classMiss:
			t.Errorf("%s: %s\n%s", name, o.class, o.detail)
		}
	}
	counts.log(t)
}
