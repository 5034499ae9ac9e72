package backend

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/kpipe/kpipe/cache/remote"
)

// httpBackend speaks the Bazel HTTP cache protocol: GET, HEAD and PUT on
// <base>/ac/<hex> and <base>/cas/<hex>; 404 is a miss, any other status
// but 2xx an error.
type httpBackend struct {
	base   string        // without a trailing slash, without credentials
	shown  string        // base for messages
	user   *url.Userinfo // basic credentials (with a password)
	token  string        // a bearer token
	client *http.Client
	// noMissing: the server answered MissingPath with something else
	// (it is not kpipe's): Missing is not asked again.
	noMissing atomic.Bool
}

func newHTTP(u *url.URL, o remote.Options) (*httpBackend, error) {
	if u.Host == "" {
		return nil, fmt.Errorf("remote cache URL %q: no host", redacted(u))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("remote cache URL %q: a query or fragment has no meaning here", redacted(u))
	}
	// Connections are kept for the next request: a build makes thousands
	// of small ones, concurrently (uploads and --jobs lookups).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 32
	b := &httpBackend{client: &http.Client{Timeout: o.Timeout, Transport: tr}}
	// Credentials: the token given, else the URL's userinfo: a user name
	// alone (https://TOKEN@host) is a bearer token, a user and password
	// are basic credentials (nginx's auth_basic; kpipe cache serve takes
	// the password as the token).
	switch pw, hasPW := u.User.Password(); {
	case o.Token != "":
		b.token = o.Token
	case u.User != nil && hasPW:
		_ = pw
		b.user = u.User
	case u.User != nil && u.User.Username() != "":
		b.token = u.User.Username()
	}
	c := *u
	c.User = nil
	b.base = strings.TrimSuffix(c.String(), "/")
	b.shown = b.base
	return b, nil
}

func (b *httpBackend) String() string { return b.shown }

func (b *httpBackend) request(ctx context.Context, method string, kind remote.Kind, name string, body []byte) (*http.Response, error) {
	if err := checkName(kind, name); err != nil {
		return nil, err
	}
	resp, err := b.do(ctx, method, "/"+string(kind)+"/"+name, "application/octet-stream", body)
	if err != nil {
		// The error names the URL, which holds no credentials.
		return nil, fmt.Errorf("%s %s/%s: %v", method, kind, name[:12], oneLine(stripURL(err)))
	}
	return resp, nil
}

// do sends one request for path under the base URL, with its
// credentials.
func (b *httpBackend) do(ctx context.Context, method, path, contentType string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.base+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", contentType)
	}
	switch {
	case b.token != "":
		req.Header.Set("Authorization", "Bearer "+b.token)
	case b.user != nil:
		pw, _ := b.user.Password()
		req.SetBasicAuth(b.user.Username(), pw)
	}
	return b.client.Do(req)
}

// Missing implements Finder: one POST to MissingPath. A server that
// answers anything but a 2xx starting with MissingHeader (401 and 403
// aside, which are errors) does not know the request: ErrUnsupported,
// now and for the rest of the run.
func (b *httpBackend) Missing(ctx context.Context, objs []remote.Object) ([]remote.Object, error) {
	if b.noMissing.Load() {
		return nil, remote.ErrUnsupported
	}
	if len(objs) > remote.MaxMissing {
		return nil, fmt.Errorf("remote cache: %d objects in one existence request (at most %d)", len(objs), remote.MaxMissing)
	}
	var body bytes.Buffer
	for _, o := range objs {
		if err := checkName(o.Kind, o.Name); err != nil {
			return nil, err
		}
		body.WriteString(string(o.Kind) + "/" + o.Name + "\n")
	}
	resp, err := b.do(ctx, http.MethodPost, remote.MissingPath, "text/plain", body.Bytes())
	if err != nil {
		return nil, fmt.Errorf("POST %s: %v", remote.MissingPath, oneLine(stripURL(err)))
	}
	defer closeBody(resp)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("POST %s: the server answered %s", remote.MissingPath, resp.Status)
	case resp.StatusCode/100 != 2:
		b.noMissing.Store(true)
		return nil, remote.ErrUnsupported
	}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, int64(remote.MaxMissing+1)*80))
	if !sc.Scan() || sc.Text() != remote.MissingHeader {
		b.noMissing.Store(true)
		return nil, remote.ErrUnsupported
	}
	asked := make(map[remote.Object]bool, len(objs))
	for _, o := range objs {
		asked[o] = true
	}
	var missing []remote.Object
	for sc.Scan() {
		kind, name, _ := strings.Cut(sc.Text(), "/")
		o := remote.Object{Kind: remote.Kind(kind), Name: name}
		if !asked[o] {
			return nil, fmt.Errorf("POST %s: the server named an object not asked for", remote.MissingPath)
		}
		missing = append(missing, o)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("POST %s: %v", remote.MissingPath, oneLine(err.Error()))
	}
	return missing, nil
}

// closeBody reads what is left of a (short) body and closes it, so that
// the connection serves the next request: a body closed unread closes
// the connection.
func closeBody(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}

// stripURL drops the method and URL *url.Error puts before the cause.
func stripURL(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

func statusError(method string, kind remote.Kind, name string, resp *http.Response) error {
	return fmt.Errorf("%s %s/%s: the server answered %s", method, kind, name[:12], resp.Status)
}

// Get implements Backend.
func (b *httpBackend) Get(ctx context.Context, kind remote.Kind, name string) ([]byte, error) {
	resp, err := b.request(ctx, http.MethodGet, kind, name, nil)
	if err != nil {
		return nil, err
	}
	defer closeBody(resp)
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, remote.ErrNotFound
	case resp.StatusCode/100 != 2:
		return nil, statusError("GET", kind, name, resp)
	}
	if resp.ContentLength > maxObject {
		return nil, fmt.Errorf("GET %s/%s: %d bytes, more than kpipe reads (%d)", kind, name[:12], resp.ContentLength, maxObject)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxObject+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s/%s: %v", kind, name[:12], oneLine(err.Error()))
	}
	if len(data) > maxObject {
		return nil, fmt.Errorf("GET %s/%s: more than %d bytes, more than kpipe reads", kind, name[:12], maxObject)
	}
	return data, nil
}

// Has implements Backend.
func (b *httpBackend) Has(ctx context.Context, kind remote.Kind, name string) (bool, error) {
	resp, err := b.request(ctx, http.MethodHead, kind, name, nil)
	if err != nil {
		return false, err
	}
	closeBody(resp)
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return false, nil
	case resp.StatusCode/100 != 2:
		return false, statusError("HEAD", kind, name, resp)
	}
	return true, nil
}

// Put implements Backend.
func (b *httpBackend) Put(ctx context.Context, kind remote.Kind, name string, data []byte) error {
	if data == nil {
		data = []byte{}
	}
	resp, err := b.request(ctx, http.MethodPut, kind, name, data)
	if err != nil {
		return err
	}
	closeBody(resp)
	if resp.StatusCode/100 != 2 {
		return statusError("PUT", kind, name, resp)
	}
	return nil
}
