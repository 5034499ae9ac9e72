package diff

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/genrepo"
	"github.com/kpipe/kpipe/loaders"
)

var (
	reviewEdits = flag.Int("kpipe.review-edits", 12, "rounds of random edits in TestReviewMatchesFullRenders")
	reviewSeed  = flag.Int64("kpipe.review-seed", 7, "seed of the random edits in TestReviewMatchesFullRenders")
)

// gitRun runs git in dir with a fixed identity and fails the test on error.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := genrepo.Git(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newRepo writes a synthetic monorepo with one Secret generator, commits
// it on main and returns its directory.
func newRepo(t *testing.T, apps, envs int) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found (apt-get install git)")
	}
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if _, err := genrepo.Write(dir, genrepo.Spec{Apps: apps, Envs: envs, ResourcesPerApp: 2}); err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(dir, "apps/app000/dev/kustomization.yaml"),
		"secretGenerator:\n- name: db\n  literals:\n  - password=hunter2-original\n")
	if err := genrepo.InitGit(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// buildOptions are build settings with a cache in a temporary directory.
func buildOptions(t *testing.T) batch.Options {
	t.Helper()
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	t.Cleanup(func() { store.Close() })
	return batch.Options{Restriction: loaders.RootOnly, Engine: engine.Options{Jobs: 2,
		Cache: engine.Cache{Store: store, Files: store.FileIndex(), Version: "test"}}}
}

// renderAll renders every root of a tree without a cache: the oracle.
func renderAll(t *testing.T, tree string) map[string]rendered {
	t.Helper()
	bo := batch.Options{Trees: []string{tree}, Restriction: loaders.RootOnly, Engine: engine.Options{Jobs: 2}}
	roots, err := batch.Discover(bo)
	if err != nil {
		t.Fatal(err)
	}
	rels := make([]string, len(roots))
	for i, r := range roots {
		rels[i] = relPath(tree, r)
	}
	out, _ := renderRoots(context.Background(), bo.Engine, engine.LoadOptions{FS: loaders.Disk, Restriction: loaders.RootOnly}, tree, rels, nil)
	return out
}

// change is one resource difference as the oracle and the review state
// it: a hash-suffix rename is a removal and an addition.
type change struct{ root, id, kind string }

// oracle compares two full renders document by document (by exact ID, no
// pairing of renamed resources) and lists every difference.
func oracle(t *testing.T, old, nw map[string]rendered) []change {
	t.Helper()
	var out []change
	roots := map[string]bool{}
	for r := range old {
		roots[r] = true
	}
	for r := range nw {
		roots[r] = true
	}
	parse := func(r rendered) map[ID]string {
		m := map[ID]string{}
		if r.err != "" {
			return m
		}
		rs, err := parseOutput(r.yaml, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range rs {
			m[x.id] = x.text
		}
		return m
	}
	for r := range roots {
		o, inOld := old[r]
		n, inNew := nw[r]
		if inOld && inNew && (o.err != "" || n.err != "") {
			if o.err != n.err {
				out = append(out, change{r, "", "error"})
			}
			continue
		}
		if inOld && o.err != "" || inNew && n.err != "" {
			out = append(out, change{r, "", "error"})
			continue
		}
		om, nm := parse(o), parse(n)
		for id, text := range nm {
			if ot, ok := om[id]; !ok {
				out = append(out, change{r, id.String(), ResourceAdded})
			} else if ot != text {
				out = append(out, change{r, id.String(), ResourceChanged})
			}
		}
		for id := range om {
			if _, ok := nm[id]; !ok {
				out = append(out, change{r, id.String(), ResourceRemoved})
			}
		}
	}
	return sortChanges(out)
}

// reported flattens a review's result the oracle's way.
func reported(res *Result) []change {
	var out []change
	for _, rd := range res.Roots {
		if rd.Status == RootFailing {
			continue // unchanged: checked against the full renders apart
		}
		if rd.OldError != "" || rd.NewError != "" {
			out = append(out, change{rd.Path, "", "error"})
			continue
		}
		for _, c := range rd.Changes {
			if c.OldName != "" {
				old := c.ID
				old.Name = c.OldName
				out = append(out, change{rd.Path, old.String(), ResourceRemoved}, change{rd.Path, c.ID.String(), ResourceAdded})
				continue
			}
			out = append(out, change{rd.Path, c.ID.String(), c.Change})
		}
	}
	return sortChanges(out)
}

func sortChanges(cs []change) []change {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.root != b.root {
			return a.root < b.root
		}
		if a.id != b.id {
			return a.id < b.id
		}
		return a.kind < b.kind
	})
	return cs
}

