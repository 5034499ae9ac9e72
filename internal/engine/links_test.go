package engine

import (
	"os/exec"
	"strings"
	"testing"
)

// The packages on kpipe build's path link neither net nor os/user (nor
// archive/tar, which imports os/user): on unix both link libc through
// cgo, which makes the kpipe binary dynamically linked and costs every
// run of it about half a millisecond at start. Downloads go through
// fetch.Net (package netfetch) and the remote cache's backends are in
// cache/remote/backend, which only the callers that need them import.
func TestBuildPathLinksNoLibc(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command (https://go.dev/dl)")
	}
	const mod = "github.com/kpipe/kpipe/"
	roots := []string{".", "../batch", "../argocd/render", "../flux/cluster", "../../cache"}
	for _, root := range roots {
		out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{join .Imports " "}}`, root).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", root, err)
		}
		// Who first imports each package, on a path from root.
		importer := map[string]string{}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		for _, line := range lines {
			pkg, imps, _ := strings.Cut(line, "|")
			for _, imp := range strings.Fields(imps) {
				if _, ok := importer[imp]; !ok {
					importer[imp] = pkg
				}
			}
		}
		// -deps lists the root last.
		top, _, _ := strings.Cut(lines[len(lines)-1], "|")
		if len(lines) < 20 || !strings.HasPrefix(top, mod) {
			t.Fatalf("go list -deps %s listed %d packages, ending with %s: not kpipe's list", root, len(lines), top)
		}
		for _, bad := range []string{"net", "os/user", "archive/tar"} {
			if _, ok := importer[bad]; !ok {
				continue
			}
			chain := []string{bad}
			for p := bad; p != top; {
				p = importer[p]
				chain = append([]string{strings.TrimPrefix(p, mod)}, chain...)
			}
			t.Errorf("%s links %s (net and os/user link libc through cgo): %s", strings.TrimPrefix(top, mod), bad, strings.Join(chain, " -> "))
		}
	}
}
