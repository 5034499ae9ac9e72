package affected

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Tree is the listing of one revision's files, read from git's objects.
type Tree struct {
	rev   string
	blobs map[string]treeBlob // by slash-separated path
	subs  []string            // submodule paths
	// done are the paths written so far, by WriteTo.
	done map[string]bool
}

type treeBlob struct {
	mode, sha string
}

// ListTree lists the files of revision rev.
func (r Repo) ListTree(ctx context.Context, rev string) (*Tree, error) {
	list, err := git(ctx, r.Top, "ls-tree", "-r", "-z", "--full-tree", rev)
	if err != nil {
		return nil, err
	}
	t := &Tree{rev: rev, blobs: map[string]treeBlob{}, done: map[string]bool{}}
	for _, rec := range bytes.Split(list, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("git ls-tree %s: unexpected line %q", rev, rec)
		}
		if !localPath(path) {
			return nil, fmt.Errorf("git ls-tree %s: refusing path %q", rev, path)
		}
		switch f[1] {
		case "blob":
			t.blobs[path] = treeBlob{mode: f[0], sha: f[2]}
		case "commit": // a submodule
			t.subs = append(t.subs, path)
		}
	}
	return t, nil
}

// Has reports whether the revision has a file at path (slash-separated).
func (t *Tree) Has(path string) bool {
	_, ok := t.blobs[path]
	return ok
}

// Under lists the files under directory dir ("." or "": all).
func (t *Tree) Under(dir string) []string {
	var out []string
	for p := range t.blobs {
		if dir == "." || dir == "" || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// Len is the number of files of the revision.
func (t *Tree) Len() int { return len(t.blobs) }

// Missing reports the number of files not written yet.
func (t *Tree) Missing() int { return len(t.blobs) - len(t.done) }

// Extract writes every file of revision rev into dir (which must exist and
// be empty), read from git's objects: the user's working tree, index and
// stash are never touched, and unlike `git archive` no export-ignore or
// export-subst attribute changes what is written. Executable bits and
// symbolic links are kept; submodules are left out (their directory is
// created empty).
func (r Repo) Extract(ctx context.Context, rev, dir string) error {
	t, err := r.ListTree(ctx, rev)
	if err != nil {
		return err
	}
	return r.WriteTo(ctx, t, dir, nil)
}

// WriteTo writes the files paths of t into dir (nil: every file not
// written yet), skipping those written before and those t does not have.
func (r Repo) WriteTo(ctx context.Context, t *Tree, dir string, paths []string) error {
	type blob struct {
		treeBlob
		path string
	}
	var blobs []blob
	if paths == nil {
		for _, s := range t.subs {
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(s)), 0o755); err != nil {
				return err
			}
		}
		for p, b := range t.blobs {
			if !t.done[p] {
				blobs = append(blobs, blob{b, p})
			}
		}
	}
	for _, p := range paths {
		if b, ok := t.blobs[p]; ok && !t.done[p] {
			blobs = append(blobs, blob{b, p})
		}
	}
	if len(blobs) == 0 {
		return nil
	}
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Dir = r.Top
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git cat-file: %w", err)
	}
	go func() {
		w := bufio.NewWriter(stdin)
		for _, b := range blobs {
			fmt.Fprintln(w, b.sha)
		}
		_ = w.Flush()
		_ = stdin.Close()
	}()
	rd := bufio.NewReaderSize(stdout, 1<<16)
	made := map[string]bool{}
	var werr error
	for _, b := range blobs {
		header, err := rd.ReadString('\n')
		if err != nil {
			werr = fmt.Errorf("git cat-file: %v: %s", err, strings.TrimSpace(stderr.String()))
			break
		}
		hf := strings.Fields(header)
		if len(hf) != 3 || hf[1] != "blob" {
			werr = fmt.Errorf("git cat-file: unexpected answer %q for %s", strings.TrimSpace(header), b.path)
			break
		}
		size, err := strconv.ParseInt(hf[2], 10, 64)
		if err != nil {
			werr = fmt.Errorf("git cat-file: bad size in %q", strings.TrimSpace(header))
			break
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(rd, data); err != nil {
			werr = fmt.Errorf("git cat-file: reading %s: %w", b.path, err)
			break
		}
		if _, err := rd.Discard(1); err != nil { // the newline after the content
			werr = fmt.Errorf("git cat-file: reading %s: %w", b.path, err)
			break
		}
		dst := filepath.Join(dir, filepath.FromSlash(b.path))
		if parent := filepath.Dir(dst); !made[parent] {
			if err := os.MkdirAll(parent, 0o755); err != nil {
				werr = err
				break
			}
			made[parent] = true
		}
		switch b.mode {
		case "120000":
			if err = os.Symlink(string(data), dst); err != nil && runtime.GOOS == "windows" {
				// Without the right to make symlinks, write the link as a
				// file holding its target, as git does there with
				// core.symlinks=false.
				err = os.WriteFile(dst, data, 0o644)
			}
		case "100755":
			err = os.WriteFile(dst, data, 0o755)
		default:
			err = os.WriteFile(dst, data, 0o644)
		}
		if err != nil {
			werr = err
			break
		}
		t.done[b.path] = true
	}
	if werr != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return werr
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git cat-file: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// localPath reports whether a path from git's tree stays inside the tree
// it is written into.
func localPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "." || part == "" || part == ".git" {
			return false
		}
	}
	return filepath.IsLocal(filepath.FromSlash(p))
}
