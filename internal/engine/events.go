package engine

import "time"

// EventKind says what an Event reports.
type EventKind int

const (
	// NodeDone reports a graph node resolved: built, or found in the
	// cache (Cached).
	NodeDone EventKind = iota
	// StageDone reports one stage of a node run, or taken from the cache
	// (Cached).
	StageDone
	// Phase reports a step of a command around its build, named by Stage
	// (the command's own: opening the cache, loading, writing the
	// output); Node is empty.
	Phase
)

// Event is one span of a build, given to Options.Events as it ends: a
// node resolved or a stage done, when it started, how long it took and
// whether the cache answered it. Profilers (kpipe's --trace) consume them.
type Event struct {
	Kind EventKind
	// Node is the node's directory (Node.Dir); empty for a stage run
	// outside any node.
	Node string
	// Stage is the stage's kind (StageDone only).
	Stage  string
	Start  time.Time
	Dur    time.Duration
	Cached bool
}

// emit gives ev to the Events hook, if any.
func (b *Builder) emit(ev Event) {
	if b.opts.Events != nil {
		b.opts.Events(ev)
	}
}
