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
	"strconv"
	"strings"
)

// Extract writes the files of revision rev into dir (which must exist and
// be empty), read from git's objects: the user's working tree, index and
// stash are never touched, and unlike `git archive` no export-ignore or
// export-subst attribute changes what is written. Executable bits and
// symbolic links are kept; submodules are left out (their directory is
// created empty).
func (r Repo) Extract(ctx context.Context, rev, dir string) error {
	list, err := git(ctx, r.Top, "ls-tree", "-r", "-z", "--full-tree", rev)
	if err != nil {
		return err
	}
	type blob struct {
		mode, sha, path string
	}
	var blobs []blob
	for _, rec := range bytes.Split(list, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return fmt.Errorf("git ls-tree %s: unexpected line %q", rev, rec)
		}
		if !localPath(path) {
			return fmt.Errorf("git ls-tree %s: refusing path %q", rev, path)
		}
		switch f[1] {
		case "blob":
			blobs = append(blobs, blob{mode: f[0], sha: f[2], path: path})
		case "commit": // a submodule
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(path)), 0o755); err != nil {
				return err
			}
		}
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
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			werr = err
			break
		}
		switch b.mode {
		case "120000":
			err = os.Symlink(string(data), dst)
		case "100755":
			err = os.WriteFile(dst, data, 0o755)
		default:
			err = os.WriteFile(dst, data, 0o644)
		}
		if err != nil {
			werr = err
			break
		}
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
