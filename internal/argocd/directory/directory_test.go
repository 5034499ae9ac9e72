package directory_test

import (
	"testing"

	"github.com/kpipe/kpipe/internal/argocd/directory"
)

// Argo CD compiles include/exclude without separators: * crosses "/".
func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pat, path string
		want      bool
	}{
		{"*.yaml", "sub/c.yaml", true},
		{"*.yaml", "a.yml", false},
		{"{a.yaml,sub/*}", "sub/d.yml", true},
		{"{a.yaml,sub/*}", "b.json", false},
		{"[", "[", false}, // does not compile: matches nothing
	} {
		if got := directory.Match(c.pat, c.path); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.pat, c.path, got)
		}
	}
}

func TestDecodeStream(t *testing.T) {
	objs, err := directory.DecodeStream([]byte("---\n# c\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nnull\n"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("got %v, %v", objs, err)
	}
	_, err = directory.DecodeStream([]byte("{{ .Values.x }}\n"))
	if err == nil || err.Error() != "json: offset 2: invalid character '{' looking for beginning of object key string" {
		t.Errorf("a helm template file: %v", err)
	}
}
