//go:build windows

package procstat

import "os"

// MaxRSS is the peak resident set size of the finished process ps, in
// bytes, or 0 when the system does not say (Windows does not, through
// os.ProcessState).
func MaxRSS(ps *os.ProcessState) int64 { return 0 }
