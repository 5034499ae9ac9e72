package loaders_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kpipe/kpipe/internal/gitfs"
	"github.com/kpipe/kpipe/loaders"
)

// node is one entry of a generated tree: a file's content, or a
// symlink's target (link set).
type node struct {
	data string
	link bool
}

// randomTree makes a tree of the shape kustomization repositories have:
// a few levels of directories with kustomization files, resources and
// patches, and symlinks among them: to files and to directories, up
// and down (`..`), dangling, in cycles, to a directory above the link,
// and absolute ones (under top, the tree's own directory).
func randomTree(rng *rand.Rand, top string) map[string]node {
	tree := map[string]node{}
	dirs := []string{"repo", "repo/base", "repo/overlays", "outside"}
	for range 3 + rng.Intn(5) {
		parent := dirs[rng.Intn(len(dirs))]
		dirs = append(dirs, parent+"/"+[]string{"a", "b", "c", "d", "prod", "dev"}[rng.Intn(6)])
	}
	names := []string{"kustomization.yaml", "kustomization.yml", "Kustomization", "cm.yaml", "patch.yaml", "deploy.yaml", "values.yaml"}
	for _, d := range dirs {
		for range 1 + rng.Intn(4) {
			n := names[rng.Intn(len(names))]
			content := fmt.Sprintf("kind: ConfigMap\nmetadata:\n  name: %s\n", strings.ReplaceAll(d, "/", "-"))
			if strings.HasPrefix(n, "kustomization") || n == "Kustomization" {
				content = "resources:\n- cm.yaml\n- ../base\n"
			}
			tree[d+"/"+n] = node{data: content}
		}
	}
	// Links point at what is there (files, directories, other links),
	// relative to the link's directory or absolute, and at what is not:
	// a missing name, the directory above, a loop.
	var existing []string
	for _, d := range dirs {
		existing = append(existing, d)
	}
	for p := range tree {
		existing = append(existing, p)
	}
	sort.Strings(existing)
	for range 4 + rng.Intn(10) {
		d := dirs[rng.Intn(len(dirs))]
		n := []string{"link", "kustomization.yaml", "cm.yaml", "sub", "loop", "Kustomization"}[rng.Intn(6)]
		p := d + "/" + n
		if dirSet(dirs)[p] {
			continue
		}
		var target string
		switch rng.Intn(10) {
		case 0:
			target = "missing.yaml"
		case 1:
			target = ".."
		case 2:
			target = "../.."
		case 3:
			target = n // itself: a loop
		case 4:
			target = filepath.ToSlash(filepath.Join(top, existing[rng.Intn(len(existing))]))
		default:
			rel, _ := filepath.Rel(d, existing[rng.Intn(len(existing))])
			target = filepath.ToSlash(rel)
		}
		tree[p] = node{data: target, link: true}
		existing = append(existing, p)
	}
	// A path that is both a file and a directory cannot be: the file goes.
	for p := range tree {
		for q := range tree {
			if strings.HasPrefix(q, p+"/") {
				delete(tree, p)
			}
		}
	}
	return tree
}

func dirSet(dirs []string) map[string]bool {
	m := map[string]bool{}
	for _, d := range dirs {
		m[d] = true
	}
	return m
}

