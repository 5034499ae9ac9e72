package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/fetch"
)

// procNet is the kpipe binary's fetch.Net: each download (a URL
// resource, a remote base kustomize falls back to reading over HTTP, a
// chart repository's index) is one `kpipe-full net get URL` process, and
// unpacking a chart one `kpipe-full net untar DIR`; the run goes on in
// kpipe, on kpipe's cache. Real repositories name remote bases in many
// roots: handing every such build-all over to kpipe-full would build it
// twice, the second time on kpipe-full's cache (measured: a warm
// build-all of kubeflow/manifests 1.5x slower). A process per download
// costs a few milliseconds beside the download.
type procNet struct{}

// netStatusExit is the exit status of `kpipe-full net get` for an HTTP
// status that is not 2xx; its stdout is then "CODE TEXT".
const netStatusExit = 3

func (procNet) Get(ctx context.Context, url string) ([]byte, error) {
	var stdout bytes.Buffer
	code, stderr, err := runNet(ctx, nil, &stdout, "get", url)
	switch {
	case err != nil:
		return nil, err
	case code == 0:
		return stdout.Bytes(), nil
	case code == netStatusExit:
		c, text, _ := strings.Cut(stdout.String(), " ")
		n, err := strconv.Atoi(c)
		if err != nil {
			return nil, fmt.Errorf("%s: kpipe-full net get answered %q", url, stdout.String())
		}
		return nil, &fetch.StatusError{URL: url, Code: n, Text: text}
	}
	return nil, errors.New(stderr)
}

func (procNet) Untar(data []byte, dir string) error {
	code, stderr, err := runNet(context.Background(), bytes.NewReader(data), io.Discard, "untar", dir)
	switch {
	case err != nil:
		return err
	case code != 0:
		return errors.New(stderr)
	}
	return nil
}

// runNet runs `kpipe-full net ARGS...` and returns its exit status and
// what it said on stderr (its error, one line), or the error of a
// kpipe-full that is missing or did not run.
func runNet(ctx context.Context, stdin io.Reader, stdout io.Writer, args ...string) (int, string, error) {
	path, err := findBeside(fullName)
	if err != nil {
		return 0, "", fmt.Errorf("%w: the network is kpipe-full's, the kpipe with the network, Go plugins, Flux's flags and HelmReleases and Argo CD's ApplicationSets; %v: install it with `%s` (from a clone of kpipe: `%s`; the release archives and the container image carry it beside kpipe)", fetch.ErrNoNet, err, installLine, cloneInstall)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, append([]string{"net"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, "", nil
	case ctx.Err() != nil:
		return 0, "", context.Cause(ctx)
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return ee.ExitCode(), strings.TrimSuffix(stderr.String(), "\n"), nil
	}
	return 0, "", fmt.Errorf("running %s net: %v", path, err)
}

// netCommand is `kpipe-full net get URL` and `kpipe-full net untar DIR`,
// hidden: the kpipe binary's downloads (procNet), with kpipe-full's
// fetch.Net. get writes the body to stdout (exit 0), or "CODE TEXT" for
// a status that is not 2xx (exit netStatusExit), or its error to stderr
// (exit 1); untar unpacks the gzipped tar on stdin into DIR.
func netCommand() *cli.Command {
	net := func(c *cli.Context) (fetch.Net, error) {
		n := extensions(c).Net
		if _, ok := n.(procNet); ok || n == nil || c.NArg() != 1 {
			return nil, usage(c, "kpipe net is kpipe-full's, for kpipe: net get URL, net untar DIR")
		}
		return n, nil
	}
	fail := func(c *cli.Context, err error) error {
		fmt.Fprintln(c.App.ErrWriter, err)
		return &exitError{code: 1}
	}
	return &cli.Command{
		Name:   "net",
		Hidden: true,
		Usage:  "the downloads of a kpipe without the network (kpipe-full only)",
		Subcommands: []*cli.Command{
			{Name: "get", Action: func(c *cli.Context) error {
				n, err := net(c)
				if err != nil {
					return err
				}
				data, err := n.Get(c.Context, c.Args().First())
				var se *fetch.StatusError
				if errors.As(err, &se) {
					fmt.Fprintf(c.App.Writer, "%d %s", se.Code, se.Text)
					return &exitError{code: netStatusExit}
				}
				if err != nil {
					return fail(c, err)
				}
				_, err = c.App.Writer.Write(data)
				return err
			}},
			{Name: "untar", Action: func(c *cli.Context) error {
				n, err := net(c)
				if err != nil {
					return err
				}
				r := c.App.Reader
				if r == nil {
					return fail(c, errors.New("no input"))
				}
				data, err := io.ReadAll(r)
				if err != nil {
					return fail(c, err)
				}
				if err := n.Untar(data, c.Args().First()); err != nil {
					return fail(c, err)
				}
				return nil
			}},
		},
	}
}
