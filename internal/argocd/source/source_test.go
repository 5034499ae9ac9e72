package source

import (
	"testing"
	"testing/fstest"
)

func TestDiscover(t *testing.T) {
	f := &fstest.MapFile{Data: []byte("x")}
	for _, c := range []struct {
		files []string
		want  Type
	}{
		{[]string{"a/Chart.yaml", "a/kustomization.yaml"}, Kustomize},
		{[]string{"a/MyChart.yaml"}, Helm},
		{[]string{"a/kustomization.yaml", "a/values-Chart.yaml"}, Helm}, // later in lexical order wins
		{[]string{"a/sub/kustomization.yaml", "a/x.yaml"}, Directory},   // only the app directory counts
	} {
		fsys := fstest.MapFS{}
		for _, n := range c.files {
			fsys[n] = f
		}
		if got, err := Discover(fsys, "a"); err != nil || got != c.want {
			t.Errorf("%v: %s, %v; want %s", c.files, got, err, c.want)
		}
	}
}

func TestAppPath(t *testing.T) {
	fsys := fstest.MapFS{"a/f.yaml": {Data: []byte("x")}}
	for p, want := range map[string]string{
		"../x": "../x: app path outside root", "/a": "/a: app path is absolute",
		"b": "b: app path does not exist", "a/f.yaml": "a/f.yaml: app path is not a directory",
	} {
		if _, err := AppPath(fsys, p); err == nil || err.Error() != want {
			t.Errorf("AppPath(%q): %v, want %s", p, err, want)
		}
	}
	if d, err := AppPath(fsys, ""); err != nil || d != "." {
		t.Errorf("empty path is the root: %q, %v", d, err)
	}
}
