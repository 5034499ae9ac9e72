package gitfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kpipe/kpipe/internal/fsread"
)

// git runs git in dir and returns its output; a test without git skips.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed (apt-get install git)")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// write makes the files (path -> content; a content "-> T" is a symlink
// to T) under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		// A file where a directory must go goes (a random tree's change).
		for d := filepath.Dir(full); d != dir && len(d) > len(dir); d = filepath.Dir(d) {
			if fi, err := os.Lstat(d); err == nil && !fi.IsDir() {
				os.Remove(d)
			}
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(full)
		if target, ok := strings.CutPrefix(c, "-> "); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Skip("no symlinks:", err)
			}
			continue
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	write(t, dir, files)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "one")
	return dir
}

func open(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// A revision's tree is a proper fs.FS (fstest.TestFS checks every file,
// directory and symlink against each other), holding exactly what git
// has: file contents, directories, executable bits and symlinks.
func TestTreeIsAnFS(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	dir := newRepo(t, map[string]string{
		"a/kustomization.yaml": "resources:\n- cm.yaml\n",
		"a/cm.yaml":            "kind: ConfigMap\n",
		"a/run.sh":             "#!/bin/sh\n",
		"a/link.yaml":          "-> cm.yaml",
		"a/up":                 "-> ../b",
		"b/c/d.yaml":           "deep\n",
		"top.txt":              "",
	})
	r := open(t, dir)
	_, tree, err := r.Commit("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	fsys := r.Tree(tree)
	if err := fstest.TestFS(fsys, "a/kustomization.yaml", "a/cm.yaml", "a/run.sh", "a/link.yaml", "b/c/d.yaml", "top.txt"); err != nil {
		t.Fatal(err)
	}
	if data, err := fs.ReadFile(fsys, "a/up/c/d.yaml"); err != nil || string(data) != "deep\n" {
		t.Errorf("through a directory symlink: %q, %v", data, err)
	}
	if fi, err := fsys.Lstat("a/link.yaml"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat of a symlink: %v, %v", fi, err)
	}
	if fi, err := fsys.Stat("a/run.sh"); err != nil || fi.Mode().Perm() != 0o755 || fi.Size() != 10 {
		t.Errorf("Stat of an executable: %v, %v", fi, err)
	}
	a, _ := fsys.Stat("a/link.yaml")
	b, _ := fsys.Stat("a/cm.yaml")
	if id := a.Sys().(*Object).ContentID(); id != b.Sys().(*Object).ContentID() || !strings.HasPrefix(id, "git blob ") {
		t.Errorf("content IDs of a link and its target: %s, %s", id, b.Sys().(*Object).ContentID())
	}
	if _, err := fsys.Stat("a/missing.yaml"); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := fsys.Stat("top.txt/x"); err == nil {
		t.Error("a path through a file exists")
	}
}

// Commit names what is not a commit in the words of the CLI's error.
func TestCommitOfABadRevision(t *testing.T) {
	dir := newRepo(t, map[string]string{"f": "x"})
	r := open(t, dir)
	for _, rev := range []string{"nope", "HEAD~5", "HEAD:f"} {
		if _, _, err := r.Commit(rev); err == nil || !strings.Contains(err.Error(), rev+" is not a commit of the repository at") {
			t.Errorf("Commit(%q) = %v", rev, err)
		}
	}
	// The process is still of use after a missing object.
	if _, _, err := r.Commit("HEAD"); err != nil {
		t.Fatal(err)
	}
}

// Diff lists what `git diff --name-status --no-renames` lists, for random
// changes to a random tree (files edited, added, removed, made
// executable, turned into directories or symlinks, and the reverse),
// reading only the trees that differ.
func TestDiffMatchesGitDiff(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			files := map[string]string{}
			name := func() string {
				var parts []string
				for range 1 + rng.Intn(4) {
					parts = append(parts, string(rune('a'+rng.Intn(4))))
				}
				return strings.Join(parts, "/")
			}
			for range 40 {
				files[name()] = fmt.Sprint(rng.Intn(5))
			}
			files = clean(files)
			dir := newRepo(t, files)
			base := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
			for range 1 + rng.Intn(8) {
				p := name()
				switch rng.Intn(5) {
				case 0:
					os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p)))
					delete(files, p)
				case 1:
					write(t, dir, map[string]string{p + ".sh": "x"})
				case 2:
					os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p)))
					write(t, dir, map[string]string{p: "-> ../x"})
				default:
					os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p)))
					write(t, dir, map[string]string{p: fmt.Sprint(rng.Intn(5))})
				}
			}
			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
			var want []string
			out := git(t, dir, "diff", "--name-status", "--no-renames", "-z", base, "HEAD", "--")
			f := strings.Split(out, "\x00")
			for i := 0; i+1 < len(f); i += 2 {
				want = append(want, f[i][:1]+" "+f[i+1])
			}
			sort.Strings(want)
			r := open(t, dir)
			_, a, err := r.Commit(base)
			if err != nil {
				t.Fatal(err)
			}
			_, b, err := r.Commit("HEAD")
			if err != nil {
				t.Fatal(err)
			}
			changes, err := r.Diff(a, b)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range changes {
				s := string(c.Status)
				got = append(got, s+" "+c.Path)
			}
			sort.Strings(got)
			// git says T for a type change (a file became a symlink): a
			// modification.
			for i, w := range want {
				if strings.HasPrefix(w, "T ") {
					want[i] = "M " + w[2:]
				}
			}
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("Diff:\n%s\ngit diff:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// clean drops the files of a random tree that a directory of the same
// name shadows.
func clean(files map[string]string) map[string]string {
	out := map[string]string{}
	for p, c := range files {
		shadowed := false
		for q := range files {
			if strings.HasPrefix(q, p+"/") {
				shadowed = true
			}
		}
		if !shadowed {
			out[p] = c
		}
	}
	return out
}

// A tree of one changed file among many unchanged directories is diffed
// reading only the trees on the way to it.
func TestDiffReadsOnlyWhatChanged(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("pad%02d/sub/f.txt", i)] = fmt.Sprint(i)
	}
	files["app/deep/er/x.yaml"] = "a"
	dir := newRepo(t, files)
	write(t, dir, map[string]string{"app/deep/er/x.yaml": "b"})
	git(t, dir, "commit", "-q", "-am", "two")
	r := open(t, dir)
	_, a, _ := r.Commit("HEAD~1")
	_, b, _ := r.Commit("HEAD")
	before := r.Reads()
	changes, err := r.Diff(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0] != (Change{Path: "app/deep/er/x.yaml", Status: 'M'}) {
		t.Fatalf("changes %v", changes)
	}
	// Two trees at each of the four levels.
	if n := r.Reads() - before; n != 8 {
		t.Errorf("%d objects read, want 8", n)
	}
}

// A file over fsread's limit is refused with fsread.ErrTooLarge, the
// limit named.
func TestTooLargeError(t *testing.T) {
	if !errors.Is(errTooLarge, fsread.ErrTooLarge) {
		t.Error("errTooLarge is not fsread.ErrTooLarge")
	}
	if got, want := errTooLarge.Error(), "file is larger than the limit of 256 MiB on one file"; got != want {
		t.Errorf("errTooLarge = %q, want %q", got, want)
	}
}
