package fsread

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// ReadDir lists what os.ReadDir lists, with the same types, in more than
// one read of the directory when it is large, and its stat is the
// directory's.
func TestReadDirIsOsReadDir(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), nil, 0o644))
	must(os.Symlink("sub", filepath.Join(dir, "link")))
	must(os.Symlink("missing", filepath.Join(dir, "dangling")))
	for i := 0; i < 300; i++ { // more than one 8 KiB read of entries
		must(os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d-%s.yaml", i, strings.Repeat("x", 40))), nil, 0o644))
	}
	fi, got, err := ReadDir(dir)
	must(err)
	want, err := os.ReadDir(dir)
	must(err)
	line := func(name string, typ os.FileMode) string { return name + " " + typ.String() }
	var g, w []string
	for _, e := range got {
		g = append(g, line(e.Name(), e.Type()))
		if e.IsDir() != e.Type().IsDir() {
			t.Errorf("%s: IsDir %v, type %v", e.Name(), e.IsDir(), e.Type())
		}
	}
	for _, e := range want {
		w = append(w, line(e.Name(), e.Type()))
	}
	sort.Strings(g)
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("ReadDir listed\n%s\nos.ReadDir\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	st, err := os.Stat(dir)
	must(err)
	if !fi.IsDir() || fi.Name() != st.Name() || fi.Mode() != st.Mode() || !fi.ModTime().Equal(st.ModTime()) {
		t.Errorf("ReadDir's stat %s %v %v, os.Stat's %s %v %v", fi.Name(), fi.Mode(), fi.ModTime(), st.Name(), st.Mode(), st.ModTime())
	}
	if _, _, err := ReadDir(filepath.Join(dir, "kustomization.yaml")); err == nil {
		t.Error("ReadDir of a file: no error")
	}
	if _, _, err := ReadDir(filepath.Join(dir, "missing")); !os.IsNotExist(err) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("ReadDir of a missing directory: %v", err)
	}
}
