package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// listTree returns every path below dir, relative, for a test's messages
// and checks.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// `-o DIR` writes only directly into DIR: a resource whose name (or kind,
// or namespace) would make its file name a path (`../../x`, `/tmp/x`,
// `apps/x` through a symlinked `out/apps`) is an error naming the
// resource, and nothing at all is written. kustomize writes such files
// wherever the name points.
func TestOutputDirRefusesNamesThatLeaveIt(t *testing.T) {
	for _, name := range []string{
		"/../../../../../../../../../ESCAPE/evil",
		"../../evil",
		"x/evil",
		"x/../../../evil",
		`..\..\evil`,
	} {
		t.Run(name, func(t *testing.T) {
			// The file name is lower-cased: the absolute case needs a
			// directory whose path has no capitals.
			dir, err := os.MkdirTemp("", "kpipe-confine-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if dir != strings.ToLower(dir) {
				t.Skip("the temporary directory has capitals in its path")
			}
			esc := filepath.Join(dir, "elsewhere")
			name := strings.ReplaceAll(name, "ESCAPE", strings.TrimPrefix(esc, "/"))
			writeFiles(t, dir, map[string]string{
				"k/kustomization.yaml": "resources:\n- cm.yaml\n",
				"k/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: '" + name + "'\n",
				"elsewhere/.keep":      "",
			})
			out := filepath.Join(dir, "out", "x")
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			// A symlinked directory inside the out dir, pointing elsewhere.
			if err := os.Symlink(esc, filepath.Join(out, "v1_configmap_x")); err != nil {
				t.Fatal(err)
			}
			before := strings.Join(listTree(t, dir), "\n")
			code, _, errOut := kpipe(t, "build", filepath.Join(dir, "k"), "-o", out)
			if code == 0 || !strings.Contains(errOut, "ConfigMap.v1.[noGrp]/"+name) || !strings.Contains(errOut, "writes only directly into the directory") {
				t.Errorf("exit %d, stderr %s", code, errOut)
			}
			if after := strings.Join(listTree(t, dir), "\n"); after != before {
				t.Errorf("files written (nothing may be, on error):\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}
