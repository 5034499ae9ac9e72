package procstat

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
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

// TestRun: a child's standard output comes back with its wall and CPU
// time; a failing one is an error that holds its standard error.
func TestRun(t *testing.T) {
	if os.Getenv("PROCSTAT_CHILD") != "" {
		os.Stdout.WriteString("the child's output\n")
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, st, err := Run(".", append(os.Environ(), "PROCSTAT_CHILD=1"), exe, "-test.run=^TestRun$")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "the child's output") {
		t.Errorf("stdout %q: not the child's", out)
	}
	if st.Wall <= 0 || st.CPU <= 0 || st.CPU > 10*st.Wall+time.Second {
		t.Errorf("stats %+v: want a positive wall and CPU time", st)
	}
	_, _, err = Run(".", nil, exe, "-no-such-flag")
	if err == nil || !strings.Contains(err.Error(), "no-such-flag") {
		t.Errorf("a failing child: %v, want an error naming its complaint", err)
	}
}
