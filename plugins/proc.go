package plugins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/kpipe/kpipe/internal/procgroup"
)

// maxStderr bounds how much of a plugin's standard error is kept; the rest
// is counted and dropped (firstLines says how much).
const maxStderr = 64 << 10

// maxStdout bounds a plugin's standard output: past it the plugin is
// stopped and fails. Generous (a real generator prints a few MiB at most),
// it keeps a runaway plugin from filling kpipe's memory.
const maxStdout = 256 << 20

// exec runs the plugin's executable with args and stdin, in its working
// directory and environment, bounded by its timeout. It returns standard
// output and error (what it printed before failing, too); a failure to
// start, a non-zero exit, a signal, the timeout or output past maxStdout is
// an error naming the plugin and quoting its standard error. The plugin
// runs in its own process group, killed on cancellation and again once it
// has exited, so that no child of it outlives the run.
func (p *plugin) exec(ctx context.Context, args []string, stdin []byte) (stdout, stderr []byte, err error) {
	tctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	ictx, stop := context.WithCancel(tctx)
	defer stop()
	cmd := exec.CommandContext(ictx, p.path, args...)
	cmd.Dir = p.dir
	cmd.Env = p.env
	cmd.Stdin = bytes.NewReader(stdin)
	limit := p.maxOut
	if limit == 0 {
		limit = maxStdout
	}
	out := &procgroup.Capped{Max: limit, OnOverflow: stop}
	errBuf := &procgroup.Capped{Max: maxStderr}
	cmd.Stdout = out
	cmd.Stderr = errBuf
	procgroup.Prepare(cmd)
	runErr := cmd.Run()
	procgroup.Reap(cmd)
	stderr = errBuf.Bytes()
	errLines := firstLines("stderr", stderr) + truncation(errBuf)
	switch {
	case out.Overflowed() && ctx.Err() == nil:
		return nil, stderr, p.fail("its output passed %d MiB, the most kpipe takes from a plugin; it was stopped%s", limit>>20, errLines)
	case runErr == nil:
		if p.warn != nil && len(bytes.TrimSpace(stderr)) > 0 {
			p.warn(fmt.Sprintf("%s wrote to stderr:%s", p.Describe(), firstLines("", stderr)+truncation(errBuf)))
		}
		return out.Bytes(), stderr, nil
	case errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return out.Bytes(), stderr, p.fail("timed out after %s and was killed (raise --plugin-timeout if it needs longer)%s", p.timeout, errLines)
	case ctx.Err() != nil:
		return nil, stderr, ctx.Err()
	case errors.Is(runErr, exec.ErrWaitDelay):
		return nil, stderr, p.fail("exited, but a process it started kept its output open; that process was killed and the output is not used%s", errLines)
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		if sig, ok := procgroup.Signaled(ee); ok {
			return out.Bytes(), stderr, p.fail("crashed: killed by signal %s%s", sig, errLines)
		}
		if p.mode == modeKEP && ee.ExitCode() == kepNotSupported {
			return nil, stderr, errNotSupported
		}
		return out.Bytes(), stderr, p.fail("exited with status %d%s", ee.ExitCode(), errLines)
	}
	return nil, stderr, p.fail("cannot run it: %v%s", runErr, errLines)
}

// truncation is the line saying how much of a stream was dropped, if any.
func truncation(c *procgroup.Capped) string {
	if t := c.Truncation(); t != "" {
		return "\n  " + t
	}
	return ""
}
