//go:build !unix

package procgroup

import "os/exec"

// prepare leaves the default cancellation (kill the process) in place:
// there are no process groups to kill here.
func prepare(*exec.Cmd) {}

func reap(*exec.Cmd) {}

func signaled(*exec.ExitError) (string, bool) { return "", false }
