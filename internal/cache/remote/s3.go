package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3Backend keeps objects in a bucket of an S3-compatible store, as
// <prefix>/ac/<hex> and <prefix>/cas/<hex>.
//
// The endpoint is the URL's endpoint query parameter, else
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, else AWS's; the region is the
// region parameter, else AWS_REGION or AWS_DEFAULT_REGION. Credentials are
// read as the AWS tools read them: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
// and AWS_SESSION_TOKEN, else the shared credentials file
// (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile AWS_PROFILE);
// without any, requests are anonymous. kpipe never asks the instance
// metadata service: a runner with a role exports its credentials (as
// aws-actions/configure-aws-credentials does).
type s3Backend struct {
	client  *minio.Client
	bucket  string
	prefix  string // "" or ending in "/"
	shown   string
	timeout time.Duration
}

func newS3(u *url.URL, o Options) (*s3Backend, error) {
	bucket := u.Host
	if bucket == "" {
		return nil, fmt.Errorf("remote cache URL %q: no bucket (s3://BUCKET/PREFIX)", u.Redacted())
	}
	if u.User != nil {
		return nil, fmt.Errorf("remote cache URL %q: credentials do not go in an s3 URL; use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or ~/.aws/credentials", u.Redacted())
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
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{},
	})
	client, err := minio.New(ep.Host, &minio.Options{
		Creds:  creds,
		Secure: ep.Scheme == "https",
		Region: region,
		// One try: a store that fails is left for the rest of the run,
		// and retries with back-off would only delay that.
		MaxRetries: 1,
		Transport:  &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: o.Timeout, MaxIdleConnsPerHost: 16},
	})
	if err != nil {
		return nil, fmt.Errorf("remote cache URL %q: %v", u.Redacted(), err)
	}
	prefix := strings.Trim(path.Clean("/"+u.Path), "/")
	if prefix != "" {
		prefix += "/"
	}
	shown := "s3://" + bucket + "/" + prefix
	return &s3Backend{client: client, bucket: bucket, prefix: prefix, shown: strings.TrimSuffix(shown, "/"), timeout: o.Timeout}, nil
}

func (b *s3Backend) String() string { return b.shown }

func (b *s3Backend) object(kind Kind, name string) string {
	return b.prefix + string(kind) + "/" + name
}

// s3Error words err for a message, and tells a missing object.
func (b *s3Backend) s3Error(op string, kind Kind, name string, err error) error {
	r := minio.ToErrorResponse(err)
	if r.Code == minio.NoSuchKey || (r.StatusCode == http.StatusNotFound && r.Code != minio.NoSuchBucket) {
		return ErrNotFound
	}
	msg := err.Error()
	if r.Code != "" {
		msg = r.Code + ": " + r.Message
	}
	return fmt.Errorf("%s %s/%s: %s", op, kind, name[:12], oneLine(msg))
}

// Get implements Backend.
func (b *s3Backend) Get(ctx context.Context, kind Kind, name string) ([]byte, error) {
	if err := checkName(kind, name); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	obj, err := b.client.GetObject(ctx, b.bucket, b.object(kind, name), minio.GetObjectOptions{})
	if err != nil {
		return nil, b.s3Error("GET", kind, name, err)
	}
	defer obj.Close()
	data, err := io.ReadAll(io.LimitReader(obj, MaxObject+1))
	if err != nil {
		return nil, b.s3Error("GET", kind, name, err)
	}
	if len(data) > MaxObject {
		return nil, fmt.Errorf("GET %s/%s: more than %d bytes, more than kpipe reads", kind, name[:12], MaxObject)
	}
	return data, nil
}

// Has implements Backend.
func (b *s3Backend) Has(ctx context.Context, kind Kind, name string) (bool, error) {
	if err := checkName(kind, name); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	_, err := b.client.StatObject(ctx, b.bucket, b.object(kind, name), minio.StatObjectOptions{})
	if err != nil {
		if err = b.s3Error("HEAD", kind, name, err); err == ErrNotFound {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// Put implements Backend.
func (b *s3Backend) Put(ctx context.Context, kind Kind, name string, data []byte) error {
	if err := checkName(kind, name); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	_, err := b.client.PutObject(ctx, b.bucket, b.object(kind, name), bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: true})
	if err != nil {
		if err = b.s3Error("PUT", kind, name, err); err == ErrNotFound {
			err = fmt.Errorf("PUT %s/%s: the bucket %s does not exist", kind, name[:12], b.bucket)
		}
		return err
	}
	return nil
}
