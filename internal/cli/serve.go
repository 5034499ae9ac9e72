package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"

	"github.com/urfave/cli/v2"
)

// serverName is the cache server's command (cmd/kpipe-cache-server).
// `kpipe cache serve` hands over to it: the server is a binary of its own
// so that kpipe, a short process started thousands of times a day, does
// not link Badger (cache/doc.go; TestKpipeDoesNotLinkBadger).
const serverName = "kpipe-cache-server"

// installLine and cloneInstall are how to install kpipe's binaries
// (kpipe, kpipe-full, kpipe-cache-server) when one is missing: the lines
// README.md, docs/install.md and docs/cache-server.md give too
// (TestInstallLinesAgree).
const (
	installLine  = "go install github.com/kpipe/kpipe/cmd/...@latest"
	cloneInstall = "go install ./cmd/..."
)

func cacheServeCommand() *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "serve a shared cache to a CI fleet: hands over to " + serverName + " with the same arguments (`kpipe cache serve --help` for its flags)",
		ArgsUsage: "--dir DIR [--listen ADDR] [--max-size SIZE] [...]",
		// The arguments are the server's: they pass through untouched
		// (--help included).
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			path, err := findServer()
			if err != nil {
				if slices.ContainsFunc(args, func(a string) bool { return a == "--help" || a == "-h" || a == "-help" }) {
					fmt.Fprint(c.App.Writer, serveHelpWithoutServer(err))
					return nil
				}
				return err
			}
			return handOver(c.Context, path, args, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// findServer finds kpipe-cache-server next to the running kpipe (as the
// release archives and the container image place it; next to the link's
// target too, when kpipe is a symbolic link), then on PATH.
func findServer() (string, error) {
	p, err := findBeside(serverName)
	if err != nil {
		return "", fmt.Errorf("kpipe cache serve runs the cache server, %s, a binary of its own, and %v: install it with `%s` (from a clone of kpipe: `%s`; the release archives and the container image carry it beside kpipe)", serverName, err, installLine, cloneInstall)
	}
	return p, nil
}

// serveHelpWithoutServer is `kpipe cache serve --help` when the server is
// missing: what the command does and how to get it.
func serveHelpWithoutServer(missing error) string {
	return `NAME:
   kpipe cache serve - serve a shared cache to a CI fleet

USAGE:
   kpipe cache serve --dir DIR [--listen ADDR] [--max-size SIZE] [--read-token-file F]
       [--write-token-file F] [--tls-cert F --tls-key F]

   The cache server speaks the protocol of kpipe build --remote-cache http://...
   and keeps its objects in a Badger database. It is a binary of its own,
   ` + serverName + `, which kpipe cache serve runs with the same arguments;
   its flags are in ` + serverName + ` --help and docs/cache-server.md.

   ` + missing.Error() + `
`
}

// handOver runs the server with args in kpipe's place. When kpipe writes
// to its own stdout and stderr (the command line), the server takes over
// the process (replaceProcess: on unix the same process, so signals, exit
// status and pid are the server's). Otherwise (kpipe run in-process with
// other writers, as tests do) it runs as a child writing to them, stopped
// when ctx is done, and kpipe exits with its status.
func handOver(ctx context.Context, path string, args []string, stdout, stderr io.Writer) error {
	if unquiet(stdout) == os.Stdout && unquiet(stderr) == os.Stderr {
		return replaceProcess(path, args)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill() // (Windows)
		}
		return nil
	}
	return childStatus(path, cmd.Run())
}

// childStatus turns the server's end into kpipe's: its exit status, with
// nothing more printed (it said why), or the error of a server that did
// not start.
func childStatus(path string, err error) error {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		code := ee.ExitCode()
		if code < 0 {
			code = 1 // killed by a signal
		}
		return &exitError{code: code}
	}
	return fmt.Errorf("starting %s: %w", path, err)
}
