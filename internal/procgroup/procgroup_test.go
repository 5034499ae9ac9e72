package procgroup

import (
	"strings"
	"testing"
)

func TestCappedKeepsTheFirstBytesAndSaysWhatItDropped(t *testing.T) {
	overflows := 0
	c := &Capped{Max: 5, OnOverflow: func() { overflows++ }}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if string(c.Bytes()) != "abcde" || !c.Overflowed() || overflows != 1 {
		t.Errorf("kept %q, overflowed %v, %d calls", c.Bytes(), c.Overflowed(), overflows)
	}
	if tr := c.Truncation(); !strings.Contains(tr, "5 more bytes") {
		t.Errorf("Truncation = %q", tr)
	}
	if tr := (&Capped{Max: 5}).Truncation(); tr != "" {
		t.Errorf("nothing dropped, Truncation = %q", tr)
	}
}
