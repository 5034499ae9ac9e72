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
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/loaders"
)

// Version is kpipe's version; release builds set it with -ldflags.
var Version = "v0.1.0-dev"

func main() {
	ctx, stopped := stopOnSignal()
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
func stopOnSignal() (context.Context, func(code int) int) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals()...)
	var got atomic.Value
	go func() {
		s := <-sigs
		got.Store(s)
		cancel(fmt.Errorf("stopped by signal %s", signalName(s)))
		s = <-sigs
		os.Exit(signalExitCode(s))
	}()
	return ctx, func(code int) int {
		signal.Stop(sigs)
		if s, ok := got.Load().(os.Signal); ok {
			return signalExitCode(s)
		}
		return code
	}
}

// run executes kpipe with the given arguments and returns the exit code.
// An error that comes of ctx's cancellation is reported by its cause (the
// signal that stopped kpipe).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	if err := app.RunContext(ctx, intersperse(app, args)); err != nil {
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

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:           "kpipe",
		Usage:          "render Kubernetes configuration exactly as kustomize build does, fast",
		Writer:         stdout,
		ErrWriter:      stderr,
		HideVersion:    true,
		ExitErrHandler: func(*cli.Context, error) {}, // run prints errors once
		Commands: []*cli.Command{
			buildCommand(),
			buildAllCommand(),
			diffCommand(),
			affectedCommand(),
			cacheCommand(),
			reportCommand(),
			fnCommand(),
			editCommand(),
			versionCommand(),
		},
	}
}

// intersperse moves the flags of a command that follow its arguments in
// front of them, so that `kpipe build DIR -o out.yaml` works as it does with
// kustomize (urfave/cli stops reading flags at the first argument).
func intersperse(app *cli.App, args []string) []string {
	if len(args) < 3 {
		return args
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		return args
	}
	// Descend into subcommands (kpipe fn run ...).
	n := 2
	for n < len(args) {
		var sub *cli.Command
		for _, s := range cmd.Subcommands {
			if s.HasName(args[n]) {
				sub = s
			}
		}
		if sub == nil {
			break
		}
		cmd, n = sub, n+1
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, positional []string
	rest := args[n:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			positional = append(positional, rest[i+1:]...)
			i = len(rest)
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
				i++
				flags = append(flags, rest[i])
			}
		default:
			positional = append(positional, a)
		}
	}
	out := append(append([]string(nil), args[:n]...), flags...)
	if len(positional) > 0 {
		out = append(append(out, "--"), positional...)
	}
	return out
}

// notSupported fails when a flag whose feature kpipe lacks was given.
func notSupported(c *cli.Context, names ...string) error {
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
