package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/giturl"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
)

// errNoFetcher is the error of a remote entry in a graph loaded without a
// Fetcher.
var errNoFetcher = errors.New("remote resources are not enabled in this build (no fetcher)")

// loadURL loads the `resources` entry e of n, an http(s) URL, as kustomize
// does: a GET; a 2xx response is a resource file; any other status fails,
// unless the URL is also a git URL, which is then loaded as a remote
// base. A URL whose path marks a repository ("//", "_git/", ".git"), or
// whose commit-id ref is checked out already, is loaded as a remote base
// without the GET, which can only fail (kpipe's departure: a build from
// cache then asks the network nothing).
func (g *Graph) loadURL(n *Node, e *Entry, chain []string) *Entry {
	p := e.Path
	e.Remote = true
	spec, gitErr := giturl.ParseGitURL(p)
	var fileErr error
	switch {
	case gitErr == nil && (marksRepo(p, spec) || (g.remote != nil && g.remote.HasPinnedCheckout(spec))):
		fileErr = errors.New("URL is a git repository")
	case g.remote == nil:
		fileErr = errNoFetcher
	default:
		data, err := g.remote.File(g.ctx, p)
		if err == nil {
			e.File, e.Data, e.src = p, data, &fileRead{data: data, real: p}
			if gitErr != nil {
				return e
			}
			// kustomize tries a body that is not resources (a web page at
			// a repository's URL) as a repository, and reports only the
			// body's syntax error when that fails too.
			_, derr := resyaml.Decode(data)
			if derr == nil {
				return e
			}
			fileErr := decodeError(e, derr)
			f := &Entry{Path: p, Remote: true}
			g.resourceDir(n, f, fileErr, chain)
			var se *resyaml.SyntaxError
			if f.Err != nil && errors.As(derr, &se) {
				f.Err = fileErr
			}
			return f
		}
		var se *fetch.StatusError
		switch {
		case errors.As(err, &se) && gitErr != nil:
			e.Err = fmt.Errorf("accumulating resources from '%s': %w", p, err)
			return e
		case errors.As(err, &se):
			fileErr = errors.New("URL is a git repository")
		default:
			fileErr = err
		}
	}
	return g.resourceDir(n, e, fmt.Errorf("accumulating resources from '%s': %w", p, fileErr), chain)
}

// marksRepo reports whether the http(s) URL p names a repository by its
// shape: a "//" in its path, a "_git/" segment, or a ".git" repository.
func marksRepo(p string, spec *giturl.GitSpec) bool {
	u, _, _ := strings.Cut(p, "?")
	if _, after, ok := strings.Cut(u, "://"); ok && strings.Contains(after, "//") {
		return true
	}
	return strings.Contains(spec.Repo, "_git/") || strings.HasSuffix(spec.Repo, ".git")
}

// loadRemote loads the remote base p of n: the kustomization directory
// spec.Path of the repository, checked out by the graph's Fetcher.
func (g *Graph) loadRemote(n *Node, p string, spec *giturl.GitSpec, chain []string) (*Node, error) {
	if g.remote == nil {
		return nil, fmt.Errorf("%s: %w", p, errNoFetcher)
	}
	if giturl.HasGitPrefix(p) {
		g.runWarn(giturl.ForcedGitWarning)
	}
	co, err := g.remote.Repo(g.ctx, spec)
	if err != nil {
		return nil, err
	}
	g.warnStale(co)
	abs := filepath.Join(co.Dir, filepath.FromSlash(spec.Path))
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("%s: no directory '%s' in %s at commit %s", p, spec.Path, spec.CloneURL(), co.Commit)
	}
	if !loaders.Within(co.Dir, real) {
		return nil, fmt.Errorf("%q refers to directory outside of repo %q", abs, co.Dir)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("'%s' refers to file '%s'; expecting directory", abs, filepath.Base(real))
	}
	return g.loadChild(n, p, real, chain, childMeta(n, p), &RemoteRepo{Spec: spec, Checkout: co})
}

// warnStale adds, once, the warning of a checkout used because its remote
// could not be reached.
func (g *Graph) warnStale(co *fetch.Checkout) {
	g.runWarn(co.Stale)
}

// fetchFile fetches an http(s) file a kustomization names (an `openapi:`
// schema) with the graph's Fetcher.
func (g *Graph) fetchFile(url string) ([]byte, error) {
	if g.remote == nil {
		return nil, errNoFetcher
	}
	return g.remote.File(g.ctx, url)
}
