// Package giturl reads the URLs of remote bases with kustomize's rules
// (ParseGitURL: a `resources` or `components` entry such as
// github.com/org/repo//dir?ref=v1), and tells remote entries from local
// ones. It does no I/O: package fetch fetches what it names, and package
// stages names remote objects' origins with it.
//
// It imports nothing of kpipe.
package giturl

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// GitSpec is a git repository named by a `resources` or `components`
// entry, with the directory of the kustomization in it and the ref to
// check out. ParseGitURL reads it with kustomize's rules.
type GitSpec struct {
	// Raw is the entry as written.
	Raw string
	// Host is the scheme, user and host, normalized as kustomize does:
	// "https://github.com/", "git@github.com:", "ssh://git@host:7999/",
	// "file://".
	Host string
	// Repo is the repository's path on the host ("org/repo",
	// "org/repo.git", "/abs/repo.git" for file://).
	Repo string
	// Path is the kustomization's directory in the repository, with
	// slashes, "" for its root. It is as written after the separator
	// (a trailing slash is kept), as kustomize keeps it.
	Path string
	// Ref is the branch, tag or commit (?ref=, else ?version=); "" means
	// the remote's HEAD.
	Ref string
	// Submodules says whether submodules are checked out (?submodules=,
	// default true).
	Submodules bool
	// Timeout bounds each git command (?timeout=, default 27s).
	Timeout time.Duration
}

// DefaultTimeout is kustomize's bound on each git command of a fetch.
const DefaultTimeout = 27 * time.Second

// CloneURL is the URL given to git: Host followed by Repo.
func (s *GitSpec) CloneURL() string { return s.Host + s.Repo }

// OriginPath is the path kustomize writes in the origin annotation of
// the objects of this repository's kustomization: Path, cleaned; for the
// repository's root, kustomize writes "notCloned" (the name of the
// placeholder it joins the path to before cloning), and so does kpipe.
func (s *GitSpec) OriginPath() string {
	if p := strings.Trim(filepath.ToSlash(filepath.Clean("/"+s.Path)), "/"); p != "" {
		return p
	}
	return "notCloned"
}

// Parse errors, as kustomize words them.
var (
	errScheme   = errors.New("failed to parse scheme")
	errHost     = errors.New("failed to parse host segment")
	errRepoPath = errors.New("failed to parse repo path segment")
)

// ParseGitURL reads s as kustomize reads a remote base: it fails for
// anything that is not a git URL, which is how a local path is told from
// a remote one. The rules, in kustomize's order:
//
//   - an absolute local path is not a URL;
//   - the query (after the first '?') gives ref (or version), timeout
//     (whole seconds or a Go duration, positive) and submodules (a Go
//     bool); a value that does not parse keeps the default;
//   - a "git::" prefix (go-getter's) is dropped, with a warning;
//   - the scheme is one of ssh://, https://, http://, file:// (any
//     case); without one, the URL must be scp-like: a user ("git@") or a
//     github.com host, with ':' or '/' after the host;
//   - file:// takes the rest as the repository's path;
//   - github.com is normalized to https://github.com/ without a user,
//     or to user@github.com: with one (or with ssh://);
//   - the repository ends at the segment after "_git/", else at "//"
//     (which is dropped), else just after ".git", else after two
//     segments (file://: the whole path); what follows is the
//     kustomization's directory, which may not leave the repository.
func ParseGitURL(s string) (*GitSpec, error) {
	if filepath.IsAbs(s) || strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("uri looks like abs path: %s", s)
	}
	spec := &GitSpec{Raw: s}
	rest, query, _ := strings.Cut(s, "?")
	spec.Ref, spec.Timeout, spec.Submodules = parseQuery(query)
	host, rest, err := splitHost(rest)
	if err != nil {
		return nil, err
	}
	spec.Host = host
	all := strings.HasPrefix(host, "file://")
	if spec.Repo, spec.Path, err = splitRepo(rest, all); err != nil {
		return nil, err
	}
	return spec, nil
}

