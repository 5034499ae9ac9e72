//go:build !unix

package plugins

import "os/exec"

// killGroup leaves the default cancellation (kill the process) in place.
func killGroup(*exec.Cmd) {}

// signaled reports the signal that ended a process: unknown here.
func signaled(*exec.ExitError) (string, bool) { return "", false }
