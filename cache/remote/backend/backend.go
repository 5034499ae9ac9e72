// Package backend opens the stores of kpipe's shared remote cache
// (remote.Backend) by URL.
//
// http:// and https:// URLs speak the Bazel HTTP cache protocol (GET, PUT
// and HEAD on <url>/ac/<hex> and <url>/cas/<hex>), so bazel-remote, nginx
// with WebDAV and hosted Bazel caches serve it. s3://bucket/prefix URLs use
// any S3-compatible store, with the credentials of the usual AWS
// environment variables and files.
//
// It imports cache/remote, net/http and the AWS SDK's request signer, and
// is apart from cache/remote because net links libc through cgo: package
// cache, which every build uses, takes a remote.Backend that the caller
// (kpipe's CLI, the cache server) opened here.
package backend

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/cache/remote"
)

// maxObject is the largest object a backend reads: a server that sends
// more is refused, so that a broken or hostile server cannot exhaust the
// memory of a build.
const maxObject = 512 << 20

// Open returns the backend for rawURL: http(s)://host/path for the Bazel
// HTTP cache protocol, s3://bucket[/prefix] for an S3-compatible store.
func Open(rawURL string, o remote.Options) (remote.Backend, error) {
	if o.Timeout <= 0 {
		o.Timeout = remote.DefaultTimeout
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
func checkName(kind remote.Kind, name string) error {
	if kind != remote.AC && kind != remote.CAS {
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
