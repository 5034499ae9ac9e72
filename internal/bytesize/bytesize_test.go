package bytesize

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"1048576": 1 << 20, "500MB": 500e6, "2GiB": 2 << 30, "2gib": 2 << 30, "1.5K": 1536,
		" 10 MiB ": 10 << 20, "3B": 3, "1TB": 1e12, "64M": 64 << 20,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MB", "-1GiB", "ten", "1 PB"} {
		if got, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", bad, got)
		}
	}
}
