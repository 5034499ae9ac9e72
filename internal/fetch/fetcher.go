package fetch

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kpipe/kpipe/internal/giturl"
)

// Options are the settings of a Fetcher.
type Options struct {
	// Dir is the directory the Fetcher keeps checkouts and files in; it
	// is created when missing. kpipe uses <cache dir>/remote.
	Dir string
	// Offline forbids every network request: only what Dir holds is
	// used, and anything else fails naming its URL.
	Offline bool
	// Git is the git executable; "" means "git" from PATH.
	Git string
	// Net makes the HTTP requests and unpacks charts' archives; nil means
	// none: a download that needs it fails with ErrNoNet, while what needs
	// no network still works (--offline reads of kept files, kept charts
	// of exact versions, git repositories, which the git command fetches).
	Net Net
	// BeforeFetch, when set, is called before every fetch (Repo, File,
	// Chart), which may start a process or make temporary files: kpipe's
	// CLI starts listening for stop signals there, so that it stops them
	// and removes the files.
	BeforeFetch func()
}

// A Fetcher fetches git repositories and HTTP files into its directory.
// It is safe for concurrent use; within the life of a Fetcher (a run),
// a URL and ref is resolved and fetched at most once, and a file is
// downloaded at most once.
type Fetcher struct {
	o Options

	mu     sync.Mutex
	repos  map[string]*once[*Checkout]
	files  map[string]*once[[]byte]
	charts map[string]*once[string]

	clock func() time.Time // nil: time.Now (tests set it)
}

type once[T any] struct {
	sync.Once
	v   T
	err error
}

// New returns a Fetcher with the given options.
func New(o Options) *Fetcher {
	if o.Git == "" {
		o.Git = "git"
	}
	return &Fetcher{o: o, repos: map[string]*once[*Checkout]{}, files: map[string]*once[[]byte]{}}
}

// Offline reports whether the Fetcher may not use the network.
func (f *Fetcher) Offline() bool { return f.o.Offline }

// beforeFetch calls Options.BeforeFetch, if set.
func (f *Fetcher) beforeFetch() {
	if f.o.BeforeFetch != nil {
		f.o.BeforeFetch()
	}
}

// Checkout is a repository checked out at one commit.
type Checkout struct {
	// Dir is the checkout's root: an absolute, symlink-free directory
	// that holds the repository's files (without .git) and never changes.
	Dir string
	// Commit is the commit checked out.
	Commit string
	// Pinned says that the ref was a full commit id: the checkout can be
	// reused without asking the remote anything.
	Pinned bool
	// Stale, when not empty, is the warning to print once: the remote
	// could not be reached (a network error, not an answer), so the ref
	// was not resolved again and the checkout is that of the commit it
	// resolved to before. It names the URL, the ref, the commit and when
	// the ref was last resolved.
	Stale string
}

// Repo returns the checkout of spec's repository at spec.Ref. A ref that
// is a full commit id is never asked for when its checkout is kept;
// another ref is resolved to a commit with `git ls-remote` (one request)
// and fetched (`git fetch --depth=1 <url> <ref>`, as kustomize does) only
// when that commit is not kept yet. Offline, the commit the ref last
// resolved to is used; online too when the remote cannot be reached and
// that commit's checkout is kept (Checkout.Stale says so). A remote that
// answers that it has no such ref or repository fails the build, as in
// kustomize.
func (f *Fetcher) Repo(ctx context.Context, spec *giturl.GitSpec) (*Checkout, error) {
	f.beforeFetch()
	key := spec.CloneURL() + "\x00" + spec.Ref + fmt.Sprintf("\x00%v", spec.Submodules)
	f.mu.Lock()
	o := f.repos[key]
	if o == nil {
		o = &once[*Checkout]{}
		f.repos[key] = o
	}
	f.mu.Unlock()
	o.Do(func() { o.v, o.err = f.repo(ctx, spec) })
	return o.v, o.err
}

// HasPinnedCheckout reports whether spec's ref is a full commit id whose
// checkout is kept: then the URL is known to be a repository, and using
// it asks nothing.
func (f *Fetcher) HasPinnedCheckout(spec *giturl.GitSpec) bool {
	if !IsCommitID(spec.Ref) {
		return false
	}
	name := spec.Ref
	if !spec.Submodules {
		name += "-nosubmodules"
	}
	return exists(filepath.Join(f.repoDir(spec.CloneURL()), name))
}

// repoDir is the directory of one repository URL's checkouts and refs.
func (f *Fetcher) repoDir(url string) string {
	return filepath.Join(f.o.Dir, "git", hashName(url))
}