// edit makes one random change of the kinds a pull request makes.
func edit(t *testing.T, rng *rand.Rand, dir string) string {
	t.Helper()
	overlays, _ := filepath.Glob(filepath.Join(dir, "apps", "*", "*", "kustomization.yaml"))
	var envs []string
	for _, o := range overlays {
		if filepath.Base(filepath.Dir(o)) != "base" {
			envs = append(envs, filepath.Dir(o))
		}
	}
	sort.Strings(envs)
	op := rng.Intn(8)
	pick := ""
	if len(envs) == 0 {
		op = 7 // every overlay is gone: edit an app base
	} else {
		pick = envs[rng.Intn(len(envs))]
	}
	switch op {
	case 0: // a shared base: every root changes
		appendFile(t, filepath.Join(dir, "common/network-policy.yaml"), fmt.Sprintf("  # %d\n", rng.Int()))
		p := filepath.Join(dir, "common/kustomization.yaml")
		data, _ := os.ReadFile(p)
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), "owner: ", fmt.Sprintf("owner: t%d-", rng.Intn(100)), 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return "edit common"
	case 1: // a root fails
		appendFile(t, filepath.Join(pick, "kustomization.yaml"), "nameSuffix: [broken\n")
		return "break " + pick
	case 2: // a root added
		dst := pick + "-copy"
		if _, err := os.Stat(dst); err == nil {
			return "none"
		}
		if err := os.CopyFS(dst, os.DirFS(pick)); err != nil {
			t.Fatal(err)
		}
		return "add " + dst
	case 3: // a root removed
		if err := os.RemoveAll(pick); err != nil {
			t.Fatal(err)
		}
		return "remove " + pick
	case 4: // a secret's value
		p := filepath.Join(dir, "apps/app000/dev/kustomization.yaml")
		if data, err := os.ReadFile(p); err == nil {
			s := strings.Replace(string(data), "password=hunter2-", fmt.Sprintf("password=hunter2-%d", rng.Intn(1000)), 1)
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return "secret"
	default: // an app base: values, generator files, added, removed and renamed resources
		what, err := genrepo.Mutate(rng, dir)
		if err != nil {
			t.Fatal(err)
		}
		return what
	}
}

// TestReviewMatchesFullRenders is the check: over many rounds of
// random edits of a git repository (shared base, generator files, a Secret,
// roots added, removed and broken), the resources ReviewGit reports are
// exactly those whose rendered YAML differs between full renders of every
// root at the two revisions.
func TestReviewMatchesFullRenders(t *testing.T) {
	dir := newRepo(t, 5, 3)
	bo := buildOptions(t)
	rng := rand.New(rand.NewSource(*reviewSeed))
	before := renderAll(t, dir)
	for round := 0; round < *reviewEdits; round++ {
		var did []string
		for i := 0; i < 1+rng.Intn(3); i++ {
			did = append(did, edit(t, rng, dir))
		}
		res, err := ReviewGit(context.Background(), GitOptions{Dir: dir, Base: "HEAD", Build: bo, Diff: Options{Context: 3}})
		if err != nil {
			t.Fatalf("round %d (%v): %v", round, did, err)
		}
		after := renderAll(t, dir)
		// With order counted, the roots reported are exactly those whose
		// output bytes differ (what kpipe affected lists).
		exact, err := ReviewGit(context.Background(), GitOptions{Dir: dir, Base: "HEAD", Build: bo, Diff: Options{OrderMatters: true}})
		if err != nil {
			t.Fatal(err)
		}
		var rootsGot, rootsWant []string
		for _, rd := range exact.Roots {
			if rd.Status == RootFailing {
				// A root the change reaches that fails on both sides, the
				// same way: named, and it must really be so.
				b, a := before[rd.Path], after[rd.Path]
				if b.err == "" || a.err == "" || rd.NewError == "" {
					t.Fatalf("round %d (%v): %s reported failing on both sides, but the full renders say %q and %q", round, did, rd.Path, b.err, a.err)
				}
				continue
			}
			rootsGot = append(rootsGot, rd.Path)
		}
		for r, a := range after {
			if b, ok := before[r]; !ok || string(a.yaml) != string(b.yaml) || a.err != b.err {
				rootsWant = append(rootsWant, r)
			}
		}
		for r := range before {
			if _, ok := after[r]; !ok {
				rootsWant = append(rootsWant, r)
			}
		}
		slices.Sort(rootsWant)
		if !slices.Equal(rootsGot, rootsWant) {
			t.Fatalf("round %d (%v): roots reported %v, roots whose output differs %v", round, did, rootsGot, rootsWant)
		}
		want, got := oracle(t, before, after), reported(res)
		if !slices.Equal(want, got) {
			t.Fatalf("round %d (%v): review reported\n%v\nfull renders differ in\n%v", round, did, got, want)
		}
		for _, rd := range res.Roots {
			for _, c := range rd.Changes {
				if strings.Contains(c.Diff, "hunter2") {
					t.Fatalf("round %d: a Secret value is printed:\n%s", round, c.Diff)
				}
			}
		}
		gitRun(t, dir, "add", "-A")
		gitRun(t, dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprint(round))
		before = after
	}
}