// HasGitPrefix reports whether s starts with go-getter's "git::", which
// kustomize drops with a warning (ForcedGitWarning).
func HasGitPrefix(s string) bool {
	_, ok := cutPrefixFold(s, "git::")
	return ok
}

// ForcedGitWarning is kustomize's warning for a "git::" URL.
const ForcedGitWarning = "Warning: Forcing the git protocol using the 'git::' URL prefix is not supported. " +
	"Kustomize currently strips this invalid prefix, but will stop doing so in a future release. " +
	"Please remove the 'git::' prefix from your configuration."

func parseQuery(query string) (ref string, timeout time.Duration, submodules bool) {
	timeout, submodules = DefaultTimeout, true
	values, err := url.ParseQuery(query)
	if err != nil {
		return "", timeout, submodules
	}
	ref = values.Get("ref")
	if ref == "" {
		ref = values.Get("version")
	}
	if v := values.Get("timeout"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			timeout = time.Duration(n) * time.Second
		} else if d, err := time.ParseDuration(v); err == nil && d > 0 {
			timeout = d
		}
	}
	if v := values.Get("submodules"); v != "" {
		if b, err := strconv.ParseBool(v); err == nil {
			submodules = b
		}
	}
	return ref, timeout, submodules
}

var userPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`) })

// splitHost returns the normalized scheme+user+host of s and the path
// after it.
func splitHost(s string) (string, string, error) {
	s, _ = cutPrefixFold(s, "git::")
	scheme := ""
	for _, p := range []string{"ssh://", "https://", "http://", "file://"} {
		if rest, ok := cutPrefixFold(s, p); ok {
			scheme, s = p, rest
			break
		}
	}
	user := userPattern().FindString(s)
	s = s[len(user):]
	lower := strings.ToLower(s)
	github := strings.HasPrefix(lower, "github.com/") || strings.HasPrefix(lower, "github.com:")
	scp := scheme == "" && (user != "" || github)
	if scheme == "" && !scp {
		return "", "", errScheme
	}
	if scheme == "file://" {
		return scheme, user + s, nil
	}
	host, rest := s, ""
	sep := strings.Index(s, "/")
	if scp {
		if colon := strings.Index(s, ":"); sep < 0 || (colon > 0 && colon < sep) {
			sep = colon
		}
	}
	if sep >= 0 {
		host, rest = s[:sep+1], s[sep+1:]
	}
	if github {
		if scheme == "ssh://" || user != "" {
			scheme, host = "", "github.com:"
		} else {
			scheme, user, host = "https://", "", "github.com/"
		}
	}
	if host == "" {
		return "", "", errHost
	}
	return scheme + user + host, rest, nil
}

// splitRepo splits the path after the host into the repository and the
// kustomization's directory in it.
func splitRepo(s string, all bool) (string, string, error) {
	repo, dir, ok := "", "", true
	switch {
	case strings.Contains(s, "_git/"):
		i := strings.Index(s, "_git/") + len("_git/")
		first, after, _ := strings.Cut(s[i:], "/")
		repo, dir = s[:i]+first, after
	case strings.Contains(s, "//"):
		repo, dir, _ = strings.Cut(s, "//")
	case strings.Contains(s, ".git"):
		i := strings.Index(s, ".git") + len(".git")
		repo, dir = s[:i], s[i:]
	case all:
		repo = s
	default:
		parts := strings.Split(s, "/")
		if len(parts) < 2 {
			ok = false
			break
		}
		repo, dir = strings.Join(parts[:2], "/"), strings.Join(parts[2:], "/")
	}
	if !ok || repo == "" {
		return "", "", errRepoPath
	}
	clean := filepath.ToSlash(filepath.Clean(strings.TrimPrefix(dir, "/")))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", "", fmt.Errorf("url path exits repo: %s", s)
	}
	return repo, strings.TrimPrefix(dir, "/"), nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// IsHTTPURL reports whether s is an http:// or https:// URL, which
// kustomize loads as a file with a GET before trying it as a repository.
func IsHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}
