// Package progress draws a count of finished work on one terminal line,
// "building 12/340", redrawn in place (a carriage return) at most every
// Interval, and cleared when the work is done: the progress of
// `kpipe build-all --progress` on a terminal.
//
// It replaces github.com/schollz/progressbar, which imports net/http: that
// links package net, and with it the C library through cgo's DNS
// resolver, into every kpipe process, for a line that needs none of it.
// A count is all build-all shows.
//
// It imports nothing of kpipe.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Interval is the least time between two redraws of a Line (but the last
// count, which is always drawn).
const Interval = 100 * time.Millisecond

// A Line is the progress of total steps, drawn on w. Its methods may be
// called from many goroutines at once.
type Line struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	total int
	done  int
	drawn int       // width of what is on the line now
	last  time.Time // of the last draw
	ended bool
	now   func() time.Time // the clock
}

// New draws "label 0/total" on w and returns the Line.
func New(w io.Writer, label string, total int) *Line {
	return newLine(w, label, total, time.Now)
}

// newLine is New with the clock now.
func newLine(w io.Writer, label string, total int, now func() time.Time) *Line {
	l := &Line{w: w, label: label, total: total, now: now}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.draw()
	return l
}

// Step counts one step done, and redraws the line when Interval has passed
// since the last draw or the count reached the total.
func (l *Line) Step() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	l.done++
	if l.done >= l.total || l.now().Sub(l.last) >= Interval {
		l.draw()
	}
}

// Finish clears the line (spaces over what was drawn, the cursor back at
// its start), so that what is printed next starts on a clean line. Later
// calls of Step and Finish do nothing.
func (l *Line) Finish() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	l.ended = true
	if l.drawn > 0 {
		_, _ = io.WriteString(l.w, "\r"+strings.Repeat(" ", l.drawn)+"\r")
		l.drawn = 0
	}
}

// draw writes the count over the line (padding out a longer one drawn
// before). Its caller holds l.mu.
func (l *Line) draw() {
	s := fmt.Sprintf("%s %d/%d", l.label, l.done, l.total)
	pad := ""
	if n := l.drawn - len(s); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	_, _ = io.WriteString(l.w, "\r"+s+pad)
	l.drawn = max(l.drawn, len(s))
	l.last = l.now()
}
