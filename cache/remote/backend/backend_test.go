package backend_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpipe/kpipe/cache/remote"
	"github.com/kpipe/kpipe/cache/remote/backend"
	"github.com/kpipe/kpipe/cache/remote/remotetest"
)

func name(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// runBackendTests is the conformance suite every backend passes, run
// against a real server.
func runBackendTests(t *testing.T, b remote.Backend) {
	ctx := context.Background()
	t.Run("MissingIsNotFound", func(t *testing.T) {
		for _, k := range []remote.Kind{remote.AC, remote.CAS} {
			if _, err := b.Get(ctx, k, name("missing")); !errors.Is(err, remote.ErrNotFound) {
				t.Errorf("Get %s of a missing object: %v, want ErrNotFound", k, err)
			}
			if ok, err := b.Has(ctx, k, name("missing")); ok || err != nil {
				t.Errorf("Has %s of a missing object: %v, %v", k, ok, err)
			}
		}
	})
	t.Run("PutGetHas", func(t *testing.T) {
		n := name("object")
		if err := b.Put(ctx, remote.AC, n, []byte("an action record\n")); err != nil {
			t.Fatal(err)
		}
		if err := b.Put(ctx, remote.CAS, n, []byte("content")); err != nil {
			t.Fatal(err)
		}
		// The kinds are separate namespaces.
		for k, want := range map[remote.Kind]string{remote.AC: "an action record\n", remote.CAS: "content"} {
			got, err := b.Get(ctx, k, n)
			if err != nil || string(got) != want {
				t.Errorf("Get %s: %q, %v; want %q", k, got, err, want)
			}
			if ok, err := b.Has(ctx, k, n); !ok || err != nil {
				t.Errorf("Has %s after Put: %v, %v", k, ok, err)
			}
		}
	})
	t.Run("PutReplaces", func(t *testing.T) {
		n := name("replaced")
		for _, v := range []string{"first, longer value", "second"} {
			if err := b.Put(ctx, remote.AC, n, []byte(v)); err != nil {
				t.Fatal(err)
			}
			if got, err := b.Get(ctx, remote.AC, n); err != nil || string(got) != v {
				t.Errorf("Get after Put(%q): %q, %v", v, got, err)
			}
		}
	})
	t.Run("EmptyAndLarge", func(t *testing.T) {
		large := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
		for _, v := range [][]byte{{}, large} {
			n := name(fmt.Sprint(len(v)))
			if err := b.Put(ctx, remote.CAS, n, v); err != nil {
				t.Fatal(err)
			}
			got, err := b.Get(ctx, remote.CAS, n)
			if err != nil || !bytes.Equal(got, v) {
				t.Errorf("%d bytes: got %d bytes, %v", len(v), len(got), err)
			}
		}
	})
	t.Run("BadNamesRefused", func(t *testing.T) {
		for _, n := range []string{"", "../../etc/passwd", strings.ToUpper(name("x")), name("x")[:63]} {
			if _, err := b.Get(ctx, remote.CAS, n); err == nil || errors.Is(err, remote.ErrNotFound) {
				t.Errorf("Get %q: %v, want an error", n, err)
			}
			if err := b.Put(ctx, remote.CAS, n, []byte("x")); err == nil {
				t.Errorf("Put %q accepted", n)
			}
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, v := name(fmt.Sprint("c", i)), []byte(fmt.Sprint("value ", i))
				if err := b.Put(ctx, remote.CAS, n, v); err != nil {
					errs <- err
					return
				}
				if got, err := b.Get(ctx, remote.CAS, n); err != nil || !bytes.Equal(got, v) {
					errs <- fmt.Errorf("object %d: %q, %v", i, got, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// downTests check that a stopped server is an error (not a miss), that
// comes quickly enough for a build to go on.
func downTests(t *testing.T, srv *remotetest.Server) {
	b, err := backend.Open(srv.URL, remote.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	ctx := context.Background()
	if _, err := b.Get(ctx, remote.AC, name("x")); err == nil || errors.Is(err, remote.ErrNotFound) {
		t.Errorf("Get from a stopped server: %v, want an error", err)
	} else if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
	if err := b.Put(ctx, remote.AC, name("x"), []byte("x")); err == nil {
		t.Error("Put to a stopped server succeeded")
	}
}

func TestHTTPBackend(t *testing.T) {
	srv := remotetest.StartNginx(t, remotetest.NginxOptions{})
	b, err := backend.Open(srv.URL, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runBackendTests(t, b)
	t.Run("Down", func(t *testing.T) { downTests(t, srv) })
}

func TestS3Backend(t *testing.T) {
	srv := remotetest.StartMinIO(t)
	b, err := backend.Open(srv.URL, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), remotetest.SecretKey) {
		t.Errorf("String() shows the secret: %s", b)
	}
	runBackendTests(t, b)
	t.Run("Down", func(t *testing.T) { downTests(t, srv) })
}

// A server that refuses writes (403) is an error naming the status; reads
// still work.
func TestHTTPForbiddenPut(t *testing.T) {
	srv := remotetest.StartNginx(t, remotetest.NginxOptions{ReadOnly: true})
	b, err := backend.Open(srv.URL, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = b.Put(context.Background(), remote.AC, name("x"), []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("Put to a read-only server: %v, want 403", err)
	}
	if _, err := b.Get(context.Background(), remote.AC, name("x")); !errors.Is(err, remote.ErrNotFound) {
		t.Errorf("Get: %v, want ErrNotFound", err)
	}
}

// S3 with wrong credentials is an error (403), not a miss.
func TestS3WrongCredentials(t *testing.T) {
	srv := remotetest.StartMinIO(t)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	b, err := backend.Open(srv.URL, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Get(context.Background(), remote.AC, name("x"))
	if err == nil || errors.Is(err, remote.ErrNotFound) {
		t.Fatalf("Get with a wrong secret: %v, want an error", err)
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("the error shows the secret: %v", err)
	}
}

// Without credentials in the environment, the S3 backend reads the
// shared credentials file's profile, AWS_PROFILE or "default", as the
// AWS tools do.
func TestS3SharedCredentialsFile(t *testing.T) {
	srv := remotetest.StartMinIO(t)
	file := filepath.Join(t.TempDir(), "credentials")
	err := os.WriteFile(file, []byte("# kpipe test\n[default]\naws_access_key_id = "+remotetest.AccessKey+
		"\naws_secret_access_key = not-the-secret\n\n; the right one\n[ci]\naws_access_key_id="+remotetest.AccessKey+
		"\naws_secret_access_key = "+remotetest.SecretKey+"\n"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
	for _, tc := range []struct {
		profile string
		works   bool
	}{{"ci", true}, {"", false}} {
		t.Setenv("AWS_PROFILE", tc.profile)
		b, err := backend.Open(srv.URL, remote.Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = b.Put(context.Background(), remote.AC, name("shared"), []byte("x"))
		if (err == nil) != tc.works {
			t.Errorf("profile %q: Put: %v, want success %v", tc.profile, err, tc.works)
		}
		if err != nil && strings.Contains(err.Error(), "not-the-secret") {
			t.Errorf("the error shows the secret: %v", err)
		}
	}
}

// A bucket that does not exist is an error naming it for reads and
// writes (a remote cache set up wrong should say so, not act empty).
func TestS3MissingBucket(t *testing.T) {
	srv := remotetest.StartMinIO(t)
	u := strings.Replace(srv.URL, "s3://"+remotetest.Bucket+"/", "s3://no-such-bucket/", 1)
	b, err := backend.Open(u, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := b.Get(ctx, remote.AC, name("x")); err == nil || !strings.Contains(err.Error(), "no-such-bucket does not exist") {
		t.Errorf("Get: %v, want the bucket named", err)
	}
	if err := b.Put(ctx, remote.AC, name("x"), []byte("x")); err == nil || !strings.Contains(err.Error(), "no-such-bucket does not exist") {
		t.Errorf("Put: %v, want the bucket named", err)
	}
}

func TestOpenURLs(t *testing.T) {
	for _, tc := range []struct{ url, err string }{
		{"ftp://example.com/x", "scheme must be http, https or s3"},
		{"http:///x", "no host"},
		{"http://h/x?a=b", "query"},
		{"s3:///prefix", "no bucket"},
		{"s3://AKIA:secret@bucket/x", "credentials do not go in an s3 URL"},
		{"s3://bucket/x?endpoint=ftp://h", "S3 endpoint"},
	} {
		_, err := backend.Open(tc.url, remote.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Open(%q): %v, want %q", tc.url, err, tc.err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q): the error shows the password: %v", tc.url, err)
		}
	}
	b, err := backend.Open("https://user:pw@cache.example.com/bazel/", remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := b.String(); s != "https://cache.example.com/bazel" {
		t.Errorf("String() = %q", s)
	}
}
