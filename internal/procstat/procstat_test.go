package procstat

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// TestMaxRSS: a finished child that allocated memory reports a peak RSS of
// at least a megabyte and less than the machine could hold.
func TestMaxRSS(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows reports no peak RSS through os.ProcessState")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if rss := MaxRSS(cmd.ProcessState); rss < 1<<20 || rss > 1<<40 {
		t.Errorf("MaxRSS = %d bytes, want between 1 MiB and 1 TiB", rss)
	}
}
