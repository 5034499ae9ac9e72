// Package affected finds the kustomization roots whose output a set of
// changed paths can change: the roots CI must render again after a commit,
// and the roots `kpipe diff` compares.
//
// A root is affected when a changed path is one its build read (a
// kustomization file, a resource, a patch, a generator's source...), lies
// under a directory its build depends on whole (a node that runs plugins or
// helm charts), or adds or removes a kustomization file in one of its
// kustomization directories. What a root read comes from package batch (the
// root index of an earlier run, or a build through the cache), so the
// answer is exact for roots without plugins and conservative for the rest:
// a path a root did not read cannot change its output, because every read
// that could differ would itself be a changed path.
//
// Changed paths come from git (Git): the paths that differ between a
// revision and the working tree (or another revision), with untracked,
// not-ignored files counted as added.
package affected

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/loaders"
)

// Status says how a path changed.
type Status byte

// The statuses of a change, as git names them.
const (
	Added    Status = 'A'
	Deleted  Status = 'D'
	Modified Status = 'M'
)

// Change is one changed path.
type Change struct {
	// Path is the changed path: relative to the repository's top level
	// from Git, absolute once Under has placed it in a tree.
	Path   string
	Status Status
}

// Under returns the changes with their paths joined to dir (a tree holding
// the repository's files at one revision).
func Under(dir string, changes []Change) []Change {
	out := make([]Change, len(changes))
	for i, c := range changes {
		out[i] = Change{Path: filepath.Join(dir, filepath.FromSlash(c.Path)), Status: c.Status}
	}
	return out
}

// Repo is a git repository's top level, as git names it and with symlinks
// resolved.
type Repo struct {
	Top string
}

// OpenRepo finds the git repository holding dir: the nearest directory at
// or above it that holds a .git directory of the plain kind (not a bare
// one, and with no core.worktree), when git's environment does not point
// elsewhere; otherwise, and for anything else (a linked worktree or a
// submodule, whose .git is a file; dir inside a .git directory), where
// `git rev-parse --show-toplevel` says. (That process was a tenth of a
// warm review's time on a loaded 2-core machine.)
func OpenRepo(ctx context.Context, dir string) (Repo, error) {
	if top, ok := plainTop(dir); ok {
		return Repo{Top: top}, nil
	}
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return Repo{}, err
	}
	top := strings.TrimSpace(string(out))
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	return Repo{Top: top}, nil
}

// plainTop finds the top level of the repository holding dir where that
// is plain (see OpenRepo); false where git had better be asked.
func plainTop(dir string) (string, bool) {
	for _, v := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"} {
		if os.Getenv(v) != "" {
			return "", false
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	d, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", false
	}
	for {
		if filepath.Base(d) == ".git" {
			return "", false // inside the repository's own directory
		}
		fi, err := os.Lstat(filepath.Join(d, ".git"))
		switch {
		case err == nil && !fi.IsDir():
			return "", false // a linked worktree, a submodule
		case err == nil:
			if _, err := os.Stat(filepath.Join(d, ".git", "HEAD")); err != nil {
				return "", false
			}
			cfg, err := os.ReadFile(filepath.Join(d, ".git", "config"))
			if err != nil || bytes.Contains(cfg, []byte("worktree")) || bytes.Contains(cfg, []byte("bare = true")) {
				return "", false
			}
			return d, true
		case !os.IsNotExist(err):
			return "", false
		}
		if parent := filepath.Dir(d); parent != d {
			d = parent
			continue
		}
		return "", false
	}
}

// Git lists the paths that differ between revision base and head (head ""
// is the working tree, where untracked files that are not ignored count
// as added), relative to the repository's top level, slash-separated. A
// rename is a deletion and an addition.
func (r Repo) Git(ctx context.Context, base, head string) ([]Change, error) {
	args := []string{"diff", "--name-status", "-z", "--no-renames", "--no-ext-diff", base}
	if head != "" {
		args = append(args, head)
	}
	out, err := git(ctx, r.Top, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	var changes []Change
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		st := fields[i]
		if len(st) == 0 {
			break
		}
		s := Modified
		switch st[0] {
		case 'A':
			s = Added
		case 'D':
			s = Deleted
		}
		changes = append(changes, Change{Path: string(fields[i+1]), Status: s})
	}
	if head == "" {
		out, err := git(ctx, r.Top, "ls-files", "--others", "--exclude-standard", "-z")
		if err != nil {
			return nil, err
		}
		for _, p := range bytes.Split(out, []byte{0}) {
			if len(p) > 0 {
				changes = append(changes, Change{Path: string(p), Status: Added})
			}
		}
	}
	return changes, nil
}

// ResolveRev returns the commit a revision names.
func (r Repo) ResolveRev(ctx context.Context, rev string) (string, error) {
	out, err := git(ctx, r.Top, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%s is not a commit of the repository at %s", rev, r.Top)
	}
	return strings.TrimSpace(string(out)), nil
}