func hashName(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:16])
}

// IsCommitID reports whether ref is a full SHA-1 or SHA-256 commit id.
func IsCommitID(ref string) bool {
	if len(ref) != 40 && len(ref) != 64 {
		return false
	}
	for _, c := range ref {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (f *Fetcher) repo(ctx context.Context, spec *giturl.GitSpec) (*Checkout, error) {
	url := spec.CloneURL()
	// git would read either as an option (--upload-pack=... runs a
	// command).
	if strings.HasPrefix(url, "-") || strings.HasPrefix(spec.Ref, "-") {
		return nil, fmt.Errorf("%s: neither the repository URL nor the ref (%q) may start with '-'", spec.Raw, spec.Ref)
	}
	dir := f.repoDir(url)
	checkoutDir := func(commit string) string {
		if spec.Submodules {
			return filepath.Join(dir, commit)
		}
		return filepath.Join(dir, commit+"-nosubmodules")
	}
	kept := func(commit string) (*Checkout, bool) {
		d := checkoutDir(commit)
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			f.markUsed(d)
			if real, err := filepath.EvalSymlinks(d); err == nil {
				return &Checkout{Dir: real, Commit: commit, Pinned: IsCommitID(spec.Ref)}, true
			}
		}
		return nil, false
	}
	refFile := filepath.Join(dir, "refs", hashName(spec.Ref))
	commit := ""
	switch {
	case IsCommitID(spec.Ref):
		commit = spec.Ref
	case f.o.Offline:
		data, err := os.ReadFile(refFile)
		if err != nil {
			return nil, fmt.Errorf("%s: ref %s was never fetched into kpipe's cache (%s), and --offline forbids fetching it", url, refName(spec.Ref), f.o.Dir)
		}
		commit = strings.TrimSpace(string(data))
	case !exists(dir):
		// Nothing of this URL is kept: fetch without asking first.
	default:
		c, err := f.lsRemote(ctx, spec)
		if err != nil {
			if co := f.keptWhenUnreachable(ctx, err, spec, refFile, kept); co != nil {
				return co, nil
			}
			return nil, err
		}
		commit = c
	}
	remember := func(commit string) {
		// What the ref named, for --offline and for a remote that cannot
		// be reached; the file's time is when the ref was last resolved.
		if IsCommitID(spec.Ref) || f.o.Offline {
			return
		}
		if data, err := os.ReadFile(refFile); err != nil || strings.TrimSpace(string(data)) != commit {
			_ = writeFileAtomic(refFile, []byte(commit+"\n"))
		} else {
			now := f.now()
			_ = os.Chtimes(refFile, now, now)
		}
	}
	if commit != "" {
		if co, ok := kept(commit); ok {
			remember(commit)
			return co, nil
		}
	}
	if f.o.Offline {
		return nil, fmt.Errorf("%s: commit %s (ref %s) is not in kpipe's cache (%s), and --offline forbids fetching it", url, commit, refName(spec.Ref), f.o.Dir)
	}
	got, err := f.fetch(ctx, spec, dir, checkoutDir)
	if err != nil {
		return nil, err
	}
	remember(got)
	co, ok := kept(got)
	if !ok {
		return nil, fmt.Errorf("%s: the checkout of %s disappeared from %s", url, got, dir)
	}
	return co, nil
}

// keptWhenUnreachable returns the kept checkout of the commit spec.Ref
// last resolved to (its record is refFile) when err, the failure to
// resolve the ref again, says that git could not read the repository: its
// host could not be reached, or the repository is not where the URL says
// any more (moved, deleted, refused). Only an answer from the repository
// that the ref is gone fails the build (lsRemote then succeeds, finding
// no ref); so does a run that was cancelled. Nil otherwise.
func (f *Fetcher) keptWhenUnreachable(ctx context.Context, err error, spec *giturl.GitSpec, refFile string, kept func(string) (*Checkout, bool)) *Checkout {
	var ge *gitError
	if !errors.As(err, &ge) || ctx.Err() != nil {
		return nil
	}
	data, rerr := os.ReadFile(refFile)
	st, serr := os.Stat(refFile)
	commit := strings.TrimSpace(string(data))
	if rerr != nil || serr != nil || !IsCommitID(commit) {
		return nil
	}
	co, ok := kept(commit)
	if !ok {
		return nil
	}
	what := "cannot be reached"
	if !ge.unreachable() {
		what = "cannot be read"
	}
	co.Stale = fmt.Sprintf("%s %s (%s): building ref %s from kpipe's kept checkout of commit %s, which the ref resolved to at %s",
		spec.CloneURL(), what, ge.reason(), refName(spec.Ref), commit, st.ModTime().UTC().Format(time.RFC3339))
	return co
}

func refName(ref string) string {
	if ref == "" {
		return "HEAD"
	}
	return ref
}

// lsRemote resolves spec.Ref to a commit as `git fetch` would (the first
// of <ref>, refs/<ref>, refs/tags/<ref> (its commit for an annotated
// tag), refs/heads/<ref>, refs/remotes/<ref>, refs/remotes/<ref>/HEAD that
// the remote has); "" when it has none of them (the fetch then decides).
func (f *Fetcher) lsRemote(ctx context.Context, spec *giturl.GitSpec) (string, error) {
	ref := refName(spec.Ref)
	// A pattern matches refs by their last components; "<ref>^{}" asks
	// for the commit an annotated tag points to.
	out, err := f.git(ctx, spec, "", "ls-remote", spec.CloneURL(), ref, ref+"^{}")
	if err != nil {
		return "", err
	}
	refs := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		sha, name, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if ok {
			refs[name] = sha
		}
	}
	for _, name := range []string{ref, "refs/" + ref, "refs/tags/" + ref, "refs/heads/" + ref, "refs/remotes/" + ref, "refs/remotes/" + ref + "/HEAD"} {
		if sha, ok := refs[name+"^{}"]; ok {
			return sha, nil
		}
		if sha, ok := refs[name]; ok {
			return sha, nil
		}
	}
	return "", nil
}

