package loaders

import "testing"

// The plain line finds an entry's line in the block style most files use,
// in `- path:` items, and in flow sequences (`resources: [a.yaml]`).
func TestLineOf(t *testing.T) {
	for _, tc := range []struct {
		data, text string
		want       int
	}{
		{"resources:\n- a.yaml\n- b.yaml\n", "b.yaml", 3},
		{"patches:\n- path: p.yaml\n", "p.yaml", 2},
		{"namePrefix: x-\nresources: [a.yaml, \"b.yaml\"]\n", "b.yaml", 2},
		{"resources: [a.yaml,\n  b.yaml]\n", "b.yaml", 2},
		{"resources:\n- a.yaml\n", "c.yaml", 0},
	} {
		if got := lineOf([]byte(tc.data), tc.text); got != tc.want {
			t.Errorf("lineOf(%q, %q) = %d, want %d", tc.data, tc.text, got, tc.want)
		}
	}
}
