// Package procgroup runs the programs kpipe starts (plugins, KRM
// functions, helm) so that nothing they start outlives them: each runs in
// its own process group, cancellation kills the whole group, and the group
// is killed again once the program has exited, which ends the orphans
// (a `sleep` left in the background holding its standard output open). It
// also bounds what kpipe keeps of their output streams.
package procgroup

import (
	"bytes"
	"fmt"
	"os/exec"
	"sync"
	"time"
)

// WaitDelay is how long Wait waits, once the program has exited or was
// cancelled, for its output pipes to close before closing them itself.
const WaitDelay = 2 * time.Second

// Prepare sets cmd up to run in its own process group (on unix), to kill
// that group when its context is cancelled, and not to wait longer than
// WaitDelay for its pipes. Call it before Start; call Reap after Wait.
func Prepare(cmd *exec.Cmd) {
	prepare(cmd)
	cmd.WaitDelay = WaitDelay
}

// Reap kills what is left of cmd's process group after cmd has exited
// (its orphaned children); it does nothing where groups are not used. The
// group keeps the leader's id while any member lives, so the id cannot be
// reused for another process then; once the group is empty the kill finds
// nothing (or, should the id have been reused within the moment between
// Wait and Reap by a process that made itself a group leader, hits that
// group: a race kpipe accepts, as there is no way to kill a group before
// its leader is reaped with os/exec). A child that started its own session
// (a daemon such as gpg-agent) is not in the group and is left alone.
func Reap(cmd *exec.Cmd) { reap(cmd) }

// Signaled reports the signal that ended a process, if one did and the
// platform tells.
func Signaled(ee *exec.ExitError) (string, bool) { return signaled(ee) }

// Capped is an io.Writer that keeps at most Max bytes. What comes after is
// counted and dropped; the first write past the cap calls OnOverflow (if
// set), which may cancel the program. It is safe for concurrent use.
type Capped struct {
	Max        int
	OnOverflow func()

	mu      sync.Mutex
	buf     bytes.Buffer
	dropped int64
}

// Write keeps what fits and drops the rest; it never fails, so the
// program is not stopped by a broken pipe that kpipe caused.
func (c *Capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	room := c.Max - c.buf.Len()
	first := false
	switch {
	case len(p) <= room:
		c.buf.Write(p)
	default:
		if room > 0 {
			c.buf.Write(p[:room])
		}
		first = c.dropped == 0
		c.dropped += int64(len(p) - max(room, 0))
	}
	c.mu.Unlock()
	if first && c.OnOverflow != nil {
		c.OnOverflow()
	}
	return len(p), nil
}

// Bytes returns what was kept.
func (c *Capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Bytes()
}

// Overflowed reports whether anything was dropped.
func (c *Capped) Overflowed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped > 0
}

// Truncation returns a line saying how much was dropped ("" when
// nothing was), for the end of a quoted stream.
func (c *Capped) Truncation() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped == 0 {
		return ""
	}
	return fmt.Sprintf("... (truncated: %d more bytes not kept; kpipe keeps the first %d)", c.dropped, c.Max)
}