// TestReviewTwoRevisions compares two commits (neither the working tree):
// both are read from git's objects, and the working tree's state does not
// matter.
func TestReviewTwoRevisions(t *testing.T) {
	dir := newRepo(t, 2, 2)
	first := strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD"))
	appendFile(t, filepath.Join(dir, "apps/app001/base/application.properties"), "x=1\n")
	gitRun(t, dir, "commit", "-q", "-am", "edit")
	// Noise in the working tree, not part of either revision.
	appendFile(t, filepath.Join(dir, "apps/app000/base/application.properties"), "noise=1\n")
	res, err := ReviewGit(context.Background(), GitOptions{Dir: dir, Base: first, Head: "HEAD", Build: buildOptions(t), Diff: Options{Context: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, rd := range res.Roots {
		paths = append(paths, rd.Path)
	}
	want := []string{"apps/app001/dev", "apps/app001/staging"}
	if !slices.Equal(paths, want) {
		t.Fatalf("changed roots %v, want %v", paths, want)
	}
	for _, rd := range res.Roots {
		if len(rd.Changes) != 2 || rd.Changes[0].OldName == "" {
			t.Errorf("%s: want the ConfigMap renamed by its hash and the Deployment that refers to it, got %+v", rd.Path, rd.Changes)
		}
	}
}

// TestSecretEditShowsKeyNotValue: a changed Secret value shows as its key
// changed, with digests; --show-secrets prints values.
func TestSecretEditShowsKeyNotValue(t *testing.T) {
	dir := newRepo(t, 1, 1)
	p := filepath.Join(dir, "apps/app000/dev/kustomization.yaml")
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), "hunter2-original", "s3cr3t-new", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	bo := buildOptions(t)
	res, err := ReviewGit(context.Background(), GitOptions{Dir: dir, Base: "HEAD", Build: bo, Diff: Options{Context: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := WriteText(&text, res, false); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if strings.Contains(out, "s3cr3t") || strings.Contains(out, "hunter2") {
		t.Fatalf("a secret value is printed:\n%s", out)
	}
	if !strings.Contains(out, "-  password: <secret sha256:") || !strings.Contains(out, "+  password: <secret sha256:") {
		t.Fatalf("the changed key is not shown with digests:\n%s", out)
	}
	res, err = ReviewGit(context.Background(), GitOptions{Dir: dir, Base: "HEAD", Build: bo, Diff: Options{Context: 3, ShowSecrets: true}})
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	_ = WriteText(&text, res, false)
	// data values are base64: "s3cr3t-new" is czNjcjN0LW5ldw==.
	if !strings.Contains(text.String(), "czNjcjN0LW5ldw==") {
		t.Fatalf("--show-secrets does not print the value:\n%s", text.String())
	}
}

// TestReviewDirsOfOutputs compares two directories of rendered output.
func TestReviewDirsOfOutputs(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: %s\n"
	dep := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n"
	if err := os.WriteFile(filepath.Join(a, "x.yaml"), []byte(fmt.Sprintf(cm, "1")+"---\n"+dep), 0o644); err != nil {
		t.Fatal(err)
	}
	// Same resources in another order, one value changed; plus a new file.
	if err := os.WriteFile(filepath.Join(b, "x.yaml"), []byte(dep+"---\n"+fmt.Sprintf(cm, "2")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, "y.yaml"), []byte(dep), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReviewDirs(context.Background(), a, b, DirOptions{Build: buildOptions(t)})
	if err != nil {
		t.Fatal(err)
	}
	got := reported(res)
	want := sortChanges([]change{{"x.yaml", "ConfigMap c", ResourceChanged}, {"y.yaml", "apps/Deployment d", ResourceAdded}})
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if !res.Roots[0].Reordered || res.Roots[1].Status != RootAdded {
		t.Fatalf("want x.yaml reordered and y.yaml added: %+v", res.Roots)
	}
}

// TestDiffAfterBuildAllBuildsNothingOnThatSide: a root read from git's
// objects has the keys of the same root read from disk. After a build-all
// of a commit in the working tree (what CI on the main branch runs), a
// review with that commit as its old side builds nothing there; with it
// as its new side (--head), nothing there either.
func TestDiffAfterBuildAllBuildsNothingOnThatSide(t *testing.T) {
	dir := newRepo(t, 3, 2)
	bo := buildOptions(t)
	buildAll := func() {
		t.Helper()
		o := bo
		o.Trees = []string{dir}
		if _, err := batch.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	buildAll()
	appendFile(t, filepath.Join(dir, "apps/app001/base/application.properties"), "x=1\n")
	res, err := ReviewGit(context.Background(), GitOptions{Dir: dir, Base: "HEAD", Build: bo})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Roots) != 2 || res.OldBuilt != 0 {
		t.Errorf("review of the working tree: %d roots changed, %d nodes built on the old side (want 2, and none)", len(res.Roots), res.OldBuilt)
	}
	gitRun(t, dir, "commit", "-q", "-am", "edit")
	buildAll()
	res, err = ReviewGit(context.Background(), GitOptions{Dir: dir, Base: "HEAD~1", Head: "HEAD", Build: bo})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Roots) != 2 || res.OldBuilt != 0 || res.NewBuilt != 0 {
		t.Errorf("review of two commits built on disk: %d roots changed, %d and %d nodes built (want 2, none and none)", len(res.Roots), res.OldBuilt, res.NewBuilt)
	}
}

// TestReviewCostFollowsTheChange: a review of two commits reads the same
// git objects from a repository padded with 2,000 unrelated files (in
// 200 directories) as from the same repository without them, once its
// cache knows the roots: when the same commits are reviewed again, and
// when the next commit is.
func TestReviewCostFollowsTheChange(t *testing.T) {
	reads := func(pad bool) []int {
		dir := newRepo(t, 3, 2)
		if pad {
			for i := range 2000 {
				p := filepath.Join(dir, "vendor", fmt.Sprintf("d%03d", i%200), fmt.Sprintf("f%04d.go", i))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(fmt.Sprintf("package d\n// %d\n", i)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			gitRun(t, dir, "add", "-A")
			gitRun(t, dir, "commit", "-q", "-m", "pad")
		}
		bo := buildOptions(t)
		bo.AllKustomizations = true
		var n []int
		for _, edit := range []string{"x=1\n", "x=2\n"} {
			appendFile(t, filepath.Join(dir, "apps/app001/base/application.properties"), edit)
			gitRun(t, dir, "commit", "-q", "-am", "edit")
			for range 2 {
				res, err := ReviewGit(context.Background(), GitOptions{Dir: dir, Base: "HEAD~1", Head: "HEAD", Build: bo})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Roots) != 3 {
					t.Fatalf("%d roots changed, want app001's base and overlays", len(res.Roots))
				}
				n = append(n, res.ObjectsRead)
			}
		}
		return n
	}
	plain, padded := reads(false), reads(true)
	t.Logf("git objects read: %v without the padding, %v with it", plain, padded)
	// The first review fills the cache (its discovery walks every
	// directory); the others follow the change.
	if !slices.Equal(plain[1:], padded[1:]) {
		t.Errorf("git objects read: %v without the padding, %v with it (the first run aside, want the same)", plain, padded)
	}
	if padded[0] <= plain[0] {
		t.Errorf("the first review read %d objects with the padding, %d without: it walks every directory", padded[0], plain[0])
	}
}
