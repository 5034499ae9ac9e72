// A kpipe process lives seconds at most: the runtime need not start a
// goroutine that follows a container's CPU limit as it changes (Go 1.25's
// updatemaxprocs). GOMAXPROCS still starts at the container's limit.

//go:debug updatemaxprocs=0

// Command kpipe renders Kubernetes configuration the way `kustomize build`
// does, as a pipeline of cached stages over a graph of kustomizations.
//
//	kpipe build DIR [-o FILE|DIR] [--load-restrictor ...] [--reorder legacy|none]
//	kpipe fn run DIR [--enable-exec] [--dry-run]
//	kpipe fn wrap -- CMD [ARGS...]
//	kpipe diff [--base REV] [--head REV] [PATH...] | --no-index DIR_A DIR_B
//	kpipe affected --since REV [PATH...]
//	kpipe edit set|add|remove ...|fix
//	kpipe version [--short] [-o json|yaml]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/urfave/cli/v3"

	"github.com/kpipe/kpipe/loaders"
)

// Version is kpipe's version; release builds set it with -ldflags.
var Version = "v0.1.0-dev"

func main() {
	ctx, stopped := stopOnSignal(os.Args)
	// KPIPE_CPUPROFILE=FILE writes a CPU profile of the run, for performance
	// work (see benchmarks/).
	if p := os.Getenv("KPIPE_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			_ = pprof.StartCPUProfile(f)
			code := run(ctx, os.Args, os.Stdout, os.Stderr)
			pprof.StopCPUProfile()
			f.Close()
			os.Exit(stopped(code))
		}
	}
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	os.Exit(stopped(code))
}

// stopOnSignal returns a context cancelled by the first of stopSignals
// (SIGINT, SIGTERM, SIGHUP on unix), whose cause names the signal, and a
// function that turns run's exit code into the one to exit with: 128 plus
// the signal's number when one came (130, 143, 129), as a shell reports a
// process a signal ended. Cancellation kills the plugins' and helm's
// process groups, and run returns only once their temporary files are
// removed; so kpipe exits after cleaning up, having written no partial
// output. A second signal ends kpipe at once.
//
// Every command listens from the start but `kpipe build`, which listens
// from armStop on: a warm build that prints its stored output to stdout
// writes nothing a signal could leave half done, and listening costs it
// about 1 ms of its 20 (two more threads: os/signal's receiver, and the
// runtime's template thread for it).
func stopOnSignal(args []string) (context.Context, func(code int) int) {
	s := &stopper{sigs: make(chan os.Signal, 2)}
	var ctx context.Context
	ctx, s.cancel = context.WithCancelCause(context.Background())
	ctx = context.WithValue(ctx, stopperKey{}, s)
	if len(args) < 2 || args[1] != "build" {
		s.arm()
	}
	return ctx, s.exitCode
}

// stopper is stopOnSignal's listener.
type stopper struct {
	once   sync.Once
	sigs   chan os.Signal
	cancel context.CancelCauseFunc
	got    atomic.Value // the os.Signal that came
}

// stopperKey is the context key under which stopOnSignal's context holds
// its stopper, for armStop.
type stopperKey struct{}

// arm starts listening for the stop signals; later calls do nothing.
func (s *stopper) arm() {
	s.once.Do(func() {
		signal.Notify(s.sigs, stopSignals()...)
		go func() {
			sig := <-s.sigs
			s.got.Store(sig)
			s.cancel(fmt.Errorf("stopped by signal %s", signalName(sig)))
			sig = <-s.sigs
			os.Exit(signalExitCode(sig))
		}()
	})
}

// exitCode is the exit status for run's code: the signal's when one came.
func (s *stopper) exitCode(code int) int {
	if sig, ok := s.got.Load().(os.Signal); ok {
		return signalExitCode(sig)
	}
	return code
}

// armStop makes the stop signals cancel ctx from now on, when ctx comes
// from stopOnSignal (see there); with any other context it does nothing.
// A command that did not listen from the start calls it before it starts
// a process or writes a file.
func armStop(ctx context.Context) {
	if s, ok := ctx.Value(stopperKey{}).(*stopper); ok {
		s.arm()
	}
}

// run executes kpipe with the given arguments and returns the exit code.
// An error that comes of ctx's cancellation is reported by its cause (the
// signal that stopped kpipe).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if err := newRoot(stdout, stderr, args).Run(ctx, args); err != nil {
		if ctx.Err() != nil {
			if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
				err = cause
			}
		}
		// A plain line for a person first (file:line, what is wrong, a
		// hint), where kpipe has one; then kustomize's wording, which
		// scripts grep for.
		var h *loaders.Hinted
		if errors.As(err, &h) {
			fmt.Fprintf(stderr, "Error: %s\n", h.Hint)
		}
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
			if ee.err == nil {
				return code
			}
		}
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return code
	}
	return 0
}

// newRoot is the root command, kpipe, writing to stdout and stderr, for
// a run with the given arguments. Flags may follow a command's arguments
// (`kpipe build DIR -o out.yaml`, as with kustomize): urfave/cli v3 reads
// them wherever they are, up to `--`.
//
// When args name one of kpipe's commands, the root holds that command
// only: urfave/cli v3 sets up every command it is given (some sixty, with
// their flags and help), about 0.5 ms of a warm `kpipe build`'s 25 ms on
// a 2-core VM. Anything else (help, no command, a misspelt one) gets
// every command.
func newRoot(stdout, stderr io.Writer, args []string) *cli.Command {
	all := []struct {
		name string
		make func() *cli.Command
	}{
		{"build", buildCommand},
		{"build-all", buildAllCommand},
		{"diff", diffCommand},
		{"affected", affectedCommand},
		{"cache", cacheCommand},
		{"report", reportCommand},
		{"fn", fnCommand},
		{"edit", editCommand},
		{"version", versionCommand},
	}
	var commands []*cli.Command
	for _, c := range all {
		if len(args) > 1 && args[1] == c.name {
			commands = []*cli.Command{c.make()}
			break
		}
	}
	if commands == nil {
		for _, c := range all {
			commands = append(commands, c.make())
		}
	}
	root := &cli.Command{
		Name:           "kpipe",
		Usage:          "render Kubernetes configuration exactly as kustomize build does, fast",
		Writer:         stdout,
		ErrWriter:      stderr,
		HideVersion:    true,
		ExitErrHandler: func(context.Context, *cli.Command, error) {}, // run prints errors once
		Commands:       commands,
	}
	_ = root.Walk(func(c *cli.Command) error {
		c.OnUsageError = usageError // each command answers for its own flags
		return nil
	})
	return root
}

// usageError answers a command's usage error (a flag it does not have or
// cannot parse, a required flag missing) as urfave/cli v2 did: the
// command's help on stdout, and the error, which run prints once, on
// stderr. (v3 by default also prints the error, on stderr, before run
// does.)
func usageError(ctx context.Context, c *cli.Command, err error, _ bool) error {
	if l := c.Lineage(); len(l) > 1 {
		_ = cli.ShowCommandHelp(ctx, l[1], c.Name)
	} else {
		_ = cli.ShowRootCommandHelp(c)
	}
	return err
}

// notSupported fails when a flag whose feature kpipe lacks was given.
func notSupported(c *cli.Command, names ...string) error {
	var set []string
	for _, n := range names {
		if c.IsSet(n) {
			set = append(set, "--"+n)
		}
	}
	if len(set) > 0 {
		return fmt.Errorf("%s: not supported yet by kpipe", strings.Join(set, ", "))
	}
	return nil
}
