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
