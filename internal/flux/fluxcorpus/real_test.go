package fluxcorpus

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestRealCorpus runs the cases of the real repositories, and of flux2's
// own build-kustomization test data, of the reference corpus ($KPIPE_FLUX_CORPUS, e.g. /work/ref/flux-corpus, whose cases run in
// the repositories checked out beside it) and reports, per outcome class,
// how many reproduce flux's output byte for byte; with
// $KPIPE_FLUX_CORPUS_REPORT it writes the misses there. It fails when a
// case misses for a reason no class names.
//
//	KPIPE_FLUX_CORPUS=/work/ref/flux-corpus go test ./internal/flux/fluxcorpus -run RealCorpus -v -timeout 30m
func TestRealCorpus(t *testing.T) {
	corpus := os.Getenv("KPIPE_FLUX_CORPUS")
	if corpus == "" {
		t.Skip("set KPIPE_FLUX_CORPUS to the reference corpus directory (e.g. /work/ref/flux-corpus)")
	}
	kustomize := kustomizeCommand(t)
	dirs, err := filepath.Glob(filepath.Join(corpus, "cases", "*", "*", "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{kustomize: kustomize, origin: filepath.Dir(filepath.Clean(corpus)), mirror: t.TempDir(), copied: map[string]bool{}}
	type result struct {
		c *fluxCase
		o outcome
	}
	var results []result
	filter := os.Getenv("KPIPE_FLUX_CORPUS_CASES") // a substring of repo/case
	for _, f := range dirs {
		c, err := readCase(filepath.Dir(f))
		if err != nil {
			t.Fatal(err)
		}
		if c.Repo == "synthetic" || c.Status == "skipped" {
			continue
		}
		if filter != "" && !strings.Contains(c.Repo+"/"+c.Case, filter) {
			continue
		}
		var o outcome
		if c.NetworkDependent {
			o = e.runNetwork(t, c, c.Cwd, c.Root)
		} else {
			o = e.run(t, c, c.Cwd, c.Root)
		}
		results = append(results, result{c, o})
	}
	counts := map[string]map[string]int{} // variant/status -> class -> n
	var report strings.Builder
	for _, r := range results {
		key := r.c.Variant + "/" + r.c.Status
		if counts[key] == nil {
			counts[key] = map[string]int{}
		}
		counts[key][r.o.class]++
		if r.o.class != classMatch {
			fmt.Fprintf(&report, "== %s/%s [%s] %s\n%s\n\n", r.c.Repo, r.c.Case, r.c.Status, r.o.class, r.o.detail)
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		total := 0
		for _, n := range counts[k] {
			total += n
		}
		t.Logf("%s: %d cases: %v (match %d/%d = %.1f%%)", k, total, counts[k], counts[k][classMatch], total, 100*float64(counts[k][classMatch])/float64(total))
	}
	if p := os.Getenv("KPIPE_FLUX_CORPUS_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(report.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range results {
		if r.o.class == classMiss {
			t.Errorf("%s/%s: %s", r.c.Repo, r.c.Case, firstLine(r.o.detail))
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
