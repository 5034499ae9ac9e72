package cli

import (
	"encoding/json"
	"flag"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/genrepo"
	"github.com/kpipe/kpipe/loaders"
)

var mutations = flag.Int("kpipe.cli-mutations", 8, "mutations in TestBuildAllWarmEqualsCold (more: -kpipe.cli-mutations=200)")

// buildAll runs build-all over tree with the given cache directory ("" for
// --no-cache), writing to out, and returns the parsed report.
func buildAll(t *testing.T, tree, cacheDir, out string, extra ...string) (int, batch.Report, string) {
	t.Helper()
	rep := filepath.Join(t.TempDir(), "report.json")
	args := []string{"build-all", tree, "--out-dir", out, "--report", rep}
	if cacheDir == "" {
		args = append(args, "--no-cache")
	} else {
		args = append(args, "--cache-dir", cacheDir)
	}
	code, _, stderr := kpipe(t, append(args, extra...)...)
	var r batch.Report
	data, err := os.ReadFile(rep)
	if err != nil {
		t.Fatalf("no report (exit %d): %v\n%s", code, err, stderr)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return code, r, stderr
}

// outputsUnder reads every file under dir, by path relative to dir.
func outputsUnder(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// upToDate returns the roots the report says were up to date, relative to
// tree.
func upToDate(r batch.Report, tree string) []string {
	var out []string
	for _, rr := range r.Roots {
		if rr.UpToDate {
			rel, _ := filepath.Rel(tree, rr.Path)
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}

func newRepo(t *testing.T) (tree string, roots []string) {
	t.Helper()
	return newRepoOf(t, genrepo.Spec{Apps: 3, Envs: 2, ResourcesPerApp: 2})
}

// newRepoOf writes the monorepo spec describes into a new directory.
func newRepoOf(t *testing.T, spec genrepo.Spec) (tree string, roots []string) {
	t.Helper()
	tree, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots, err = genrepo.Write(tree, spec)
	if err != nil {
		t.Fatal(err)
	}
	return tree, roots
}

// TestBuildAllSkipsUpToDateRoots checks that a second run with nothing
// changed loads no root, and that a change to one app's base rebuilds
// exactly that app's overlays, with the output a run without a cache gives.
func TestBuildAllSkipsUpToDateRoots(t *testing.T) {
	tree, roots := newRepo(t)
	cacheDir, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	code, first, stderr := buildAll(t, tree, cacheDir, out)
	if code != 0 || first.Summary.Roots != len(roots) || first.Summary.UpToDate != 0 {
		t.Fatalf("first run: exit %d, summary %+v\n%s", code, first.Summary, stderr)
	}
	_, second, _ := buildAll(t, tree, cacheDir, out)
	if got := second.Summary.UpToDate; got != len(roots) || second.Summary.NodesBuilt != 0 || second.Summary.Changed != 0 {
		t.Errorf("second run, nothing changed: %d of %d roots up to date, summary %+v", got, len(roots), second.Summary)
	}

	f := filepath.Join(tree, "apps/app001/base/deployment.yaml")
	d, _ := os.ReadFile(f)
	if err := os.WriteFile(f, []byte(strings.Replace(string(d), "cpu: 100m", "cpu: 250m", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, third, _ := buildAll(t, tree, cacheDir, out)
	want := []string{"apps/app000/dev", "apps/app000/staging", "apps/app002/dev", "apps/app002/staging"}
	if got := upToDate(third, tree); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after editing app001's base, up to date: %v, want %v", got, want)
	}
	if third.Summary.Changed != 2 {
		t.Errorf("after editing app001's base, %d outputs changed, want 2", third.Summary.Changed)
	}
	cold := filepath.Join(t.TempDir(), "cold")
	buildAll(t, tree, "", cold)
	if w, c := outputsUnder(t, out), outputsUnder(t, cold); !equalMaps(w, c) {
		t.Errorf("outputs after the edit differ from a build without the cache")
	}

	// A deleted output is written again; a new overlay is found.
	deleted := outputOf(t, third, "apps/app000/dev")
	os.Remove(deleted)
	nd := filepath.Join(tree, "apps/app000/extra-env")
	os.MkdirAll(nd, 0o755)
	os.WriteFile(filepath.Join(nd, "kustomization.yaml"), []byte("resources:\n- ../base\nnamePrefix: x-\n"), 0o644)
	code, fourth, stderr := buildAll(t, tree, cacheDir, out)
	if code != 0 || fourth.Summary.Roots != len(roots)+1 {
		t.Fatalf("after adding an overlay: exit %d, %d roots, want %d\n%s", code, fourth.Summary.Roots, len(roots)+1, stderr)
	}
	if _, err := os.Stat(deleted); err != nil {
		t.Errorf("deleted output not written again: %v", err)
	}
	for _, rr := range fourth.Roots {
		if strings.HasSuffix(rr.Path, "apps/app000/dev") && rr.UpToDate {
			t.Errorf("root whose output was deleted reported up to date")
		}
	}
}

// TestBuildAllSymlinkRetarget checks that pointing a symlinked resource at
// another file rebuilds the root, even when the link's own directory
// listing does not change.
func TestBuildAllSymlinkRetarget(t *testing.T) {
	tree, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(tree, "app")
	os.MkdirAll(filepath.Join(root, "variants"), 0o755)
	os.WriteFile(filepath.Join(root, "variants/a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"), 0o644)
	os.WriteFile(filepath.Join(root, "variants/b.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"), 0o644)
	os.Symlink("variants/a.yaml", filepath.Join(root, "cm.yaml"))
	os.WriteFile(filepath.Join(root, "kustomization.yaml"), []byte("resources:\n- cm.yaml\n"), 0o644)
	cacheDir, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	buildAll(t, tree, cacheDir, out)
	// Retarget: replace the link in place (same name, same directory listing).
	tmp := filepath.Join(root, "variants", "link")
	os.Symlink("b.yaml", tmp)
	os.Remove(tmp)
	os.Remove(filepath.Join(root, "cm.yaml"))
	os.Symlink("variants/b.yaml", filepath.Join(root, "cm.yaml"))
	code, r, stderr := buildAll(t, tree, cacheDir, out)
	if code != 0 || r.Summary.UpToDate != 0 {
		t.Fatalf("exit %d, %d up to date after retargeting the link\n%s", code, r.Summary.UpToDate, stderr)
	}
	got, _ := os.ReadFile(outputOf(t, r, "app"))
	if !strings.Contains(string(got), "name: b") {
		t.Errorf("output after retargeting the link:\n%s", got)
	}
}

// TestBuildAllFailingRoot checks that a failing root is reported while the
// others build, that it is never taken as up to date, and that it builds
// once fixed.
func TestBuildAllFailingRoot(t *testing.T) {
	tree, roots := newRepo(t)
	cacheDir, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	bad := filepath.Join(tree, "apps/app002/staging/resources.yaml")
	good, _ := os.ReadFile(bad)
	os.WriteFile(bad, []byte("- op: [unclosed\n"), 0o644)
	for run := 0; run < 2; run++ {
		code, r, stderr := buildAll(t, tree, cacheDir, out)
		if code != 1 || r.Summary.Failed != 1 || !strings.Contains(stderr, "1 of 6 roots failed") {
			t.Fatalf("run %d: exit %d, summary %+v\n%s", run, code, r.Summary, stderr)
		}
		for _, rr := range r.Roots {
			if strings.HasSuffix(rr.Path, "app002/staging") && (rr.Status != "error" || rr.UpToDate || rr.Output != "") {
				t.Errorf("run %d: failing root reported as %+v", run, rr)
			}
		}
		for name := range outputsUnder(t, out) {
			if strings.HasSuffix(name, "apps/app002/staging.yaml") {
				t.Errorf("run %d: output written for the failing root", run)
			}
		}
	}
	os.WriteFile(bad, good, 0o644)
	code, r, _ := buildAll(t, tree, cacheDir, out)
	if code != 0 || r.Summary.UpToDate != len(roots)-1 {
		t.Errorf("after the fix: exit %d, summary %+v", code, r.Summary)
	}
}

// TestBuildAllWarmEqualsCold mutates a monorepo at random (fixed seed) and
// checks after each change that build-all with the cache writes exactly
// what build-all without it writes, and, every third change, that a copy
// of the tree at another path builds no node and writes the same. The
// tree has overlays and components whose kustomization files are the
// same bytes and whose same-named files differ (genrepo's regions and
// clusters), which the mutations edit half the time.
func TestBuildAllWarmEqualsCold(t *testing.T) {
	tree, _ := newRepoOf(t, genrepo.Spec{Apps: 3, Envs: 2, ResourcesPerApp: 2, Regions: 2, Clusters: 2})
	cacheDir, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	buildAll(t, tree, cacheDir, out)
	rng := rand.New(rand.NewSource(20261124))
	for step := 0; step < *mutations; step++ {
		what, err := genrepo.Mutate(rng, tree)
		if err != nil {
			t.Fatal(err)
		}
		_, warm, _ := buildAll(t, tree, cacheDir, out)
		cold := filepath.Join(t.TempDir(), "cold")
		buildAll(t, tree, "", cold)
		w, c := outputsUnder(t, out), outputsUnder(t, cold)
		if !equalMaps(w, c) {
			for k := range c {
				if w[k] != c[k] {
					t.Fatalf("step %d (%s): %s differs with the cache:\n--- warm\n%s\n--- cold\n%s", step, what, k, w[k], c[k])
				}
			}
			t.Fatalf("step %d (%s): the cache run wrote other files: %d vs %d", step, what, len(w), len(c))
		}
		if warm.Summary.UpToDate == 0 || warm.Summary.UpToDate == warm.Summary.Roots {
			t.Errorf("step %d (%s): %d of %d roots up to date; want the untouched apps only", step, what, warm.Summary.UpToDate, warm.Summary.Roots)
		}
		if step%3 == 2 {
			moved := filepath.Join(t.TempDir(), "moved")
			if out, err := exec.Command("cp", "-r", tree, moved).CombinedOutput(); err != nil {
				t.Skipf("cp -r: %v: %s", err, out)
			}
			movedOut := filepath.Join(t.TempDir(), "moved-out")
			_, r, stderr := buildAll(t, moved, cacheDir, movedOut)
			// (Outputs of roots outside the working directory are named
			// by their absolute paths.)
			m := map[string]string{}
			for k, v := range outputsUnder(t, movedOut) {
				m[strings.Replace(k, strings.TrimPrefix(moved, "/"), strings.TrimPrefix(tree, "/"), 1)] = v
			}
			delete(m, batch.ManifestName)
			cc := maps.Clone(c)
			delete(cc, batch.ManifestName)
			if !equalMaps(m, cc) || r.Summary.NodesBuilt != 0 {
				t.Fatalf("step %d (%s): the tree at another path built %d nodes, same outputs %v\n%s", step, what, r.Summary.NodesBuilt, equalMaps(m, cc), stderr)
			}
		}
	}
}

// outputOf returns the output file the report gives for the root whose
// path ends in suffix.
func outputOf(t *testing.T, r batch.Report, suffix string) string {
	t.Helper()
	for _, rr := range r.Roots {
		if strings.HasSuffix(rr.Path, "/"+suffix) && rr.Output != "" {
			return rr.Output
		}
	}
	t.Fatalf("no output for %s in the report", suffix)
	return ""
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// TestBuildAllConcurrentRuns starts two kpipe processes at once running
// build-all on the same cache directory, with different output
// directories: both must succeed with the output of a run without a cache.
func TestBuildAllConcurrentRuns(t *testing.T) {
	tree, _ := newRepo(t)
	cacheDir := t.TempDir()
	outs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	codes := make([]int, 2)
	stderrs := make([]string, 2)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "--", "build-all", tree, "--out-dir", outs[i], "--cache-dir", cacheDir)
			cmd.Env = append(os.Environ(), "KPIPE_TEST_AS_KPIPE=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			codes[i], stderrs[i] = cmd.ProcessState.ExitCode(), stderr.String()
			if err != nil && codes[i] == 0 {
				codes[i] = -1
			}
		}()
	}
	wg.Wait()
	cold := filepath.Join(t.TempDir(), "cold")
	buildAll(t, tree, "", cold)
	want := outputsUnder(t, cold)
	for i := range outs {
		if codes[i] != 0 {
			t.Fatalf("run %d: exit %d\n%s", i, codes[i], stderrs[i])
		}
		if got := outputsUnder(t, outs[i]); !equalMaps(got, want) {
			t.Errorf("run %d: outputs differ from a build without the cache", i)
		}
	}
}

// TestBuildAllDiscoveryFollowsTheTree runs `build-all .` in two different
// trees with one cache: the second must find its own roots, not the
// first tree's.
func TestBuildAllDiscoveryFollowsTheTree(t *testing.T) {
	cacheDir := t.TempDir()
	one, _ := newRepo(t)
	two, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := genrepo.Write(two, genrepo.Spec{Apps: 1, Envs: 1, ResourcesPerApp: 1}); err != nil {
		t.Fatal(err)
	}
	for _, tree := range []string{one, two, one} {
		t.Chdir(tree)
		_, r, stderr := buildAll(t, ".", cacheDir, "../out") // the same arguments each time
		for _, rr := range r.Roots {
			// The report names roots relative to the current directory.
			if !filepath.IsLocal(rr.Path) || !loaders.HasKustomization(loaders.Disk, filepath.Join(tree, rr.Path)) {
				t.Fatalf("build-all . in %s built %s\n%s", tree, rr.Path, stderr)
			}
		}
	}
}
