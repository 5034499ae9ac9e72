//go:build unix

package cli

import (
	"fmt"
	"os"
	"syscall"
)

// replaceProcess executes the server in kpipe's process (execve): its
// pid, signals and exit status are the server's, as if it had been run
// directly.
func replaceProcess(path string, args []string) error {
	err := syscall.Exec(path, append([]string{path}, args...), os.Environ())
	return fmt.Errorf("starting %s: %w", path, err)
}
