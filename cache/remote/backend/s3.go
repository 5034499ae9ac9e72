package backend

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/kpipe/kpipe/cache/remote"
)

// s3Backend keeps objects in a bucket of an S3-compatible store, as
// <prefix>/ac/<hex> and <prefix>/cas/<hex>.
//
// The endpoint is the URL's endpoint query parameter, else
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, else AWS's; the region is the
// region parameter, else AWS_REGION or AWS_DEFAULT_REGION, else (on AWS)
// the bucket's location, asked once, else us-east-1. Credentials are
// read as the AWS tools read them: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
// and AWS_SESSION_TOKEN, else the shared credentials file
// (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile AWS_PROFILE);
// without any, requests are anonymous. kpipe never asks the instance
// metadata service: a runner with a role exports its credentials (as
// aws-actions/configure-aws-credentials does).
//
// Requests are plain net/http requests signed by the AWS SDK's own
// Signature Version 4 signer (aws-sdk-go-v2/aws/signer/v4): kpipe needs
// three calls (GET, HEAD and PUT of one object), and a full S3 client
// costs every kpipe process at start. minio-go's package initialisers took
// about 5 ms of each `kpipe` run on a slow VM (compiled regular
// expressions, CPU feature detection, XML tables), and the AWS SDK's
// config module about 8 ms; the signer costs nothing at start.
type s3Backend struct {
	client   *http.Client
	endpoint *url.URL // scheme and host
	bucket   string
	prefix   string // "" or ending in "/"
	shown    string
	timeout  time.Duration
	creds    aws.Credentials // zero: anonymous
	signer   *v4.Signer
	// virtual: the bucket is in the host name (AWS, for a bucket name
	// that can be one); else it is the first element of the path.
	virtual bool
	aws     bool // the endpoint is AWS's

	regionOnce sync.Once
	region     string
}

func newS3(u *url.URL, o remote.Options) (*s3Backend, error) {
	bucket := u.Host
	if bucket == "" {
		return nil, fmt.Errorf("remote cache URL %q: no bucket (s3://BUCKET/PREFIX)", redacted(u))
	}
	if u.User != nil {
		return nil, fmt.Errorf("remote cache URL %q: credentials do not go in an s3 URL; use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or ~/.aws/credentials", redacted(u))
	}
	q := u.Query()
	endpoint := q.Get("endpoint")
	for _, v := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		if endpoint == "" {
			endpoint = os.Getenv(v)
		}
	}
	if endpoint == "" {
		endpoint = "https://s3.amazonaws.com"
	}
	ep, err := url.Parse(endpoint)
	if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" {
		return nil, fmt.Errorf("remote cache: S3 endpoint %q: want http(s)://HOST[:PORT]", endpoint)
	}
	region := q.Get("region")
	for _, v := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if region == "" {
			region = os.Getenv(v)
		}
	}
	creds, err := s3Credentials()
	if err != nil {
		return nil, fmt.Errorf("remote cache URL %q: %v", redacted(u), err)
	}
	prefix := strings.Trim(path.Clean("/"+u.Path), "/")
	if prefix != "" {
		prefix += "/"
	}
	shown := "s3://" + bucket + "/" + prefix
	host := strings.ToLower(ep.Hostname())
	onAWS := host == "amazonaws.com" || strings.HasSuffix(host, ".amazonaws.com")
	b := &s3Backend{
		// One try: a store that fails is left for the rest of the run,
		// and retries with back-off would only delay that.
		client: &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: o.Timeout,
			MaxIdleConnsPerHost: 16, ForceAttemptHTTP2: true}},
		endpoint: &url.URL{Scheme: ep.Scheme, Host: ep.Host},
		bucket:   bucket, prefix: prefix, shown: strings.TrimSuffix(shown, "/"), timeout: o.Timeout, creds: creds,
		signer: v4.NewSigner(func(so *v4.SignerOptions) { so.DisableURIPathEscaping = true }),
		// As minio-go and the AWS SDK address a bucket: in the host name
		// on AWS when the name can be a host label (and, over https,
		// has no dot, which the certificate would not cover).
		virtual: onAWS && dnsBucket(bucket) && (ep.Scheme == "http" || !strings.Contains(bucket, ".")),
		aws:     onAWS,
		region:  region,
	}
	return b, nil
}

