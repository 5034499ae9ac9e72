package fluxcorpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
)

// TestRealCorpus runs the cases of the real repositories, and of flux2's
// own build-kustomization test data, of the reference corpus
// ($KPIPE_FLUX_CORPUS, e.g. /work/ref/flux-corpus, whose cases run in the
// repositories checked out beside it) through `kpipe flux build
// kustomization` in-process, and fails on any case whose stdout, stderr or
// exit status is not flux's (network cases: the exit status only; live
// cases: refused). Every case runs three times: without a cache, with an
// empty one, and again with it (the Flux Kustomization's record: nothing
// built). With $KPIPE_FLUX_CORPUS_REPORT it writes the misses
// there; $KPIPE_FLUX_CORPUS_CASES (a substring of repo/case) selects
// cases.
//
//	KPIPE_FLUX_CORPUS=/work/ref/flux-corpus go test ./internal/flux/fluxcorpus -run RealCorpus -v -timeout 30m
func TestRealCorpus(t *testing.T) {
	corpus := os.Getenv("KPIPE_FLUX_CORPUS")
	if corpus == "" {
		t.Skip("set KPIPE_FLUX_CORPUS to the reference corpus directory (e.g. /work/ref/flux-corpus)")
	}
	dirs, err := filepath.Glob(filepath.Join(corpus, "cases", "*", "*", "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	filter := os.Getenv("KPIPE_FLUX_CORPUS_CASES")
	counts := tally{}
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	defer store.Close()
	var report strings.Builder
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
		o := run(t, c, c.Cwd, c.Root)
		for _, pass := range []string{"cold cache", "warm cache"} {
			if o.class == classMatch {
				if p := runWith(t, c, c.Cwd, c.Root, store); p.class != classMatch {
					o = outcome{class: p.class, detail: pass + ": " + p.detail}
				}
			}
		}
		counts.add(c.Variant+"/"+c.Status, o.class)
		if o.class == classMiss {
			fmt.Fprintf(&report, "== %s/%s [%s]\n%s\n\n", c.Repo, c.Case, c.Status, o.detail)
			t.Errorf("%s/%s: %s", c.Repo, c.Case, firstLine(o.detail))
		}
	}
	counts.log(t)
	if p := os.Getenv("KPIPE_FLUX_CORPUS_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(report.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
