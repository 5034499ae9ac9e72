package remotetest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the server stop when the test process dies (killed
// by a test timeout, say) instead of serving on as an orphan.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
