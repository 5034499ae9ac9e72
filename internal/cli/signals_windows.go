package cli

import (
	"os"
	"syscall"
)

// stopSignals are the signals that stop kpipe cleanly: Ctrl-C and Ctrl-Break
// (os.Interrupt) and the console's close, logoff and shutdown events, which
// Go delivers as SIGTERM.
func stopSignals() []os.Signal {
	return []os.Signal{os.Interrupt, syscall.SIGTERM}
}

// signalExitCode is the exit status kpipe ends with after the signal s:
// 128 plus its number, as on unix (130 for Ctrl-C, 143 for SIGTERM).
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
	}
	return s.String()
}
