package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// screen is what a terminal shows after out is written on one line: a
// carriage return moves the cursor back to the start, later characters
// overwrite earlier ones.
func screen(out string) string {
	var line []byte
	col := 0
	for i := 0; i < len(out); i++ {
		if out[i] == '\r' {
			col = 0
			continue
		}
		if col < len(line) {
			line[col] = out[i]
		} else {
			line = append(line, out[i])
		}
		col++
	}
	return string(line)
}

// clock is a fake time that tests move on.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// The count starts at zero, the last step is drawn however soon it comes,
// and Finish clears the line: spaces over it, the cursor back at its start.
func TestLineFinalCountAndClear(t *testing.T) {
	var out bytes.Buffer
	c := &clock{t: time.Unix(1, 0)}
	l := newLine(&out, "building", 3, c.now)
	if got := screen(out.String()); got != "building 0/3" {
		t.Errorf("at the start the line shows %q", got)
	}
	for range 3 {
		l.Step()
	}
	if got := screen(out.String()); got != "building 3/3" {
		t.Errorf("after the last step the line shows %q, want building 3/3", got)
	}
	l.Finish()
	if got := out.String(); !strings.HasSuffix(got, "\r"+strings.Repeat(" ", len("building 3/3"))+"\r") {
		t.Errorf("Finish did not clear the line: %q", got)
	}
	if got := screen(out.String()); strings.TrimSpace(got) != "" {
		t.Errorf("after Finish the line shows %q", got)
	}
	n := out.Len()
	l.Step()
	l.Finish()
	if out.Len() != n {
		t.Errorf("Step and Finish after Finish wrote %q", out.String()[n:])
	}
}

// Steps closer together than Interval are not drawn: 20 steps 30 ms apart
// draw every fourth one (120 ms, 240 ms, ...), besides the first line.
func TestLineThrottles(t *testing.T) {
	var out bytes.Buffer
	c := &clock{t: time.Unix(1, 0)}
	l := newLine(&out, "building", 100, c.now)
	for range 20 {
		c.t = c.t.Add(30 * time.Millisecond)
		l.Step()
	}
	draws := strings.Split(out.String(), "\r")[1:]
	want := []string{"building 0/100", "building 4/100", "building 8/100", "building 12/100", "building 16/100", "building 20/100"}
	if strings.Join(draws, "|") != strings.Join(want, "|") {
		t.Errorf("draws %q, want %q", draws, want)
	}
	l.Finish()
	if got := screen(out.String()); strings.TrimSpace(got) != "" {
		t.Errorf("after Finish the line shows %q", got)
	}
}

// Steps from many goroutines at once are all counted (go test -race).
func TestLineConcurrentSteps(t *testing.T) {
	var out bytes.Buffer
	l := New(&out, "building", 800)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				l.Step()
			}
		}()
	}
	wg.Wait()
	if got := screen(out.String()); got != "building 800/800" {
		t.Errorf("after 800 steps the line shows %q", got)
	}
	l.Finish()
	if got := screen(out.String()); strings.TrimSpace(got) != "" {
		t.Errorf("after Finish the line shows %q", got)
	}
}
