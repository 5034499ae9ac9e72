package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/genrepo"
)

// realisticSpec is a tree shaped as real repositories are: many roots,
// overlays and components whose kustomization files are the same bytes
// and whose same-named patch and generator files differ (regions, tuning
// components), a secret generator, and bases reached at several depths
// (genrepo.Spec).
var realisticSpec = genrepo.Spec{Apps: 4, Envs: 2, ResourcesPerApp: 2, Regions: 3, Clusters: 4}

// noCacheOutputs renders tree with --no-cache into a new directory and
// returns the outputs.
func noCacheOutputs(t *testing.T, tree string) map[string]string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "nocache")
	t.Chdir(tree)
	if code, _, stderr := kpipe(t, "build-all", ".", "--out-dir", out, "--no-cache"); code != 0 {
		t.Fatalf("--no-cache: exit %d\n%s", code, stderr)
	}
	return rendered(t, out)
}

// On a realistic tree, every promise of the cache holds: a checkout at
// another path with the same cache builds no node; a runner whose cache
// is warm fills an empty `kpipe cache serve` with --remote-cache-write
// (and sends nothing the second time); a runner with an empty cache then
// builds no node; `kpipe cache push` fills another server as well. Every
// output equals a --no-cache build's.
func TestRealisticTreeFromTheCache(t *testing.T) {
	// (Started first: the servers' binaries are built from this
	// directory.)
	srv := startServe(t, filepath.Join(t.TempDir(), "store"))
	srv2 := startServe(t, filepath.Join(t.TempDir(), "store2"))
	a := checkout(t, realisticSpec)
	want := noCacheOutputs(t, a)
	if len(want) != 4*2+4*3+4 {
		t.Fatalf("%d roots rendered, want %d", len(want), 4*2+4*3+4)
	}
	same := func(who, tree string) {
		t.Helper()
		if got := rendered(t, filepath.Join(tree, "out")); !equalMaps(got, want) {
			t.Errorf("%s: outputs differ from --no-cache's (%d and %d files)", who, len(got), len(want))
		}
	}
	cacheA := t.TempDir()
	code, r, stderr := runnerBuild(t, a, cacheA)
	if code != 0 || r.Summary.NodesBuilt == 0 {
		t.Fatalf("runner A, cold: exit %d, %d nodes built\n%s", code, r.Summary.NodesBuilt, stderr)
	}
	same("runner A", a)

	moved := checkout(t, realisticSpec) // the same tree at another path
	code, r, stderr = runnerBuild(t, moved, cacheA)
	if code != 0 || r.Summary.NodesBuilt != 0 || r.Summary.RootsCached != len(want) {
		t.Errorf("the tree at another path: exit %d, %d nodes built, %d of %d roots from the cache\n%s",
			code, r.Summary.NodesBuilt, r.Summary.RootsCached, len(want), stderr)
	}
	same("the tree at another path", moved)

	// Runner A, warm, writes an empty server through.
	remote := []string{"--remote-cache", srv.URL}
	writes := append(remote, "--remote-cache-write", "--remote-cache-sensitive")
	code, r, stderr = runnerBuild(t, a, cacheA, writes...)
	if rs := r.Summary.Remote; code != 0 || r.Summary.NodesBuilt != 0 || rs == nil || rs.Uploads == 0 || rs.Uploads != rs.Checked || rs.Failed {
		t.Fatalf("warm runner A writing: exit %d, %d nodes built, remote %+v\n%s", code, r.Summary.NodesBuilt, rs, stderr)
	}
	uploads := srv.metric(t, `kpipe_cache_uploads_total{kind="ac"}`)
	code, r, _ = runnerBuild(t, a, cacheA, writes...)
	if rs := r.Summary.Remote; code != 0 || rs.Uploads != 0 || rs.Present != rs.Checked || rs.Checked == 0 {
		t.Errorf("runner A again: exit %d, remote %+v; want everything found there, nothing sent", code, rs)
	}
	if got := srv.metric(t, `kpipe_cache_uploads_total{kind="ac"}`); got != uploads {
		t.Errorf("the server got %v records from runner A's second run", got-uploads)
	}

	b := checkout(t, realisticSpec)
	code, r, stderr = runnerBuild(t, b, t.TempDir(), remote...)
	if code != 0 || r.Summary.NodesBuilt != 0 || stagesRan(r) != 0 {
		t.Errorf("runner B, empty cache: exit %d, %d nodes built, %d stages ran\n%s", code, r.Summary.NodesBuilt, stagesRan(r), stderr)
	}
	same("runner B", b)

	// kpipe cache push from A's cache to another empty server.
	t.Chdir(a)
	code, _, stderr = kpipe(t, "cache", "push", ".", "--cache-dir", cacheA, "--remote-cache", srv2.URL, "--remote-cache-sensitive")
	if code != 0 || !strings.Contains(stderr, "pushed 24 roots to "+srv2.URL) || !strings.Contains(stderr, " 0 already there") || !strings.Contains(stderr, "; 0 nodes built;") {
		t.Fatalf("kpipe cache push: exit %d\n%s", code, stderr)
	}
	c := checkout(t, realisticSpec)
	code, r, stderr = runnerBuild(t, c, t.TempDir(), "--remote-cache", srv2.URL)
	if code != 0 || r.Summary.NodesBuilt != 0 {
		t.Errorf("a runner reading what cache push sent: exit %d, %d nodes built\n%s", code, r.Summary.NodesBuilt, stderr)
	}
	same("the runner after cache push", c)
	if code, _, stderr := kpipe(t, "cache", "push", ".", "--cache-dir", cacheA); code != 2 || !strings.Contains(stderr, "needs --remote-cache") {
		t.Errorf("cache push without a remote: exit %d\n%s", code, stderr)
	}
}
