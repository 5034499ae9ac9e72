//go:build unix

package procstat

import (
	"os"
	"runtime"
	"syscall"
)

// MaxRSS is the peak resident set size of the finished process ps, in
// bytes, or 0 when the system does not say.
func MaxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	// Darwin reports bytes; Linux and the BSDs kilobytes.
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