// fetch does what kustomize's cloner does (init, remote add, a shallow
// fetch of the ref, checkout, submodules) in a new directory beside the
// checkouts, then keeps it under the commit it got. It returns the
// commit.
func (f *Fetcher) fetch(ctx context.Context, spec *giturl.GitSpec, dir string, checkoutDir func(string) string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("%s: %w", spec.CloneURL(), err)
	}
	tmp, err := os.MkdirTemp(dir, ".tmp-")
	if err != nil {
		return "", fmt.Errorf("%s: %w", spec.CloneURL(), err)
	}
	defer os.RemoveAll(tmp)
	url := spec.CloneURL()
	steps := [][]string{
		{"init", "--quiet"},
		{"remote", "add", "origin", url},
		{"fetch", "--depth=1", url, refName(spec.Ref)},
		{"-c", "advice.detachedHead=false", "checkout", "--quiet", "FETCH_HEAD"},
	}
	if spec.Submodules {
		steps = append(steps, []string{"submodule", "update", "--init", "--recursive"})
	}
	for _, args := range steps {
		if _, err := f.git(ctx, spec, tmp, args...); err != nil {
			return "", err
		}
	}
	out, err := f.git(ctx, spec, tmp, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	commit := strings.TrimSpace(string(out))
	if !IsCommitID(commit) {
		return "", fmt.Errorf("%s: git rev-parse HEAD printed %q", url, commit)
	}
	if err := os.RemoveAll(filepath.Join(tmp, ".git")); err != nil {
		return "", fmt.Errorf("%s: %w", url, err)
	}
	final := checkoutDir(commit)
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(final); statErr != nil {
			return "", fmt.Errorf("%s: keeping the checkout: %w", url, err)
		}
		// Another run kept the same commit first: its files are the same.
	}
	return commit, nil
}

// git runs one git command in dir ("" for none) under spec's timeout. Its
// error names the command and carries git's message.
func (f *Fetcher) git(ctx context.Context, spec *giturl.GitSpec, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, f.o.Git, args...)
	cmd.Dir = dir
	// Never wait for a password on a terminal: fail instead.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%s: no git program: %w", spec.CloneURL(), err)
		}
		return nil, &gitError{url: spec.CloneURL(), args: args, msg: strings.TrimSpace(stderr.String()), err: err,
			timeout: spec.Timeout, timedOut: ctx.Err() == context.DeadlineExceeded}
	}
	return out.Bytes(), nil
}

// gitError is a git command that ran and failed.
type gitError struct {
	url      string
	args     []string
	msg      string // git's standard error, trimmed
	err      error
	timeout  time.Duration
	timedOut bool
}

func (e *gitError) Error() string {
	if e.timedOut {
		return fmt.Sprintf("%s: 'git %s' timed out after %s (set ?timeout= in the URL for more): %s", e.url, strings.Join(e.args, " "), e.timeout, e.msg)
	}
	return fmt.Sprintf("%s: 'git %s' failed: %s: %v", e.url, strings.Join(e.args, " "), e.msg, e.err)
}

func (e *gitError) Unwrap() error { return e.err }

