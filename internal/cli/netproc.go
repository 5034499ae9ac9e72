package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/fetch"
)

// procNet is the kpipe binary's fetch.Net: the downloads (a URL
// resource, a remote base kustomize falls back to reading over HTTP, a
// chart repository's index) and a chart's unpacking go to one `kpipe-full
// net serve` process, started at the first of them, and the run goes on
// in kpipe, on kpipe's cache. Real repositories name remote bases in many
// roots: handing every such build-all over to kpipe-full would build it
// twice, the second time on kpipe-full's cache (measured: a warm build-all
// of kubeflow/manifests 1.5x slower), and a process per download cost
// 5 ms each (1.17x). The process ends when kpipe does (its stdin closes).
type procNet struct{ s *netClient }

// netClient is procNet's connection to its `kpipe-full net serve`.
type netClient struct {
	start   sync.Once
	err     error // of the start
	mu      sync.Mutex
	in      io.WriteCloser
	next    uint64
	pending map[uint64]chan netAnswer
	dead    error // set when the process's output ends
}

// netAnswer is one answer of `kpipe-full net serve`.
type netAnswer struct {
	kind string // ok, status ("CODE TEXT" in data), err (the error's text)
	data []byte
}

func newProcNet() procNet { return procNet{&netClient{pending: map[uint64]chan netAnswer{}}} }

func (p procNet) Get(ctx context.Context, url string) ([]byte, error) {
	a, err := p.s.ask(ctx, "get", url, nil)
	if err != nil {
		return nil, err
	}
	switch a.kind {
	case "ok":
		return a.data, nil
	case "status":
		c, text, _ := strings.Cut(string(a.data), " ")
		if n, err := strconv.Atoi(c); err == nil {
			return nil, &fetch.StatusError{URL: url, Code: n, Text: text}
		}
	}
	return nil, errors.New(string(a.data))
}

func (p procNet) Untar(data []byte, dir string) error {
	a, err := p.s.ask(context.Background(), "untar", dir, data)
	if err != nil {
		return err
	}
	if a.kind != "ok" {
		return errors.New(string(a.data))
	}
	return nil
}

// ask sends one request (op: get URL, or untar DIR with the archive as
// body) and waits for its answer.
func (s *netClient) ask(ctx context.Context, op, arg string, body []byte) (netAnswer, error) {
	if strings.ContainsAny(arg, "\r\n") {
		return netAnswer{}, fmt.Errorf("%q: a line break in a download's URL or directory", arg)
	}
	s.start.Do(func() { s.err = s.run() })
	if s.err != nil {
		return netAnswer{}, s.err
	}
	ch := make(chan netAnswer, 1)
	s.mu.Lock()
	if s.dead != nil {
		s.mu.Unlock()
		return netAnswer{}, s.dead
	}
	s.next++
	id := s.next
	s.pending[id] = ch
	_, err := fmt.Fprintf(s.in, "%d %s %d %s\n", id, op, len(body), arg)
	if err == nil {
		_, err = s.in.Write(body)
	}
	s.mu.Unlock()
	if err != nil {
		return netAnswer{}, fmt.Errorf("kpipe-full net serve: %v", err)
	}
	select {
	case a, ok := <-ch:
		if !ok {
			return netAnswer{}, s.dead
		}
		return a, nil
	case <-ctx.Done():
		return netAnswer{}, context.Cause(ctx)
	}
}

// run starts `kpipe-full net serve` and a reader that hands its answers
// to the requests waiting for them.
func (s *netClient) run() error {
	path, err := findBeside(fullName)
	if err != nil {
		return fmt.Errorf("%w: the network is kpipe-full's, the kpipe with the network, Go plugins, Flux's flags and HelmReleases and Argo CD's ApplicationSets; %v: install it with `%s` (from a clone of kpipe: `%s`; the release archives and the container image carry it beside kpipe)", fetch.ErrNoNet, err, installLine, cloneInstall)
	}
	cmd := exec.Command(path, "net", "serve")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if s.in, err = cmd.StdinPipe(); err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s net serve: %v", path, err)
	}
	go s.read(out, func() error {
		err := cmd.Wait()
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%v: %s", err, msg)
		}
		return err
	})
	return nil
}

// read hands the answers read from out to the requests waiting for them;
// at the end of out, wait's error ends the requests still waiting, and
// any later one.
func (s *netClient) read(out io.Reader, wait func() error) {
	r := bufio.NewReader(out)
	for {
		var id uint64
		var kind string
		var n int
		if _, err := fmt.Fscanf(r, "%d %s %d\n", &id, &kind, &n); err != nil {
			break
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(r, data); err != nil {
			break
		}
		s.mu.Lock()
		ch := s.pending[id]
		delete(s.pending, id)
		s.mu.Unlock()
		if ch != nil {
			ch <- netAnswer{kind, data}
		}
	}
	err := wait()
	s.mu.Lock()
	s.dead = fmt.Errorf("kpipe-full net serve ended (%v)", err)
	for id, ch := range s.pending {
		close(ch)
		delete(s.pending, id)
	}
	s.mu.Unlock()
}

// netCommand is `kpipe-full net serve`, hidden: the kpipe binary's
// downloads (procNet), with kpipe-full's fetch.Net. Requests on stdin are
// "ID get 0 URL" and "ID untar LEN DIR" followed by LEN bytes (a gzipped
// tar); each is answered, in any order, with "ID KIND LEN" and LEN bytes:
// ok and the body (get), status and "CODE TEXT" for a status that is not
// 2xx, err and the error's text. It ends at the end of its input.
func netCommand() *cli.Command {
	return &cli.Command{
		Name:   "net",
		Hidden: true,
		Usage:  "the downloads of a kpipe without the network (kpipe-full only)",
		Subcommands: []*cli.Command{{Name: "serve", Action: func(c *cli.Context) error {
			n := extensions(c).Net
			if _, ok := n.(procNet); ok || n == nil {
				return usage(c, "kpipe net serve is kpipe-full's")
			}
			return serveNet(c.Context, n, c.App.Reader, c.App.Writer)
		}}},
	}
}

// serveNet answers the requests read from r on w (see netCommand), each
// in a goroutine of its own.
func serveNet(ctx context.Context, n fetch.Net, r io.Reader, w io.Writer) error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	answer := func(id uint64, kind string, data []byte) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "%d %s %d\n", id, kind, len(data))
		w.Write(data)
	}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break
		}
		f := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 4)
		if len(f) != 4 {
			return fmt.Errorf("kpipe net serve: a bad request %q", line)
		}
		id, err1 := strconv.ParseUint(f[0], 10, 64)
		size, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || size < 0 {
			return fmt.Errorf("kpipe net serve: a bad request %q", line)
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(br, body); err != nil {
			return err
		}
		op, arg := f[1], f[3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			var data []byte
			switch op {
			case "get":
				data, err = n.Get(ctx, arg)
			case "untar":
				err = n.Untar(body, arg)
			default:
				err = fmt.Errorf("kpipe net serve: no request %q", op)
			}
			var se *fetch.StatusError
			switch {
			case errors.As(err, &se):
				answer(id, "status", []byte(fmt.Sprintf("%d %s", se.Code, se.Text)))
			case err != nil:
				answer(id, "err", []byte(err.Error()))
			default:
				answer(id, "ok", data)
			}
		}()
	}
	wg.Wait()
	return nil
}
