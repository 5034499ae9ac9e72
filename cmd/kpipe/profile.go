package main

import (
	"context"
	"errors"

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

// profileEvents returns the engine event hook of the run's profile in ctx,
// or nil.
func profileEvents(ctx context.Context) func(engine.Event) {
	s, _ := ctx.Value(profileKey{}).(*profile.Session)
	return s.Events()
}
