// Package remote holds the backends of kpipe's shared remote cache: one
// Backend interface over two protocols, each a store of immutable objects
// named by SHA-256 in two namespaces, as Bazel's remote cache has them:
//
//   - "ac" (action records): kpipe's entry records, named by the same keys
//     as the local cache (package cache writes and verifies them);
//   - "cas" (content): values named by their own SHA-256.
//
// http:// and https:// URLs speak the Bazel HTTP cache protocol (GET, PUT
// and HEAD on <url>/ac/<hex> and <url>/cas/<hex>), so bazel-remote, nginx
// with WebDAV and hosted Bazel caches serve it. s3://bucket/prefix URLs use
// any S3-compatible store through github.com/minio/minio-go/v7, with the
// credentials of the usual AWS environment variables and files.
//
// A backend only moves bytes. It does not verify them: package cache
// checks every object it reads against its digest and decides what to
// upload. The package imports nothing of kpipe.
package remote

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Kind is an object namespace.
type Kind string

// The namespaces, as Bazel's HTTP cache names them.
const (
	AC  Kind = "ac"  // action records, by cache key
	CAS Kind = "cas" // content, by its SHA-256
)

// ErrNotFound is returned by Get for an object the store does not hold.
var ErrNotFound = errors.New("not found")

// maxObject is the largest object a backend reads: a server that sends
// more is refused, so that a broken or hostile server cannot exhaust the
// memory of a build.
const maxObject = 512 << 20

// Backend is a remote object store. Implementations are safe for
// concurrent use. Every error but ErrNotFound means the store could not be
// used (down, refused, too slow, no permission); callers stop using it.
type Backend interface {
	// Get returns the object's bytes, or ErrNotFound.
	Get(ctx context.Context, kind Kind, name string) ([]byte, error)
	// Has reports whether the object exists, without reading it.
	Has(ctx context.Context, kind Kind, name string) (bool, error)
	// Put stores the object (replacing one of the same name).
	Put(ctx context.Context, kind Kind, name string, data []byte) error
	// String is the store's URL without credentials, for messages.
	String() string
}

// Object names one object: its namespace and its name.
type Object struct {
	Kind Kind
	Name string
}

// Finder is a Backend that answers in one request which of many objects
// it lacks (as the REAPI's FindMissingBlobs does; kpipe's cache server
// speaks it: see MissingPath). Backends without such a request are asked
// object by object (Has).
type Finder interface {
	// Missing returns the objects of objs the store does not hold, or
	// ErrUnsupported when it has no such request (the caller then asks
	// with Has).
	Missing(ctx context.Context, objs []Object) ([]Object, error)
}

// ErrUnsupported is Missing's error for a store that has no batch
// existence request.
var ErrUnsupported = errors.New("no batch existence request")

// MissingPath is the path, under a cache server's base URL, of the batch
// existence request: a POST whose body is one object a line ("ac/<hex>"
// or "cas/<hex>", at most MaxMissing), answered with MissingHeader's line
// and then the objects the server lacks, one a line.
const MissingPath = "/missing"

// MissingHeader is the first line of an answer to MissingPath: a server
// that does not know the request (an nginx, a bazel-remote) answers
// anything else, and the client then asks object by object.
const MissingHeader = "kpipe-missing v1"

// MaxMissing bounds the objects one MissingPath request names.
const MaxMissing = 4096

// Options configure Open.
type Options struct {
	// Timeout bounds each request (zero: DefaultTimeout).
	Timeout time.Duration
	// Token is a bearer token sent with every HTTP request (kpipe's CLI
	// takes it from KPIPE_REMOTE_CACHE_TOKEN); it takes precedence over
	// the URL's userinfo. No message ever shows it.
	Token string
}

// TokenEnv is the environment variable kpipe's CLI reads a remote cache's
// bearer token from.
const TokenEnv = "KPIPE_REMOTE_CACHE_TOKEN"

// DefaultTimeout bounds a request when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Open returns the backend for rawURL: http(s)://host/path for the Bazel
// HTTP cache protocol, s3://bucket[/prefix] for an S3-compatible store.
func Open(rawURL string, o Options) (Backend, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("remote cache URL %q: %v", redactRaw(rawURL), errors.Unwrap(err))
	}
	switch u.Scheme {
	case "http", "https":
		return newHTTP(u, o)
	case "s3":
		return newS3(u, o)
	default:
		return nil, fmt.Errorf("remote cache URL %q: the scheme must be http, https or s3", redacted(u))
	}
}

var hexName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

// checkName refuses names that are not a lowercase hex SHA-256 (they
// would make paths the protocol does not have).
func checkName(kind Kind, name string) error {
	if kind != AC && kind != CAS {
		return fmt.Errorf("remote cache: unknown kind %q", kind)
	}
	if !hexName().MatchString(name) {
		return fmt.Errorf("remote cache: object name %q is not a SHA-256 in hex", name)
	}
	return nil
}

// redactRaw hides a password in a URL that does not parse.
func redactRaw(s string) string {
	if i := strings.Index(s, "@"); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			return s[:j+3] + "xxxxx" + s[i:]
		}
	}
	return s
}

// oneLine makes err's text fit one warning line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// redacted is u for messages: its userinfo, a password or a token given
// as a user name, replaced by xxxxx.
func redacted(u *url.URL) string {
	if u.User == nil {
		return u.String()
	}
	c := *u
	c.User = url.User("xxxxx")
	return c.String()
}
