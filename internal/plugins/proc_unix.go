//go:build unix

package plugins

import (
	"os/exec"
	"syscall"
)

// killGroup runs the command in its own process group and makes
// cancellation kill the whole group, so that a script's children (a
// `sleep` it waits for) die with it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// signaled reports the signal that ended a process, if one did.
func signaled(ee *exec.ExitError) (string, bool) {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	return ws.Signal().String(), true
}
