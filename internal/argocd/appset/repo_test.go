package appset

import "testing"

// Git pathspecs without magic: * crosses "/", a plain path names itself
// and what is under it.
func TestPathspecMatch(t *testing.T) {
	for _, c := range []struct {
		pat, path string
		want      bool
	}{
		{"apps/*/config.json", "apps/a/config.json", true},
		{"apps/*/config.json", "apps/a/b/config.json", true},
		{"apps/*/config.json", "other/a/config.json", false},
		{"apps", "apps/a/config.json", true},
		{"apps", "appsx/config.json", false},
		{"**/config.json", "c/d/config.json", true},
		{"clusters/[dp]*/config.yaml", "clusters/dev/config.yaml", true},
		{"clusters/[!d]*/config.yaml", "clusters/dev/config.yaml", false},
		{"a?c", "abc", true},
		{".", "anything", true},
	} {
		if got := PathspecMatch(c.pat, c.path); got != c.want {
			t.Errorf("PathspecMatch(%q, %q) = %v", c.pat, c.path, got)
		}
	}
}

func TestFastTemplate(t *testing.T) {
	got, err := fastTemplate("{{a}}-{{ b }}-{{missing}}-{{ n }}", map[string]any{"a": "1", "b": "2", "n": 3})
	if err != nil || got != "1-2-{{missing}}-{{ n }}" {
		t.Errorf("got %q, %v", got, err)
	}
}
