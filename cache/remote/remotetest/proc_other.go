//go:build !linux

package remotetest

import "os/exec"

// dieWithParent does nothing here: the servers stop in the tests' cleanup.
func dieWithParent(*exec.Cmd) {}
