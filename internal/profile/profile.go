// Package profile writes the profiles asked for by kpipe's --cpuprofile,
// --memprofile and --trace flags: Go's pprof CPU and heap profiles, and a
// trace of the build in the Chrome trace event format (one span per graph
// node and per stage, with cache hit or miss), which Perfetto
// (ui.perfetto.dev) and chrome://tracing open.
package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"sync"
	"time"

	"github.com/kpipe/kpipe/internal/engine"
)

// Options names the files to write; an empty name asks for nothing.
type Options struct {
	CPUProfile string
	MemProfile string
	Trace      string
}

// Session is a running profile: Start begins it, Stop writes the files.
type Session struct {
	opts  Options
	cpu   *os.File
	start time.Time

	mu     sync.Mutex
	events []engine.Event
}

// Start starts CPU profiling when asked and returns the session; it fails
// when a file cannot be created.
func Start(opts Options) (*Session, error) {
	s := &Session{opts: opts, start: time.Now()}
	if opts.CPUProfile != "" {
		f, err := os.Create(opts.CPUProfile)
		if err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("--cpuprofile %s: %w", opts.CPUProfile, err)
		}
		s.cpu = f
	}
	return s, nil
}

// Events returns the hook to set as engine.Options.Events: nil when no
// trace was asked for, so the engine does no work for it.
func (s *Session) Events() func(engine.Event) {
	if s == nil || s.opts.Trace == "" {
		return nil
	}
	return func(ev engine.Event) {
		s.mu.Lock()
		s.events = append(s.events, ev)
		s.mu.Unlock()
	}
}

// Stop stops CPU profiling and writes the heap profile and the trace.
func (s *Session) Stop() error {
	if s == nil {
		return nil
	}
	var errs []error
	if s.cpu != nil {
		pprof.StopCPUProfile()
		if err := s.cpu.Close(); err != nil {
			errs = append(errs, fmt.Errorf("--cpuprofile %s: %w", s.opts.CPUProfile, err))
		}
		s.cpu = nil
	}
	if p := s.opts.MemProfile; p != "" {
		if err := writeHeap(p); err != nil {
			errs = append(errs, fmt.Errorf("--memprofile %s: %w", p, err))
		}
	}
	if p := s.opts.Trace; p != "" {
		s.mu.Lock()
		evs := s.events
		s.mu.Unlock()
		if err := writeFile(p, func(f *os.File) error { return WriteTrace(f, s.start, evs) }); err != nil {
			errs = append(errs, fmt.Errorf("--trace %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func writeHeap(path string) error {
	runtime.GC() // up-to-date statistics of what is live
	return writeFile(path, func(f *os.File) error { return pprof.Lookup("heap").WriteTo(f, 0) })
}

// lanes hands out trace threads so that the spans put on one never
// overlap, given spans in order of start.
type lanes struct {
	base int
	end  []time.Time
}

func (l *lanes) take(ev engine.Event) int {
	for i, end := range l.end {
		if !end.After(ev.Start) {
			l.end[i] = ev.Start.Add(ev.Dur)
			return l.base + i
		}
	}
	l.end = append(l.end, ev.Start.Add(ev.Dur))
	return l.base + len(l.end) - 1
}

func writeFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// traceEvent is one entry of the Chrome trace event format's
// "traceEvents" array: a complete event ("ph": "X") or metadata ("M").
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	TS   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	PID  int            `json:"pid"`
	TID  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// WriteTrace writes evs as a Chrome trace event JSON object, times in
// microseconds since start. Nodes are laid out on lanes (threads) so that
// spans on one lane never overlap; a node's stages sit on its lane,
// nested in its span. Stages outside any node get lanes of their own; the
// command's phases (engine.Phase) lane 0.
func WriteTrace(w io.Writer, start time.Time, evs []engine.Event) error {
	evs = append([]engine.Event(nil), evs...)
	sort.SliceStable(evs, func(i, j int) bool {
		if !evs[i].Start.Equal(evs[j].Start) {
			return evs[i].Start.Before(evs[j].Start)
		}
		return evs[i].Kind < evs[j].Kind // a node before its first stage
	})
	us := func(t time.Time) float64 { return float64(t.Sub(start).Nanoseconds()) / 1e3 }
	nodeLanes, otherLanes := &lanes{base: 1}, &lanes{base: 10001}
	nodeLane := map[string]int{}
	for _, ev := range evs {
		if ev.Kind == engine.NodeDone {
			nodeLane[ev.Node] = nodeLanes.take(ev)
		}
	}
	out := []traceEvent{{Name: "process_name", Ph: "M", PID: 1, Args: map[string]any{"name": "kpipe build"}}}
	for _, ev := range evs {
		if ev.Kind == engine.Phase {
			// The command's own steps, on a lane of their own above the
			// nodes'.
			out = append(out, traceEvent{Name: ev.Stage, Cat: "phase", Ph: "X", PID: 1, TID: 0,
				TS: us(ev.Start), Dur: float64(ev.Dur.Nanoseconds()) / 1e3})
			continue
		}
		te := traceEvent{Ph: "X", PID: 1, TS: us(ev.Start), Dur: float64(ev.Dur.Nanoseconds()) / 1e3,
			Args: map[string]any{"cached": ev.Cached}}
		if ev.Node != "" {
			te.Args["node"] = ev.Node
		}
		switch ev.Kind {
		case engine.NodeDone:
			te.Name, te.Cat, te.TID = ev.Node, "node", nodeLane[ev.Node]
		default:
			te.Name, te.Cat = ev.Stage, "stage"
			if l, ok := nodeLane[ev.Node]; ok {
				te.TID = l
			} else {
				te.TID = otherLanes.take(ev)
			}
		}
		if ev.Cached {
			te.Cat += ",cached"
		}
		out = append(out, te)
	}
	enc := json.NewEncoder(w)
	return enc.Encode(struct {
		TraceEvents     []traceEvent `json:"traceEvents"`
		DisplayTimeUnit string       `json:"displayTimeUnit"`
		// OtherData holds the wall-clock time of ts 0 ("start", RFC
		// 3339 with nanoseconds), for a tool that started the process
		// and wants the time before it (benchmarks/startcost).
		OtherData map[string]string `json:"otherData"`
	}{out, "ms", map[string]string{"start": start.Format(time.RFC3339Nano)}})
}
