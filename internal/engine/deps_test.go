package engine

import (
	"os/exec"
	"strings"
	"testing"
)

// The engine does not link the standard plugin package: it needs cgo
// (libc, a dynamically linked executable) and makes the linker keep every
// exported method, about a third of kpipe's executable. Go plugins are
// opened by the opener a program passes (Options.GoPlugins, package
// plugins/goplugin), so that a program can leave them out. This fails,
// naming the importer, when a change makes the engine import package
// plugin again, by whatever path.
func TestEngineDoesNotLinkPlugin(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command (https://go.dev/dl)")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	imports := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imps, _ := strings.Cut(l, "|")
		imports[pkg] = strings.Fields(imps)
	}
	const engine = "github.com/kpipe/kpipe/internal/engine"
	if _, ok := imports["github.com/kpipe/kpipe/plugins"]; len(imports) < 50 || !ok {
		t.Fatalf("go list -deps . listed %d packages, without package plugins: not the engine's list", len(imports))
	}
	if _, ok := imports["plugin"]; !ok {
		return
	}
	// The shortest import path from the engine to package plugin.
	from := map[string]string{engine: ""}
	for queue := []string{engine}; len(queue) > 0; queue = queue[1:] {
		for _, imp := range imports[queue[0]] {
			if _, ok := from[imp]; !ok {
				from[imp] = queue[0]
				queue = append(queue, imp)
			}
		}
	}
	chain := []string{"plugin"}
	for p := from["plugin"]; p != ""; p = from[p] {
		chain = append([]string{p}, chain...)
	}
	t.Errorf("the engine links the standard plugin package, imported by %s (%s): pass an opener (package plugins/goplugin) through Options.GoPlugins instead",
		chain[len(chain)-2], strings.Join(chain, " -> "))
}