// dnsBucket reports whether a bucket name can be a DNS label of a host.
func dnsBucket(b string) bool {
	if len(b) < 3 || len(b) > 63 || b[0] == '.' || b[0] == '-' || b[len(b)-1] == '.' || b[len(b)-1] == '-' || strings.Contains(b, "..") {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// s3Credentials reads the credentials from the environment, else from
// the shared credentials file; zero (anonymous) when there are none.
func s3Credentials() (aws.Credentials, error) {
	id := firstEnv("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY")
	secret := firstEnv("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY")
	if id != "" && secret != "" {
		return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: os.Getenv("AWS_SESSION_TOKEN")}, nil
	}
	file := os.Getenv("AWS_SHARED_CREDENTIALS_FILE")
	if file == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return aws.Credentials{}, nil
		}
		file = home + "/.aws/credentials"
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return aws.Credentials{}, nil // no file: anonymous, as the AWS tools fall through
	}
	profile := os.Getenv("AWS_PROFILE")
	if profile == "" {
		profile = "default"
	}
	keys, err := iniSection(data, profile)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("%s: %v", file, err)
	}
	return aws.Credentials{AccessKeyID: keys["aws_access_key_id"], SecretAccessKey: keys["aws_secret_access_key"],
		SessionToken: keys["aws_session_token"]}, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// iniSection returns the keys of one section of the shared credentials
// file, which is INI as the AWS tools read it: "[name]" lines open a
// section, "key = value" lines set a key, lines starting with # or ; are
// comments. Only the three keys of a static credential are asked for;
// anything the AWS tools would read beyond them (role_arn,
// credential_process, sso_*) is not followed.
func iniSection(data []byte, name string) (map[string]string, error) {
	keys := map[string]string{}
	in := false
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("line %d: a section name without its ]", i+1)
			}
			in = strings.TrimSpace(line[1:len(line)-1]) == name
		case in:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				continue // a nested setting's continuation, or not a key
			}
			keys[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	return keys, nil
}

func (b *s3Backend) String() string { return b.shown }

func (b *s3Backend) object(kind remote.Kind, name string) string {
	return b.prefix + string(kind) + "/" + name
}

// errNoBucket is a request's answer that the bucket does not exist.
var errNoBucket = errors.New("NoSuchBucket")

// s3Response is what an S3 request came back with.
type s3Response struct {
	status int
	body   []byte
}

