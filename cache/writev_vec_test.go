//go:build linux || darwin

package cache

import (
	"slices"
	"testing"
)

// TestAdvance checks what a partial writev leaves to write: the rest of
// a buffer cut in the middle, and no empty buffer in front.
func TestAdvance(t *testing.T) {
	for _, c := range []struct {
		n    int
		want []string
	}{
		{1, []string{"b", "", "cde", ""}},
		{2, []string{"cde", ""}},
		{3, []string{"de", ""}},
		{5, nil},
	} {
		bufs := [][]byte{[]byte("ab"), nil, []byte("cde"), {}}
		var got []string
		for _, b := range advance(bufs, c.n) {
			got = append(got, string(b))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("advance(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
