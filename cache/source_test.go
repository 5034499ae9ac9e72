package cache_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/gitfs"
	"github.com/kpipe/kpipe/loaders"
)

// gitRepo makes a repository with one commit per tree in commits (path ->
// content; each commit holds exactly its tree) and returns it.
func gitRepo(t *testing.T, commits ...map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed (apt-get install git)")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	for _, files := range commits {
		run("rm", "-rq", "--ignore-unmatch", ".")
		for p, c := range files {
			full := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run("add", "-A")
		run("commit", "-q", "--allow-empty", "-m", "c")
	}
	return dir
}

// revision is the FS of commit rev of repo, mounted at mount.
func revision(t *testing.T, repo *gitfs.Repo, rev, mount string) loaders.FS {
	t.Helper()
	_, tree, err := repo.Commit(rev)
	if err != nil {
		t.Fatal(err)
	}
	return loaders.NewFS(repo.Tree(tree), mount)
}

// In a git revision, a record's inputs are stamped with their objects'
// names: checking them against another revision reads no file (a
// directory whose tree is the same covers what lies below it), finds a
// changed file, and a directory's name vouches only for the inputs of the
// record it is in. A large file's digest is kept under its object's name
// for the next process.
func TestGitRevisionInputs(t *testing.T) {
	big := strings.Repeat("x: 1\n", 20000) // 100 KB: its digest is kept on disk
	v1 := map[string]string{"d/a.yaml": "a\n", "d/sub/b.yaml": "b1\n" + big, "e/c.yaml": "c\n"}
	v2 := map[string]string{"d/a.yaml": "a\n", "d/sub/b.yaml": "b2\n" + big, "e/c.yaml": "c\n"}
	dir := gitRepo(t, v1, v2, v1) // HEAD~2 and HEAD hold the same tree
	repo, err := gitfs.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	cacheDir := t.TempDir()
	store := cache.Open(context.Background(), cache.Options{Dir: cacheDir})
	mount := filepath.Join(t.TempDir(), "repo@rev") // nothing there on disk
	at := func(p string) string { return filepath.Join(mount, filepath.FromSlash(p)) }
	record := func(rev string, paths ...string) []cache.Input {
		ix := store.FileIndex().On(revision(t, repo, rev, mount))
		var in []cache.Input
		for _, p := range paths {
			d, ok := ix.Digest(at(p))
			if !ok {
				t.Fatalf("%s: no digest of %s", rev, p)
			}
			in = append(in, ix.Stamp(cache.Input{Path: at(p), Real: at(p), Digest: d}))
		}
		if err := ix.Save(""); err != nil {
			t.Fatal(err)
		}
		return in
	}
	r1 := record("HEAD~2", "d", "d/a.yaml", "d/sub/b.yaml", "e/c.yaml")
	r2 := record("HEAD~1", "d/sub/b.yaml")

	check := func(rev string) *cache.InputChecker {
		return cache.NewInputChecker(store.FileIndex().On(revision(t, repo, rev, mount)))
	}
	before := repo.Reads()
	c := check("HEAD")
	if !c.Unchanged(r1) {
		t.Error("a record of the same tree is changed")
	}
	// The commit, the root tree and e's tree: d is vouched for by its
	// name, e/c.yaml by its own; no file is read.
	if n := repo.Reads() - before; n > 3 {
		t.Errorf("%d objects read to check an unchanged record, want 3", n)
	}
	if c.Unchanged(r2) {
		t.Error("a file of another revision's record is unchanged because its directory was, in another record")
	}
	if check("HEAD~1").Unchanged(r1) {
		t.Error("a changed file is unchanged")
	}
	if !check("HEAD~1").Unchanged(r2) {
		t.Error("the record of HEAD~1 is changed at HEAD~1")
	}

	// Another process: the large file's digest is known by its name.
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	store = cache.Open(context.Background(), cache.Options{Dir: cacheDir})
	defer store.Close()
	ix := store.FileIndex().On(revision(t, repo, "HEAD", mount))
	before = repo.Reads()
	if d, ok := ix.Digest(at("d/sub/b.yaml")); !ok || d != r1[2].Digest {
		t.Fatalf("digest of the large file: %v %v", d, ok)
	}
	if hashed, _ := ix.Counts(); hashed != 0 {
		t.Errorf("the large file was read and hashed again (%d objects read)", repo.Reads()-before)
	}
}
