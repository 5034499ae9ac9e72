// Package remotetest starts real remote-cache servers on 127.0.0.1 for
// tests: nginx with WebDAV PUT (the Bazel HTTP cache protocol) and MinIO
// (S3). Each runs as the current user with its configuration, data, pid
// and logs in a temporary directory, and stops when the test ends. A test
// whose server binary is missing is skipped with the command that
// installs it.
package remotetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Server is a running server.
type Server struct {
	// URL is the remote cache URL kpipe is given.
	URL string
	// Dir is the server's temporary directory.
	Dir string
	// list returns the objects the server holds.
	list func() (map[string][]byte, error)
	// requests counts the requests served so far (nginx only).
	requests func() int

	cmd  *exec.Cmd
	once sync.Once
	done chan struct{}
}

// Stop stops the server (at most once) and waits for it to exit: SIGTERM
// (nginx's master then stops its workers, which a SIGKILL would leave
// serving), SIGKILL after ten seconds.
func (s *Server) Stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
}

// Objects returns every object the server holds, by name ("ac/<hex>",
// "cas/<hex>"), read from the server's own storage.
func (s *Server) Objects(t testing.TB) map[string][]byte {
	t.Helper()
	m, err := s.list()
	if err != nil {
		t.Fatalf("listing the server's objects: %v", err)
	}
	return m
}

