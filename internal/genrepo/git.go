package genrepo

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Git runs git in dir with a fixed author and committer (tests and
// benchmarks need no git configuration) and returns its standard output;
// an error carries git's output.
func Git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=genrepo", "GIT_AUTHOR_EMAIL=genrepo@example.com",
		"GIT_COMMITTER_NAME=genrepo", "GIT_COMMITTER_EMAIL=genrepo@example.com", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + strings.TrimSpace(string(ee.Stderr))
		}
		return string(out), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return string(out), nil
}

// InitGit makes dir a git repository on branch main whose first commit
// holds every file in it.
func InitGit(dir string) error {
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		if _, err := Git(dir, args...); err != nil {
			return err
		}
	}
	return nil
}
