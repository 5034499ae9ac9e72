package profile

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/kpipe/kpipe/internal/engine"
)

// TestWriteTraceLanes checks the trace's layout: overlapping nodes go on
// different lanes, a node's stages on its lane, and times are
// microseconds from the start.
func TestWriteTraceLanes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	evs := []engine.Event{
		{Kind: engine.StageDone, Node: "/a", Stage: "load", Start: t0.Add(1 * ms), Dur: 2 * ms},
		{Kind: engine.NodeDone, Node: "/a", Start: t0, Dur: 10 * ms},
		{Kind: engine.NodeDone, Node: "/b", Start: t0.Add(5 * ms), Dur: 10 * ms, Cached: true},
		{Kind: engine.NodeDone, Node: "/c", Start: t0.Add(10 * ms), Dur: 1 * ms},
	}
	var buf bytes.Buffer
	if err := WriteTrace(&buf, t0, evs); err != nil {
		t.Fatal(err)
	}
	var tf struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &tf); err != nil {
		t.Fatal(err)
	}
	tid := map[string]traceEvent{}
	for _, e := range tf.TraceEvents {
		tid[e.Name] = e
	}
	if tid["/a"].TID == tid["/b"].TID {
		t.Errorf("overlapping nodes /a and /b share lane %d", tid["/a"].TID)
	}
	if tid["/c"].TID != tid["/a"].TID {
		t.Errorf("/c starts when /a ends: want it on /a's lane %d, got %d", tid["/a"].TID, tid["/c"].TID)
	}
	if tid["load"].TID != tid["/a"].TID || tid["load"].TS != 1000 || tid["load"].Dur != 2000 {
		t.Errorf("stage: %+v, want on lane %d at 1000us for 2000us", tid["load"], tid["/a"].TID)
	}
	if tid["/b"].Cat != "node,cached" || tid["/b"].Args["cached"] != true {
		t.Errorf("cached node: %+v", tid["/b"])
	}
}

// A command's phases go on lane 0 as "phase" spans, and the trace says
// when its time 0 was.
func TestWriteTracePhases(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	evs := []engine.Event{
		{Kind: engine.Phase, Stage: "load", Start: t0.Add(time.Millisecond), Dur: time.Millisecond},
		{Kind: engine.NodeDone, Node: "/a", Start: t0.Add(2 * time.Millisecond), Dur: time.Millisecond},
	}
	var buf bytes.Buffer
	if err := WriteTrace(&buf, t0, evs); err != nil {
		t.Fatal(err)
	}
	var tf struct {
		TraceEvents []traceEvent      `json:"traceEvents"`
		OtherData   map[string]string `json:"otherData"`
	}
	if err := json.Unmarshal(buf.Bytes(), &tf); err != nil {
		t.Fatal(err)
	}
	var phase, node traceEvent
	for _, e := range tf.TraceEvents {
		switch e.Name {
		case "load":
			phase = e
		case "/a":
			node = e
		}
	}
	if phase.Cat != "phase" || phase.TID != 0 || phase.TS != 1000 || phase.Dur != 1000 || node.TID == 0 {
		t.Errorf("phase %+v, node %+v: want the phase on lane 0 at 1000us for 1000us, the node elsewhere", phase, node)
	}
	if got, err := time.Parse(time.RFC3339Nano, tf.OtherData["start"]); err != nil || !got.Equal(t0) {
		t.Errorf("otherData.start = %q, want %s", tf.OtherData["start"], t0.Format(time.RFC3339Nano))
	}
}
