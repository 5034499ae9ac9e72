package procstat

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
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

// TestRun: Run returns what the command printed and how long it ran, and
// a failure names the command and carries what it wrote to stderr.
func TestRun(t *testing.T) {
	if os.Getenv("PROCSTAT_HELPER") != "" {
		fmt.Print("out")
		fmt.Fprint(os.Stderr, "complaint")
		if os.Getenv("PROCSTAT_HELPER") == "fail" {
			os.Exit(3)
		}
		os.Exit(0)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestRun$")
	cmd.Env = append(os.Environ(), "PROCSTAT_HELPER=ok")
	out, u, err := Run(cmd)
	if err != nil || string(out) != "out" || u.Wall <= 0 {
		t.Errorf("Run = %q, %+v, %v; want out, a wall time, no error", out, u, err)
	}
	cmd = exec.Command(exe, "-test.run=^TestRun$")
	cmd.Env = append(os.Environ(), "PROCSTAT_HELPER=fail")
	if _, _, err := Run(cmd); err == nil || !strings.Contains(err.Error(), "complaint") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("a failing command: %v", err)
	}
}
