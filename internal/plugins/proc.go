package plugins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// maxStderr bounds how much of a plugin's standard error is kept.
const maxStderr = 64 << 10

// exec runs the plugin's executable with args and stdin, in its working
// directory and environment, bounded by its timeout. It returns standard
// output and error (what it printed before failing, too); a failure to
// start, a non-zero exit, a signal or the timeout is an error naming the
// plugin and quoting its standard error.
func (p *plugin) exec(ctx context.Context, args []string, stdin []byte) (stdout, stderr []byte, err error) {
	tctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, p.path, args...)
	cmd.Dir = p.dir
	cmd.Env = p.env
	cmd.Stdin = bytes.NewReader(stdin)
	var out bytes.Buffer
	errBuf := &limitedBuffer{max: maxStderr}
	cmd.Stdout = &out
	cmd.Stderr = errBuf
	killGroup(cmd)
	// A plugin's children may keep its pipes open after it was killed.
	cmd.WaitDelay = 2 * time.Second
	runErr := cmd.Run()
	stderr = errBuf.Bytes()
	switch {
	case runErr == nil:
		if p.warn != nil && len(bytes.TrimSpace(stderr)) > 0 {
			p.warn(fmt.Sprintf("%s wrote to stderr:%s", p.Describe(), firstLines("", stderr)))
		}
		return out.Bytes(), stderr, nil
	case errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return out.Bytes(), stderr, p.fail("timed out after %s and was killed (raise --plugin-timeout if it needs longer)%s", p.timeout, firstLines("stderr", stderr))
	case ctx.Err() != nil:
		return nil, stderr, ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		if sig, ok := signaled(ee); ok {
			return out.Bytes(), stderr, p.fail("crashed: killed by signal %s%s", sig, firstLines("stderr", stderr))
		}
		if p.mode == modeKEP && ee.ExitCode() == kepNotSupported {
			return nil, stderr, errNotSupported
		}
		return out.Bytes(), stderr, p.fail("exited with status %d%s", ee.ExitCode(), firstLines("stderr", stderr))
	}
	return nil, stderr, p.fail("cannot run it: %v%s", runErr, firstLines("stderr", stderr))
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}