// seams writes tree under a new directory and returns it with the three
// FSes that hold it there: the disk, an in-memory fstest.MapFS and the
// tree of a git commit of it, both mounted where the disk holds it, so
// that every answer is comparable as it is.
func seams(t *testing.T, rng *rand.Rand) (string, map[string]node, map[string]loaders.FS) {
	t.Helper()
	// The tree lies one level below a directory of its own: a link up
	// out of it (../..) reaches a directory that holds only the tree, on
	// disk as in the other trees (which hold the way down to their mount).
	private, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(private, "tree")
	tree := randomTree(rng, top)
	mem := fstest.MapFS{}
	for p, n := range tree {
		full := filepath.Join(top, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if n.link {
			if err := os.Symlink(filepath.FromSlash(n.data), full); err != nil {
				t.Skip("no symlinks:", err)
			}
			mem[p] = &fstest.MapFile{Data: []byte(n.data), Mode: fs.ModeSymlink | 0o777}
			continue
		}
		if err := os.WriteFile(full, []byte(n.data), 0o644); err != nil {
			t.Fatal(err)
		}
		mem[p] = &fstest.MapFile{Data: []byte(n.data), Mode: 0o644}
	}
	// git's own directory lies elsewhere: the disk's tree holds only the
	// tree's files.
	gitDir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir=" + gitDir, "--work-tree=" + top}, args...)...)
		cmd.Dir = top
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q", gitDir)
	git("add", "-A")
	git("commit", "-q", "-m", "tree")
	repo, err := gitfs.Open(context.Background(), gitDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	_, root, err := repo.Commit("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return top, tree, map[string]loaders.FS{
		"disk":   loaders.Disk,
		"memory": loaders.NewFS(mem, top),
		"git":    loaders.NewFS(repo.Tree(root), top),
	}
}

var seamTrees = flag.Int("kpipe.seam-trees", 16, "random trees TestSeamsReadAlike reads (CI reads more)")

// TestSeamsReadAlike reads random trees through each implementation of
// the read seam (disk, fs.FS in memory, a git revision) with random
// paths (relative, with `..`, absolute, missing, through symlinks,
// dangling and looping ones) under both load restrictions, and requires
// the same answers from each: the same bytes, the same real paths, the
// same kinds, and the same errors word for word (the load restrictor's
// refusals, "no such file or directory", "not a directory", symlink
// loops).
func TestSeamsReadAlike(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed (apt-get install git)")
	}
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on windows")
	}
	for seed := int64(1); seed <= int64(*seamTrees); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			top, tree, fss := seams(t, rng)
			var dirs, entries []string
			filepath.WalkDir(filepath.Join(top, "repo"), func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					dirs = append(dirs, p)
				}
				return nil
			})
			for p := range tree {
				for d := p; d != "."; d = path.Dir(d) {
					entries = append(entries, filepath.Join(top, filepath.FromSlash(d)))
				}
			}
			sort.Strings(entries)
			// paths names what lies in the tree (a file, a symlink, a
			// directory), as a kustomization would from dir: relative
			// (with `..` where it must), sometimes absolute, sometimes
			// with more after it, or a name that is not there.
			paths := func(dir string) string {
				p := entries[rng.Intn(len(entries))]
				if rng.Intn(2) == 0 {
					// Most entries name what lies in or below the root.
					var near []string
					for _, e := range entries {
						if loaders.Within(dir, e) && e != dir {
							near = append(near, e)
						}
					}
					if len(near) > 0 {
						p = near[rng.Intn(len(near))]
					}
				}
				switch rng.Intn(8) {
				case 0:
					return p // absolute
				case 1:
					p = filepath.Join(p, []string{"cm.yaml", "..", "missing.yaml", "sub/x.yaml", "kustomization.yaml"}[rng.Intn(5)])
				case 2:
					p = filepath.Join(filepath.Dir(p), "missing.yaml")
				}
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return p
				}
				if rng.Intn(5) == 0 {
					rel = "./" + rel + "/."
				}
				return rel
			}
			for range 10 {
				dir := dirs[rng.Intn(len(dirs))]
				r := []loaders.Restriction{loaders.RootOnly, loaders.None}[rng.Intn(2)]
				var ps []string
				for range 10 {
					ps = append(ps, paths(dir))
				}
				answers := map[string]string{}
				for name, f := range fss {
					answers[name] = readAll(f, dir, r, ps)
				}
				if answers["memory"] != answers["disk"] || answers["git"] != answers["disk"] {
					t.Fatalf("root %s, %s: the seams disagree\n--- disk\n%s\n--- memory\n%s\n--- git\n%s", dir, r, answers["disk"], answers["memory"], answers["git"])
				}
			}
		})
	}
}

// readAll is everything a loader of fsys rooted at dir answers about ps,
// as text.
func readAll(fsys loaders.FS, dir string, r loaders.Restriction, ps []string) string {
	var b strings.Builder
	errText := func(err error) string {
		if err == nil {
			return "ok"
		}
		return "error: " + err.Error()
	}
	real, err := loaders.RealDir(fsys, dir)
	fmt.Fprintf(&b, "RealDir %s %s\n", real, errText(err))
	fmt.Fprintf(&b, "HasKustomization %v\n", loaders.HasKustomization(fsys, dir))
	kf, err := loaders.FindKustomization(fsys, dir, r)
	if err == nil {
		fmt.Fprintf(&b, "FindKustomization %s %s %d %x %q\n", kf.Path, kf.Real, kf.Size, kf.Sum, kf.Content(fsys))
	} else {
		fmt.Fprintf(&b, "FindKustomization %s\n", errText(err))
	}
	l, err := loaders.New(fsys, dir, r)
	if err != nil {
		fmt.Fprintf(&b, "New %s\n", errText(err))
		return b.String()
	}
	for _, p := range ps {
		data, real, err := l.ReadFile(p)
		fmt.Fprintf(&b, "ReadFile %s: %q %s %s\n", p, data, real, errText(err))
		real, kind, err := l.Resolve(p)
		fmt.Fprintf(&b, "Resolve %s: %s %d %s\n", p, real, kind, errText(err))
		files, real, err := l.ReadTree(p)
		var names []string
		for _, f := range files {
			names = append(names, f.Rel+"="+fmt.Sprint(len(f.Data)))
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "ReadTree %s: %v %s %s\n", p, names, real, errText(err))
		if err == nil {
			listing, err := loaders.TreeListing(fsys, real)
			fmt.Fprintf(&b, "TreeListing %s: %q %s\n", real, listing, errText(err))
		}
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(&b, "  (not exist)\n")
		}
		abs := l.Abs(p)
		target, err := fsys.Readlink(abs)
		fmt.Fprintf(&b, "Readlink %s: %s %s\n", abs, target, errText(err))
		if fi, err := fsys.Lstat(abs); err == nil {
			fmt.Fprintf(&b, "Lstat %s: %s %s\n", abs, fi.Name(), fi.Mode().Type())
		} else {
			fmt.Fprintf(&b, "Lstat %s: %s\n", abs, errText(err))
		}
		if fi, err := fsys.Stat(abs); err == nil {
			fmt.Fprintf(&b, "Stat %s: %s %s\n", abs, fi.Name(), fi.Mode().Type())
		} else {
			fmt.Fprintf(&b, "Stat %s: %s\n", abs, errText(err))
		}
		if _, entries, err := fsys.ReadDir(abs); err == nil {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name()+":"+e.Type().String())
			}
			sort.Strings(names)
			fmt.Fprintf(&b, "ReadDir %s: %v\n", abs, names)
		} else {
			fmt.Fprintf(&b, "ReadDir %s: %s\n", abs, errText(err))
		}
	}
	return b.String()
}
