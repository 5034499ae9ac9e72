package cli

import (
	"context"
	"errors"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/profile"
)

// profileFlags are --cpuprofile, --memprofile and --trace, on build and
// build-all.
func profileFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cpuprofile", Usage: "write a Go CPU profile of the run to this file (go tool pprof)"},
		&cli.StringFlag{Name: "memprofile", Usage: "write a Go heap profile at the end of the run to this file (go tool pprof)"},
		&cli.StringFlag{Name: "trace", Usage: "write a trace of the build (one span per node and stage, with cache hit or miss) to this file, in the Chrome trace event format (open it in ui.perfetto.dev)"},
	}
}

type profileKey struct{}

// withProfile runs action under the profiles its flags ask for: the
// session rides in the command's context (c.Context), where buildOptions
// finds the trace's event hook, and its files are written when action
// returns.
func withProfile(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) (err error) {
		s, err := profile.Start(profile.Options{CPUProfile: c.String("cpuprofile"), MemProfile: c.String("memprofile"), Trace: c.String("trace")})
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, s.Stop()) }()
		c.Context = context.WithValue(c.Context, profileKey{}, s)
		return action(c)
	}
}

// phases times the steps of a command around its build (opening the
// cache, the lookup of a root's record, the load, the build, the output,
// closing the cache) as engine.Phase events for --trace, each from the
// end of the one before; without --trace it does nothing, not even read
// the clock.
type phases struct {
	emit func(engine.Event)
	at   time.Time
}

// startPhases starts timing the first phase, when ctx's profile traces.
func startPhases(ctx context.Context) *phases {
	p := &phases{emit: profileEvents(ctx)}
	if p.emit != nil {
		p.at = time.Now()
	}
	return p
}

// done ends the phase under way, naming it, and starts the next.
func (p *phases) done(name string) {
	if p.emit == nil {
		return
	}
	now := time.Now()
	p.emit(engine.Event{Kind: engine.Phase, Stage: name, Start: p.at, Dur: now.Sub(p.at)})
	p.at = now
}

// profileEvents returns the engine event hook of the run's profile in ctx,
// or nil.
func profileEvents(ctx context.Context) func(engine.Event) {
	s, _ := ctx.Value(profileKey{}).(*profile.Session)
	return s.Events()
}
