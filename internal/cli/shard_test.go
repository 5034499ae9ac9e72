package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/genrepo"
)

// shardRun runs build-all in tree (the current directory) with --shard,
// writing to out and to a report file it returns with the parsed report.
func shardRun(t *testing.T, cacheDir, out string, extra ...string) (batch.Report, string) {
	t.Helper()
	rep := filepath.Join(out + "-report.json")
	code, _, stderr := kpipe(t, append([]string{"build-all", ".", "--out-dir", out, "--report", rep, "--cache-dir", cacheDir}, extra...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s", extra, code, stderr)
	}
	var r batch.Report
	data, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r, rep
}

// For n = 1..8, the shards 1/n..n/n together write exactly the outputs of
// one full build-all, each root once; kpipe report merge joins their
// reports into one with every root once.
func TestBuildAllShards(t *testing.T) {
	tree := checkout(t, genrepo.Spec{Apps: 7, Envs: 3, ResourcesPerApp: 1})
	t.Chdir(tree)
	work := t.TempDir()
	cacheDir := filepath.Join(work, "cache")
	full, _ := shardRun(t, cacheDir, filepath.Join(work, "full"))
	want := rendered(t, filepath.Join(work, "full"))
	var wantRoots []string
	for _, rr := range full.Roots {
		wantRoots = append(wantRoots, rr.Path)
	}
	sort.Strings(wantRoots)
	if len(want) != 21 || len(wantRoots) != 21 {
		t.Fatalf("full build: %d outputs, %d roots", len(want), len(wantRoots))
	}
	for n := 1; n <= 8; n++ {
		union := map[string]string{}
		var reports []string
		for i := 1; i <= n; i++ {
			out := filepath.Join(work, fmt.Sprintf("n%d-s%d", n, i))
			r, rep := shardRun(t, cacheDir, out, "--shard", fmt.Sprintf("%d/%d", i, n))
			if r.Shard != fmt.Sprintf("%d/%d", i, n) || r.Summary.Roots != len(r.Roots) {
				t.Errorf("shard %d/%d: report says shard %q, %d roots, %d entries", i, n, r.Shard, r.Summary.Roots, len(r.Roots))
			}
			reports = append(reports, rep)
			for name, content := range rendered(t, out) {
				if _, twice := union[name]; twice {
					t.Errorf("n=%d: %s written by two shards", n, name)
				}
				union[name] = content
			}
		}
		if !equalMaps(union, want) {
			t.Errorf("n=%d: the shards wrote %d outputs, the full build %d (or their bytes differ)", n, len(union), len(want))
		}
		code, stdout, stderr := kpipe(t, append([]string{"report", "merge"}, reports...)...)
		if code != 0 {
			t.Fatalf("n=%d: report merge: exit %d\n%s", n, code, stderr)
		}
		var merged batch.Report
		if err := json.Unmarshal([]byte(stdout), &merged); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, rr := range merged.Roots {
			got = append(got, rr.Path)
		}
		if strings.Join(got, "\n") != strings.Join(wantRoots, "\n") || merged.Summary.Roots != len(wantRoots) {
			t.Errorf("n=%d: merged report has roots %v (summary %d), want %v", n, got, merged.Summary.Roots, wantRoots)
		}
		if n > 1 {
			// A missing shard is an error naming it.
			code, _, stderr := kpipe(t, append([]string{"report", "merge"}, reports[1:]...)...)
			if code == 0 || !strings.Contains(stderr, fmt.Sprintf("shards missing: 1/%d", n)) {
				t.Errorf("n=%d: merge without shard 1: exit %d, %s", n, code, stderr)
			}
		}
	}
}

// Adding a root moves no other root between shards, and a shard with no
// root is a successful, empty run.
func TestBuildAllShardsStable(t *testing.T) {
	tree := checkout(t, genrepo.Spec{Apps: 5, Envs: 2})
	t.Chdir(tree)
	work := t.TempDir()
	assign := func() map[string]int {
		m := map[string]int{}
		for i := 1; i <= 4; i++ {
			r, _ := shardRun(t, filepath.Join(work, "cache"), filepath.Join(work, fmt.Sprint(len(m), "-", i)), "--shard", fmt.Sprintf("%d/4", i))
			for _, rr := range r.Roots {
				m[rr.Path] = i
			}
		}
		return m
	}
	before := assign()
	for i := range 5 {
		d := filepath.Join(tree, "apps", "app000", fmt.Sprint("extra", i))
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "kustomization.yaml"), []byte("resources:\n- ../base\nnamePrefix: x-\n"), 0o644)
	}
	after := assign()
	if len(after) != len(before)+5 {
		t.Fatalf("%d roots after adding 5 to %d", len(after), len(before))
	}
	for root, s := range before {
		if after[root] != s {
			t.Errorf("%s moved from shard %d to %d when roots were added", root, s, after[root])
		}
	}

	one := checkout(t, genrepo.Spec{Apps: 1, Envs: 1})
	t.Chdir(one)
	empty := 0
	for i := 1; i <= 2; i++ {
		r, _ := shardRun(t, filepath.Join(work, "cache"), filepath.Join(work, fmt.Sprint("one-", i)), "--shard", fmt.Sprintf("%d/2", i))
		if len(r.Roots) == 0 {
			empty++
		}
	}
	if empty != 1 {
		t.Errorf("one root over two shards: %d empty shards, want 1", empty)
	}
	code, _, stderr := kpipe(t, "build-all", ".", "--shard", "3/2")
	if code == 0 || !strings.Contains(stderr, "1 <= I <= N") {
		t.Errorf("--shard 3/2: exit %d, %s", code, stderr)
	}
}
