package fleet

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
)

// git runs git in dir and returns its standard output.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if s := strings.TrimSpace(stderr.String()); s != "" {
			return nil, &gitError{args: args, msg: s}
		}
		return nil, err
	}
	return out, nil
}

type gitError struct {
	args []string
	msg  string
}

func (e *gitError) Error() string { return "git " + strings.Join(e.args, " ") + ": " + e.msg }

// Remotes are the URLs of the remotes of the repository at top: "this
// repository" for Applications' repoURLs. None outside a repository.
func Remotes(ctx context.Context, top string) []string {
	out, err := git(ctx, top, "config", "--get-regexp", `^remote\..*\.url$`)
	if err != nil {
		return nil
	}
	var urls []string
	for _, l := range strings.Split(string(out), "\n") {
		if _, u, ok := strings.Cut(strings.TrimSpace(l), " "); ok {
			urls = append(urls, strings.TrimSpace(u))
		}
	}
	return urls
}

// Tracked lists the files of the working tree at top that a commit would
// hold: those git tracks and the untracked ones it does not ignore
// (slash paths from top), for ApplicationSets' git file generators.
func Tracked(ctx context.Context, top string) ([]string, error) {
	out, err := git(ctx, top, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	var files []string
	seen := map[string]bool{}
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	return files, nil
}

// Head is the commit checked out at top ("" outside a repository, or
// before the first commit).
func Head(ctx context.Context, top string) string {
	out, err := git(ctx, top, "rev-parse", "--verify", "-q", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