// emptySHA256 is the payload hash of a request without a body.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// do sends one signed request for key (an object's name in the bucket;
// "" for the bucket itself, with query) and reads at most limit bytes of
// the answer's body.
func (b *s3Backend) do(ctx context.Context, method, key, query string, body []byte, limit int64) (*s3Response, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	u := *b.endpoint
	if b.virtual {
		u.Host = b.bucket + "." + u.Host
		u.Path = "/" + key
	} else {
		u.Path = "/" + b.bucket + "/" + key
	}
	u.RawQuery = query
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	req.ContentLength = int64(len(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	if b.creds.HasKeys() {
		hash := emptySHA256
		if body != nil {
			sum := sha256.Sum256(body)
			hash = hex.EncodeToString(sum[:])
		}
		req.Header.Set("X-Amz-Content-Sha256", hash)
		region := b.regionFor(ctx, key == "" && query == "location")
		if err := b.signer.SignHTTP(ctx, b.creds, req, hash, "s3", region, time.Now()); err != nil {
			return nil, err
		}
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("more than %d bytes, more than kpipe reads", limit)
	}
	return &s3Response{status: resp.StatusCode, body: data}, nil
}

// regionFor is the region a request is signed for: the one configured,
// else on AWS the bucket's location (asked once, as minio-go does), else
// us-east-1. The location request itself is signed for us-east-1, which
// answers it for a bucket in any region.
func (b *s3Backend) regionFor(ctx context.Context, locating bool) string {
	if locating {
		return "us-east-1"
	}
	b.regionOnce.Do(func() {
		if b.region != "" {
			return
		}
		b.region = "us-east-1"
		if !b.aws {
			return
		}
		r, err := b.do(ctx, http.MethodGet, "", "location", nil, 1<<16)
		if err != nil || r.status != http.StatusOK {
			return
		}
		// <LocationConstraint>REGION</LocationConstraint>; empty for
		// us-east-1.
		if loc := xmlField(r.body, "LocationConstraint"); loc != "" {
			b.region = loc
		}
	})
	return b.region
}

// xmlField returns the text of the first <name> element of an S3 answer
// (an error's Code or Message, a bucket's location), which may carry
// attributes (xmlns); "" when absent. The answers kpipe reads are flat,
// their text escaped by XML's entities.
func xmlField(body []byte, name string) string {
	s := string(body)
	for {
		i := strings.Index(s, "<"+name)
		if i < 0 {
			return ""
		}
		s = s[i+1+len(name):]
		if s != "" && (s[0] == '>' || s[0] == ' ') {
			break
		}
	}
	i := strings.IndexByte(s, '>')
	if i < 0 || (i > 0 && s[i-1] == '/') {
		return "" // <name/>: empty
	}
	s = s[i+1:]
	j := strings.Index(s, "</"+name+">")
	if j < 0 {
		return ""
	}
	return xmlText.Replace(s[:j])
}

var xmlText = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#34;", `"`, "&apos;", "'", "&#39;", "'", "&amp;", "&")

// s3Error words a failed answer for a message, and tells a missing
// object (ErrNotFound) from a missing bucket (errNoBucket).
func (b *s3Backend) s3Error(op string, kind remote.Kind, name string, r *s3Response, err error) error {
	if err != nil {
		return fmt.Errorf("%s %s/%s: %s", op, kind, name[:12], oneLine(err.Error()))
	}
	code := xmlField(r.body, "Code")
	switch {
	case code == "NoSuchBucket":
		return errNoBucket
	case code == "NoSuchKey" || r.status == http.StatusNotFound:
		// (A HEAD answer has no body: a 404 is a missing object.)
		return remote.ErrNotFound
	}
	msg := fmt.Sprintf("%d %s", r.status, http.StatusText(r.status))
	if code != "" {
		msg = code + ": " + xmlField(r.body, "Message")
	}
	return fmt.Errorf("%s %s/%s: %s", op, kind, name[:12], oneLine(msg))
}

// Get implements Backend.
func (b *s3Backend) Get(ctx context.Context, kind remote.Kind, name string) ([]byte, error) {
	if err := checkName(kind, name); err != nil {
		return nil, err
	}
	r, err := b.do(ctx, http.MethodGet, b.object(kind, name), "", nil, maxObject)
	if err != nil || r.status != http.StatusOK {
		if err = b.s3Error("GET", kind, name, r, err); err == errNoBucket {
			err = fmt.Errorf("GET %s/%s: the bucket %s does not exist", kind, name[:12], b.bucket)
		}
		return nil, err
	}
	return r.body, nil
}

// Has implements Backend.
func (b *s3Backend) Has(ctx context.Context, kind remote.Kind, name string) (bool, error) {
	if err := checkName(kind, name); err != nil {
		return false, err
	}
	r, err := b.do(ctx, http.MethodHead, b.object(kind, name), "", nil, 0)
	if err != nil || r.status != http.StatusOK {
		if err = b.s3Error("HEAD", kind, name, r, err); err == remote.ErrNotFound || err == errNoBucket {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// Put implements Backend.
func (b *s3Backend) Put(ctx context.Context, kind remote.Kind, name string, data []byte) error {
	if err := checkName(kind, name); err != nil {
		return err
	}
	if data == nil {
		data = []byte{}
	}
	r, err := b.do(ctx, http.MethodPut, b.object(kind, name), "", data, 1<<16)
	if err != nil || r.status != http.StatusOK {
		err = b.s3Error("PUT", kind, name, r, err)
		if err == remote.ErrNotFound || err == errNoBucket {
			err = fmt.Errorf("PUT %s/%s: the bucket %s does not exist", kind, name[:12], b.bucket)
		}
		return err
	}
	return nil
}
