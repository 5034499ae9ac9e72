//go:build unix

package cli

import (
	"os"
	"syscall"
)

// stopSignals are the signals that stop kpipe cleanly: SIGINT (Ctrl-C),
// SIGTERM (what timeout, CI cancellation and Kubernetes send) and SIGHUP
// (a closed terminal).
func stopSignals() []os.Signal {
	return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
}

// signalExitCode is the exit status a shell gives a process killed by s:
// 128 plus its number (130, 143, 129).
func signalExitCode(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

// signalName spells a stop signal as kill -l does.
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}
