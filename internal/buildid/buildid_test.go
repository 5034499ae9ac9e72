package buildid

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestGoBuildID checks that the build ID read from the test binary is the
// one the Go toolchain reports for it, and that a file without one gives "".
func TestGoBuildID(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want, err := exec.Command(goTool, "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	if got := GoBuildID(exe); got == "" || got != strings.TrimSpace(string(want)) {
		t.Errorf("goBuildID = %q, go tool buildid says %q", got, strings.TrimSpace(string(want)))
	}
	if got := GoBuildID("../../testdata/examples/prod.expected.yaml"); got != "" {
		t.Errorf("goBuildID of a YAML file = %q, want empty", got)
	}
}