// PID is the server's process id (nginx's master: its workers are its
// children).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Requests returns the number of requests the server has answered, from
// its access log; -1 when the server keeps no such log (MinIO).
func (s *Server) Requests() int {
	if s.requests == nil {
		return -1
	}
	return s.requests()
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs cmd, stops it when the test ends, and waits until ready
// reports true (or the process exits, or 60 seconds pass).
func start(t testing.TB, name string, cmd *exec.Cmd, dir string, ready func() bool) *Server {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	s := &Server{Dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(s.done) }()
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(60 * time.Second)
	for !ready() {
		select {
		case <-s.done:
			out, _ := os.ReadFile(filepath.Join(dir, name+".out"))
			t.Fatalf("%s exited before it was ready:\n%s", name, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 60s", name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// NginxOptions configure StartNginx.
type NginxOptions struct {
	// ReadOnly makes the server refuse PUT with 403 Forbidden.
	ReadOnly bool
}

// StartNginx starts nginx with WebDAV PUT on a free port of 127.0.0.1,
// serving and storing files under <Dir>/data; its URL is
// http://127.0.0.1:PORT/cache. It skips the test when nginx is missing.
func StartNginx(t testing.TB, o NginxOptions) *Server {
	t.Helper()
	bin := lookPath("nginx", "/usr/sbin/nginx")
	if bin == "" {
		t.Skip("nginx not found: install it with `apt-get install -y nginx-light` (Debian; it has the WebDAV module)")
	}
	dir := t.TempDir()
	for _, d := range []string{"data", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	port := freePort(t)
	userLine := ""
	if os.Geteuid() == 0 {
		// The master runs as root: keep the workers root too, or they
		// could not write the temporary directory.
		if u, err := user.Current(); err == nil {
			userLine = fmt.Sprintf("user %s;\n", u.Username)
		}
	}
	limit := ""
	if o.ReadOnly {
		limit = "      limit_except GET HEAD { deny all; }\n"
	}
	conf := fmt.Sprintf(`%sdaemon off;
master_process on;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log;
events { worker_connections 256; }
http {
  access_log %[2]s/access.log;
  client_body_temp_path %[2]s/tmp/body;
  proxy_temp_path %[2]s/tmp/proxy;
  fastcgi_temp_path %[2]s/tmp/fastcgi;
  uwsgi_temp_path %[2]s/tmp/uwsgi;
  scgi_temp_path %[2]s/tmp/scgi;
  server {
    listen 127.0.0.1:%[3]d;
    root %[2]s/data;
    client_max_body_size 0;
    location /cache/ {
      dav_methods PUT;
      create_full_put_path on;
      dav_access user:rw;
%[4]s    }
  }
}
`, userLine, dir, port, limit)
	cf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", cf, "-e", filepath.Join(dir, "error.log"))
	url := fmt.Sprintf("http://127.0.0.1:%d/cache", port)
	s := start(t, "nginx", cmd, dir, func() bool { return httpReady(url + "/") })
	s.URL = url
	data := filepath.Join(dir, "data", "cache")
	s.list = func() (map[string][]byte, error) {
		m := map[string][]byte{}
		for _, kind := range []string{"ac", "cas"} {
			entries, err := os.ReadDir(filepath.Join(data, kind))
			if err != nil && !os.IsNotExist(err) {
				return nil, err
			}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(data, kind, e.Name()))
				if err != nil {
					return nil, err
				}
				m[kind+"/"+e.Name()] = b
			}
		}
		return m, nil
	}
	s.requests = func() int {
		b, _ := os.ReadFile(filepath.Join(dir, "access.log"))
		return bytes.Count(b, []byte("\n"))
	}
	return s
}

// minIOBin is where .ci/run builds MinIO, $HOME/.cache/kpipe-ci/minio,
// looked in when minio is not on PATH (.ci/run puts it there).
func minIOBin() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	// Not XDG_CACHE_HOME: tests point it at a temporary directory.
	return filepath.Join(home, ".cache", "kpipe-ci", "minio", "minio")
}

// Credentials of the MinIO servers the tests start.
const (
	AccessKey = "kpipe-test"
	SecretKey = "kpipe-test-secret"
	Bucket    = "kpipe-cache"
)

// StartMinIO starts MinIO on a free port of 127.0.0.1 with a fresh data
// directory and a bucket, and sets the AWS environment variables (for the
// rest of the test) that give kpipe its credentials. Its URL is
// s3://kpipe-cache/ci?endpoint=http://127.0.0.1:PORT. It skips the test
// when MinIO is missing.
func StartMinIO(t testing.TB) *Server {
	t.Helper()
	return StartMinIOIn(t, "")
}

// StartMinIOIn is StartMinIO with the server in region (MINIO_SITE_REGION;
// "" for MinIO's default, us-east-1), and AWS_REGION unset, so that a
// client finds the region itself.
func StartMinIOIn(t testing.TB, region string) *Server {
	t.Helper()
	bin := lookPath("minio", minIOBin())
	if bin == "" {
		t.Skip("minio not found: build it with `GOBIN=$HOME/.cache/kpipe-ci/minio go install github.com/minio/minio@latest` (.ci/run does)")
	}
	dir := t.TempDir()
	port, console := freePort(t), freePort(t)
	cmd := exec.Command(bin, "server", "--quiet", "--address", fmt.Sprintf("127.0.0.1:%d", port),
		"--console-address", fmt.Sprintf("127.0.0.1:%d", console), filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+AccessKey, "MINIO_ROOT_PASSWORD="+SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1", "HOME="+dir)
	if region != "" {
		cmd.Env = append(cmd.Env, "MINIO_SITE_REGION="+region)
	}
	endpoint := fmt.Sprintf("127.0.0.1:%d", port)
	s := start(t, "minio", cmd, dir, func() bool {
		return httpReady("http://" + endpoint + "/minio/health/ready")
	})
	c, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), Region: region})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.MakeBucket(ctx, Bucket, minio.MakeBucketOptions{Region: region}); err != nil {
		t.Fatalf("creating the bucket: %v", err)
	}
	// MinIO may answer before it applies its region (seen under load, in
	// .ci/run): wait until the bucket's location says it.
	for region != "" {
		// (A new client each time, with no region of its own: minio-go
		// keeps a bucket's location, and answers its own region if set.)
		lc, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(AccessKey, SecretKey, "")})
		if err != nil {
			t.Fatal(err)
		}
		if loc, err := lc.GetBucketLocation(ctx, Bucket); err == nil && loc == region {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("MinIO did not take the region %s", region)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	if region == "" {
		t.Setenv("AWS_REGION", "us-east-1")
	} else {
		t.Setenv("AWS_REGION", "")
	}
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "no-credentials-file"))
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	s.URL = fmt.Sprintf("s3://%s/ci?endpoint=http://%s", Bucket, endpoint)
	s.list = func() (map[string][]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		m := map[string][]byte{}
		for o := range c.ListObjects(ctx, Bucket, minio.ListObjectsOptions{Prefix: "ci/", Recursive: true}) {
			if o.Err != nil {
				return nil, o.Err
			}
			obj, err := c.GetObject(ctx, Bucket, o.Key, minio.GetObjectOptions{})
			if err != nil {
				return nil, err
			}
			b, err := io.ReadAll(obj)
			obj.Close()
			if err != nil {
				return nil, err
			}
			m[strings.TrimPrefix(o.Key, "ci/")] = b
		}
		return m, nil
	}
	return s
}

func httpReady(url string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode < 500
}

func lookPath(name, fallback string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if st, err := os.Stat(fallback); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		return fallback
	}
	return ""
}
