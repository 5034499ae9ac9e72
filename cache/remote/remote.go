// Package remote defines kpipe's shared remote cache: one Backend
// interface over stores of immutable objects named by SHA-256 in two
// namespaces, as Bazel's remote cache has them:
//
//   - "ac" (action records): kpipe's entry records, named by the same keys
//     as the local cache (package cache writes and verifies them);
//   - "cas" (content): values named by their own SHA-256.
//
// The backends (the Bazel HTTP cache protocol, S3) are package
// cache/remote/backend, which opens them by URL.
//
// A backend only moves bytes. It does not verify them: package cache
// checks every object it reads against its digest and decides what to
// upload. The package imports nothing of kpipe, and no net, which links
// libc through cgo: package cache, which every build uses, imports it.
package remote

import (
	"context"
	"errors"
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

// Options configure backend.Open.
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
