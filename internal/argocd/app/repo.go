package app

import (
	"io/fs"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

var sshURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(ssh://)?([^/:]*?)@[^@]+$`) })

// NormalizeGitURL is Argo CD's git.NormalizeGitURL: trimmed, lowercased,
// scp-style "user@host:path" turned into "user@host/path", "ssh://" and a
// ".git" suffix dropped; "" when the URL does not parse.
func NormalizeGitURL(repo string) string {
	repo = strings.ToLower(strings.TrimSpace(repo))
	if sshURL().MatchString(repo) && !strings.HasPrefix(repo, "ssh://") {
		repo = "ssh://" + strings.Replace(repo, ":", "/", 1)
	}
	repo = strings.TrimSuffix(repo, ".git")
	u, err := url.Parse(repo)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.String(), "ssh://")
}

// Repos decides which repoURLs are "this repository": those equal, after
// NormalizeGitURL (Argo CD's own comparison), to one of URLs, or naming
// the same host and path (kinder than Argo CD: a remote cloned over ssh,
// git@host:org/repo, is the https://host/org/repo.git an Application
// names).
type Repos struct {
	norm  map[string]bool
	hosts map[string]bool
}

// NewRepos returns the matcher for the repository known by urls (its
// remotes, or what the user named).
func NewRepos(urls ...string) *Repos {
	r := &Repos{norm: map[string]bool{}, hosts: map[string]bool{}}
	for _, u := range urls {
		if n := NormalizeGitURL(u); n != "" {
			r.norm[n] = true
		}
		if k := hostPath(u); k != "" {
			r.hosts[k] = true
		}
	}
	return r
}

// Local reports whether repoURL is this repository.
func (r *Repos) Local(repoURL string) bool {
	if n := NormalizeGitURL(repoURL); n != "" && r.norm[n] {
		return true
	}
	k := hostPath(repoURL)
	return k != "" && r.hosts[k]
}

// hostPath is a git URL's host and path, lowercased, without the scheme,
// user, port, ".git" and slashes at either end: "github.com/org/repo" for
// https://github.com/org/repo.git, git@github.com:org/repo and
// ssh://git@github.com:22/org/repo; "" for anything else.
func hostPath(u string) string {
	u = strings.ToLower(strings.TrimSpace(u))
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	} else if at, colon := strings.Index(u, "@"), strings.Index(u, ":"); colon > 0 && (at < 0 || at < colon) && !strings.Contains(u[:colon], "/") {
		u = u[:colon] + "/" + u[colon+1:] // scp-like user@host:path
	} else {
		return ""
	}
	if at := strings.LastIndex(u[:max(strings.Index(u, "/"), 0)], "@"); at >= 0 {
		u = u[at+1:]
	}
	host, p, ok := strings.Cut(u, "/")
	if !ok {
		return ""
	}
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	p = strings.Trim(strings.TrimSuffix(strings.Trim(p, "/"), ".git"), "/")
	if host == "" || p == "" {
		return ""
	}
	return host + "/" + p
}

// Skip says why a source cannot be rendered from this repository's
// checkout, or "" when it can: Helm repository and OCI sources, plugin
// sources, other repositories.
func (r *Repos) Skip(src *ApplicationSource) string {
	switch {
	case src.IsOCI():
		return "OCI source " + src.RepoURL + ": needs a registry"
	case src.IsHelm():
		return "Helm repository chart " + src.Chart + " from " + src.RepoURL + ": needs the network"
	case !r.Local(src.RepoURL):
		return "repository " + src.RepoURL + " is not this repository"
	case src.Plugin != nil:
		return "config management plugin source: plugins are not rendered"
	}
	return ""
}

// Checkout is a repository's tree as the repo-server sees its checkout:
// FS is rooted at the repository root (slash paths, as io/fs names
// them); Root is how messages name that root (Argo CD's users read
// "<path to cached source>"; kpipe names the directory).
type Checkout struct {
	FS   fs.FS
	Root string
}

// Display names the slash path rel (relative to the root) in a message.
func (c Checkout) Display(rel string) string {
	if rel == "." || rel == "" {
		return c.Root
	}
	return c.Root + "/" + rel
}