// DefaultBase is the merge base of HEAD with the repository's default
// branch: origin's HEAD when the clone knows it, else main or master (local
// or origin's).
func (r Repo) DefaultBase(ctx context.Context) (string, error) {
	var candidates []string
	if out, err := git(ctx, r.Top, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	candidates = append(candidates, "refs/heads/main", "refs/remotes/origin/main", "refs/heads/master", "refs/remotes/origin/master")
	for _, c := range candidates {
		if _, err := git(ctx, r.Top, "rev-parse", "--verify", "--quiet", c); err != nil {
			continue
		}
		out, err := git(ctx, r.Top, "merge-base", "HEAD", c)
		if err != nil {
			continue
		}
		return strings.TrimSpace(string(out)), nil
	}
	return "", errors.New("no --base given, and the repository has no default branch (origin/HEAD, main or master) to take the merge base with")
}

// git runs git in dir and returns its standard output; an error carries
// git's message.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return out, nil
}

// Matcher answers whether a root's reads meet a set of changes. Build it
// once per set of changes (absolute paths) and ask it for every root.
type Matcher struct {
	fs        loaders.FS        // the tree the changed paths lie in
	changed   map[string]Change // every changed path
	ancestors map[string]string // every directory above a changed path -> that path
	kustDirs  map[string]string // directories where a kustomization file was added or removed -> that file
}

// NewMatcher prepares the changes (absolute paths of fsys) for matching.
func NewMatcher(fsys loaders.FS, changes []Change) *Matcher {
	m := &Matcher{fs: fsys, changed: map[string]Change{}, ancestors: map[string]string{}, kustDirs: map[string]string{}}
	for _, c := range changes {
		p := filepath.Clean(c.Path)
		m.changed[p] = c
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			if _, ok := m.ancestors[d]; !ok {
				m.ancestors[d] = p
			}
			if d == filepath.Dir(d) {
				break
			}
		}
		if c.Status != Modified && slices.Contains(loaders.FileNames, filepath.Base(p)) {
			m.kustDirs[filepath.Dir(p)] = p
		}
	}
	return m
}

// Match returns the changed paths that can change the output of a root
// that read rs (none: the root is not affected).
func (m *Matcher) Match(rs engine.ReadSet) []string {
	hit := map[string]bool{}
	for _, f := range rs.Files {
		if _, ok := m.changed[f]; ok {
			hit[f] = true
		}
		// A file that became a directory, or the reverse.
		if p, ok := m.ancestors[f]; ok {
			hit[p] = true
		}
	}
	for _, t := range rs.Trees {
		if _, ok := m.changed[t]; ok {
			hit[t] = true
		}
		if _, ok := m.ancestors[t]; ok {
			for p := range m.changed {
				if loaders.Within(t, p) {
					hit[p] = true
				}
			}
		}
	}
	for _, d := range rs.Dirs {
		if p, ok := m.kustDirs[d]; ok {
			hit[p] = true
		}
	}
	for _, e := range rs.Either {
		if _, ok := m.changed[e]; ok {
			hit[e] = true
		}
		if p, ok := m.kustDirs[e]; ok {
			hit[p] = true
		}
		// Under a file that became a directory; a directory that still is
		// one is not reached by what changes under it.
		if p, ok := m.ancestors[e]; ok {
			if fi, err := m.fs.Stat(e); err != nil || !fi.IsDir() {
				hit[p] = true
			}
		}
	}
	out := make([]string, 0, len(hit))
	for p := range hit {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Root is one root and why it is affected.
type Root struct {
	// Path is the root's directory.
	Path string `json:"path"`
	// Because are the changed paths that reach it.
	Because []string `json:"because"`
	// Error is the root's build error in the tree, if it failed.
	Error string `json:"error,omitempty"`
}

// Find runs o (package batch: every root is built or found up to date, and
// what each read is recorded) and returns the roots that changes reach,
// in the order of the report, with the report.
func Find(ctx context.Context, o batch.Options, changes []Change) ([]Root, *batch.Report, error) {
	o.Reads = true
	rep, err := batch.Run(ctx, o)
	if err != nil {
		return nil, rep, err
	}
	fsys := o.FS
	if fsys == nil {
		fsys = loaders.Disk
	}
	m := NewMatcher(fsys, changes)
	var roots []Root
	for _, rr := range rep.Roots {
		if rr.Reads == nil {
			continue
		}
		if because := m.Match(*rr.Reads); len(because) > 0 {
			roots = append(roots, Root{Path: rr.Path, Because: because, Error: rr.Error})
		}
	}
	return roots, rep, nil
}

// RemovedKustomizations are the directories where a kustomization file was
// deleted and none is left in fsys: roots or bases that no longer exist.
func RemovedKustomizations(fsys loaders.FS, changes []Change) []string {
	var out []string
	for _, c := range changes {
		if c.Status != Deleted || !slices.Contains(loaders.FileNames, filepath.Base(c.Path)) {
			continue
		}
		if dir := filepath.Dir(c.Path); !loaders.HasKustomization(fsys, dir) {
			out = append(out, dir)
		}
	}
	slices.Sort(out)
	return out
}
