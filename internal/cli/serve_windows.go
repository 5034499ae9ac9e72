package cli

import (
	"os"
	"os/exec"
	"os/signal"
)

// replaceProcess runs the server as a child (Windows cannot replace a
// process's image) on kpipe's standard streams, and kpipe exits with its
// status.
func replaceProcess(path string, args []string) error { return runChild(path, args) }

// runChild runs the server as a child on kpipe's own standard streams
// and returns its exit status as kpipe's. The stop signals reach the
// server as well (the same terminal or console, or a kill of the group):
// kpipe lets it drain and exits with its status.
func runChild(path string, args []string) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals()...)
	defer signal.Stop(sigs)
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return childStatus(path, cmd.Run())
}