// unreachableSigns are what git (through curl or ssh) prints when the
// remote could not be reached or did not answer as a git server: the
// network, name resolution, TLS, or a server error (5xx). An answer such
// as "repository not found" or a 403 is not among them.
var unreachableSigns = []string{
	"could not resolve host", "couldn't resolve host", "could not resolve hostname",
	"temporary failure in name resolution", "name or service not known",
	"failed to connect", "couldn't connect to server", "connection refused", "connection timed out",
	"connection reset", "operation timed out", "network is unreachable", "no route to host",
	"ssh: connect to host", "empty reply from server", "recv failure", "send failure",
	"gnutls_handshake() failed", "ssl_connect", "ssl_error_syscall", "tls connection was non-properly terminated",
	"the requested url returned error: 500", "the requested url returned error: 502",
	"the requested url returned error: 503", "the requested url returned error: 504",
}

// unreachable reports whether the command failed because the remote could
// not be reached (or timed out), rather than because it answered.
func (e *gitError) unreachable() bool {
	if e.timedOut {
		return true
	}
	m := strings.ToLower(e.msg)
	for _, s := range unreachableSigns {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// reason is git's last line of complaint, for a warning.
func (e *gitError) reason() string {
	if e.timedOut {
		return fmt.Sprintf("timed out after %s", e.timeout)
	}
	lines := strings.Split(e.msg, "\n")
	r := strings.TrimSpace(lines[len(lines)-1])
	r = strings.TrimPrefix(r, "fatal: ")
	if r == "" {
		return e.err.Error()
	}
	return r
}

// Net is what a download needs beyond package fetch: HTTP GETs and
// unpacking a chart's archive. The kpipe binary leaves both out (net and
// archive/tar link libc through cgo, which every run of kpipe pays for
// when it starts); kpipe-full and embedders pass netfetch.New(client).
type Net interface {
	// Get returns the body of a 2xx GET of url; another status is a
	// *StatusError.
	Get(ctx context.Context, url string) ([]byte, error)
	// Untar unpacks a gzipped tar archive into dir: regular files and
	// directories only, none outside dir.
	Untar(data []byte, dir string) error
}

// ErrNoNet is what a download fails with (wrapped, naming what it is
// for) when the Fetcher has no Net.
var ErrNoNet = errors.New("this kpipe binary has no network support")

// StatusError is an HTTP response other than 2xx to a GET of a file.
type StatusError struct {
	URL  string
	Code int
	// Text is the status code's text ("Not Found"; net/http's
	// StatusText, which the Net fills in).
	Text string
}

// Error is kustomize's wording ("HTTP Error: status code 404 (Not
// Found)"); kustomize's caller adds the URL.
func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP Error: status code %d (%s)", e.Code, e.Text)
}

// File returns the body of a GET of url, as kustomize loads a `resources`
// entry that is an http(s) URL: any status but 2xx is a *StatusError.
// Unlike a commit, a URL can change at any time: online, it is fetched
// once per run; the body is kept for --offline, which reads it instead.
func (f *Fetcher) File(ctx context.Context, url string) ([]byte, error) {
	f.beforeFetch()
	f.mu.Lock()
	o := f.files[url]
	if o == nil {
		o = &once[[]byte]{}
		f.files[url] = o
	}
	f.mu.Unlock()
	o.Do(func() { o.v, o.err = f.file(ctx, url) })
	return o.v, o.err
}

func (f *Fetcher) file(ctx context.Context, url string) ([]byte, error) {
	kept := filepath.Join(f.o.Dir, "http", hashName(url))
	if f.o.Offline {
		data, err := os.ReadFile(kept)
		if err != nil {
			return nil, fmt.Errorf("%s was never downloaded into kpipe's cache (%s), and --offline forbids fetching it", url, f.o.Dir)
		}
		f.markUsed(kept)
		return data, nil
	}
	if f.o.Net == nil {
		return nil, fmt.Errorf("%s: %w", url, ErrNoNet)
	}
	data, err := f.o.Net.Get(ctx, url)
	if err != nil {
		return nil, err
	}
	_ = writeFileAtomic(kept, data)
	return data, nil
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, creating the directory.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+hex.EncodeToString(b[:]))
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Clear deletes what Fetchers keep in dir (their Options.Dir): the
// checkouts, files and charts directories, each created by a Fetcher, and
// dir itself when nothing else is left in it. It returns how many of
// those it removed.
func Clear(dir string) (int, error) {
	n := 0
	for _, sub := range []string{"git", "http", "charts"} {
		p := filepath.Join(dir, sub)
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return n, err
		}
		n++
	}
	_ = os.Remove(dir) // only when empty
	return n, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
