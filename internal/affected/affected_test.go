package affected

import (
	"bytes"
	"context"
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

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := genrepo.Git(dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found (apt-get install git)")
	}
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if _, err := genrepo.Write(dir, genrepo.Spec{Apps: 6, Envs: 3, ResourcesPerApp: 2}); err != nil {
		t.Fatal(err)
	}
	if err := genrepo.InitGit(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// outputs renders every root of dir without a cache.
func outputs(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	bo := batch.Options{Trees: []string{dir}, Restriction: loaders.RootOnly, Engine: engine.Options{Jobs: 2}}
	roots, err := batch.Discover(bo)
	if err != nil {
		t.Fatal(err)
	}
	g, loadErrs := engine.Load(roots, loaders.RootOnly)
	out := map[string][]byte{}
	for i, r := range engine.NewBuilder(g, bo.Engine).Run(context.Background(), loadErrs) {
		if r.Err != nil {
			t.Fatalf("%s: %v", roots[i], r.Err)
		}
		out[roots[i]] = r.YAML
	}
	return out
}

// TestFindCoversEveryChangedRoot: after random edits (values, generator
// files, resources added, removed and renamed in app bases, the shared
// base, a root added), every root whose output changed between two full
// builds is found, and a root found beyond those is one a changed path
// reaches without changing its output (a rename, a reordering): it lies in
// the app the edit touched. (kpipe affected then renders the candidates to
// list exactly the changed ones: see package diff.)
func TestFindCoversEveryChangedRoot(t *testing.T) {
	dir := newRepo(t)
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	defer store.Close()
	bo := batch.Options{Trees: []string{dir}, Restriction: loaders.RootOnly,
		Engine: engine.Options{Jobs: 2, Cache: engine.Cache{Store: store, Files: store.FileIndex(), Version: "test"}}}
	repo, err := OpenRepo(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	before := outputs(t, dir)
	for round := 0; round < 40; round++ {
		var did string
		switch rng.Intn(6) {
		case 0:
			p := filepath.Join(dir, "common/network-policy.yaml")
			data, _ := os.ReadFile(p)
			did = "edit common"
			if err := os.WriteFile(p, bytes.Replace(data, []byte("name: default-deny"), []byte(fmt.Sprintf("name: deny-%d", round)), 1), 0o644); err != nil {
				t.Fatal(err)
			}
		case 1:
			envs, _ := filepath.Glob(filepath.Join(dir, "apps/*/dev"))
			src := envs[rng.Intn(len(envs))]
			did = "add root " + src + fmt.Sprint(round)
			if err := os.CopyFS(src+fmt.Sprint(round), os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
		default:
			if did, err = genrepo.Mutate(rng, dir); err != nil {
				t.Fatal(err)
			}
		}
		changes, err := repo.Git(context.Background(), "HEAD", "")
		if err != nil {
			t.Fatal(err)
		}
		roots, _, err := Find(context.Background(), bo, Under(repo.Top, changes))
		if err != nil {
			t.Fatal(err)
		}
		after := outputs(t, dir)
		var want, got []string
		for r, y := range after {
			if old, ok := before[r]; !ok || !bytes.Equal(old, y) {
				want = append(want, r)
			}
		}
		for _, r := range roots {
			got = append(got, r.Path)
		}
		sort.Strings(want)
		sort.Strings(got)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Fatalf("round %d (%s): %s changed but is not found (found %v)", round, did, w, got)
			}
		}
		for _, g := range got {
			if slices.Contains(want, g) {
				continue
			}
			app := filepath.Dir(g) // apps/appNNN
			near := false
			for _, c := range changes {
				if strings.HasPrefix(filepath.Join(repo.Top, c.Path), app+string(filepath.Separator)) {
					near = true
				}
			}
			if !near {
				t.Fatalf("round %d (%s): %s is found, but no change is in its app and its output is unchanged", round, did, g)
			}
		}
		gitRun(t, dir, "add", "-A")
		gitRun(t, dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprint(round))
		before = after
	}
}

// TestMatcher covers each way a change reaches a root.
func TestMatcher(t *testing.T) {
	rs := engine.ReadSet{Files: []string{"/r/app/k.yaml", "/r/app/cm.yaml"}, Dirs: []string{"/r/app"}, Trees: []string{"/r/plug"}}
	cases := []struct {
		change Change
		hit    bool
	}{
		{Change{"/r/app/cm.yaml", Modified}, true},
		{Change{"/r/app/README.md", Modified}, false},
		{Change{"/r/app/README.md", Added}, false},
		{Change{"/r/app/kustomization.yml", Added}, true}, // a second kustomization file
		{Change{"/r/app/kustomization.yml", Modified}, false},
		{Change{"/r/plug/sub/secret.enc.yaml", Modified}, true},
		{Change{"/r/plugx/a", Modified}, false},
		{Change{"/r/app/cm.yaml/x", Added}, true}, // the file became a directory
	}
	for _, c := range cases {
		got := len(NewMatcher(loaders.Disk, []Change{c.change}).Match(rs)) > 0
		if got != c.hit {
			t.Errorf("%+v: hit %v, want %v", c.change, got, c.hit)
		}
	}
	// A root index's record does not tell files from directories: a
	// directory on disk is matched as one, anything else as a file.
	dir := t.TempDir()
	either := engine.ReadSet{Either: []string{dir, filepath.Join(dir, "cm.yaml")}}
	for _, c := range []struct {
		change Change
		hit    bool
	}{
		{Change{filepath.Join(dir, "cm.yaml"), Modified}, true},
		{Change{filepath.Join(dir, "README.md"), Modified}, false},
		{Change{filepath.Join(dir, "Kustomization"), Added}, true},
		{Change{filepath.Join(dir, "cm.yaml", "x"), Added}, true},
	} {
		if got := len(NewMatcher(loaders.Disk, []Change{c.change}).Match(either)) > 0; got != c.hit {
			t.Errorf("either %+v: hit %v, want %v", c.change, got, c.hit)
		}
	}
}

// OpenRepo finds the top level git finds: from the top, from below it,
// through a symlink; and asks git where the repository is not plain (a
// linked worktree), or says git's error (inside .git).
func TestOpenRepoFindsWhatGitFinds(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found (apt-get install git)")
	}
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(top, "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "a/b/f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := genrepo.InitGit(top); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(top, "a"), link); err != nil {
		t.Skip("no symlinks:", err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if _, err := genrepo.Git(top, "worktree", "add", "-q", "--detach", wt); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{top, filepath.Join(top, "a/b"), link, wt, filepath.Join(wt, "a")} {
		want, err := git(context.Background(), dir, "rev-parse", "--show-toplevel")
		if err != nil {
			t.Fatal(err)
		}
		r, err := OpenRepo(context.Background(), dir)
		if err != nil || r.Top != strings.TrimSpace(string(want)) {
			t.Errorf("OpenRepo(%s) = %q, %v; git says %q", dir, r.Top, err, strings.TrimSpace(string(want)))
		}
	}
	if _, err := OpenRepo(context.Background(), filepath.Join(top, ".git")); err == nil {
		t.Error("OpenRepo inside .git found a top level; git says it is not in a work tree")
	}
}
