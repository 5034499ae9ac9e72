// Package cli is kpipe's command line (urfave/cli v2): flags, terminal
// output, exit codes. Two binaries run it: cmd/kpipe, the one users type,
// which leaves out what costs every process its start (the network, Go
// plugins, Flux's flag parser and HelmReleases, Argo CD's ApplicationSets)
// and hands its command line over to cmd/kpipe-full when a run needs one of
// them; and cmd/kpipe-full, which links them all (Extensions).
//
//	kpipe build DIR [-o FILE|DIR] [--load-restrictor ...] [--reorder legacy|none]
//	kpipe fn run DIR [--enable-exec] [--dry-run]
//	kpipe fn wrap -- CMD [ARGS...]
//	kpipe diff [--base REV] [--head REV] [PATH...] | --no-index DIR_A DIR_B
//	kpipe affected --since REV [PATH...]
//	kpipe edit set|add|remove ...|fix
//	kpipe version [--short] [-o json|yaml]
//
// It may import kpipe's packages but never a command (cmd/...).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/cli/ext"
	"github.com/kpipe/kpipe/loaders"
)

// Version is kpipe's version; release builds set it with -ldflags.
var Version = "v0.1.0-dev"

// Main runs kpipe with os.Args, writing to os.Stdout and os.Stderr, and
// returns the status to exit with. e says what this binary links (see
// ext.Set): a run that needs what it lacks hands the command line over
// to kpipe-full.
func Main(e ext.Set) int {
	ctx, stopped := stopOnSignal(os.Args)
	// KPIPE_CPUPROFILE=FILE writes a CPU profile of the run, for performance
	// work (see benchmarks/).
	if p := os.Getenv("KPIPE_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			_ = pprof.StartCPUProfile(f)
			code := run(ctx, &e, os.Args, os.Stdout, os.Stderr)
			pprof.StopCPUProfile()
			f.Close()
			return stopped(code)
		}
	}
	return stopped(run(ctx, &e, os.Args, os.Stdout, os.Stderr))
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
// from armStop on, and `kpipe version`, which never does: a warm build
// that prints its stored output to stdout, and a version, write nothing a
// signal could leave half done, and listening costs a process two more
// threads (os/signal's receiver, and the runtime's template thread for
// it): about 1 ms of a 20 ms warm build on a slower VM, 0.3 ms of a 3.5 ms
// `kpipe version` here.
func stopOnSignal(args []string) (context.Context, func(code int) int) {
	s := &stopper{sigs: make(chan os.Signal, 2)}
	var ctx context.Context
	ctx, s.cancel = context.WithCancelCause(context.Background())
	ctx = context.WithValue(ctx, stopperKey{}, s)
	// `kpipe cache serve` takes the stop signals itself: they end it
	// cleanly, with status 0, once the requests in flight are answered.
	serve := len(args) > 2 && args[1] == "cache" && args[2] == "serve"
	if (len(args) < 2 || args[1] != "build" && args[1] != "version") && !serve {
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
func run(ctx context.Context, e *ext.Set, args []string, stdout, stderr io.Writer) int {
	e, ctx, h := forRun(ctx, e)
	app := newRoot(h.quiet(stdout, true, args), h.quiet(stderr, false, args), args)
	app.Metadata = map[string]any{extensionsKey: e}
	err := app.RunContext(ctx, intersperse(app, args))
	if h.needed() != "" {
		return h.handOver(ctx, args, stdout, stderr)
	}
	if err != nil {
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
			fmt.Fprintf(stderr, "Error: %s\n", relHint(h.Hint))
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

// relHint shows the paths under the current directory in a plain line for
// a person relative to it (overlays/prod/kustomization.yaml:3: ...), as
// diff and affected print paths; kustomize's own line keeps its absolute
// paths, which scripts grep for.
func relHint(hint string) string {
	cwd, err := filepath.EvalSymlinks(".")
	if err == nil {
		cwd, err = filepath.Abs(cwd)
	}
	if err != nil || cwd == string(filepath.Separator) {
		return hint
	}
	return strings.ReplaceAll(hint, cwd+string(filepath.Separator), "")
}

// newRoot is kpipe's command-line application, writing to stdout and
// stderr, for a run with the given arguments.
//
// When args name one of kpipe's commands, the application holds that
// command only; anything else (help, no command, a misspelt one) gets
// every command. urfave/cli v2 sets up only the command that runs, but
// making all some sixty commands with their flags still costs: in-process
// on a 2-core VM, `kpipe version` took 130-170 us with every command
// against 31-37 us with its own, and `kpipe build DIR --mount x` (parsing
// and notSupported) 450-630 us against 365-395 us.
func newRoot(stdout, stderr io.Writer, args []string) *cli.App {
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
		{"flux", fluxCommand},
		{"version", versionCommand},
		{"argocd", argocdCommand},
		{"net", netCommand},
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
	for _, c := range commands {
		prepare(c)
	}
	return &cli.App{
		Name:           "kpipe",
		Usage:          "render Kubernetes configuration exactly as kustomize build does, fast",
		Writer:         stdout,
		ErrWriter:      stderr,
		HideVersion:    true,
		ExitErrHandler: func(*cli.Context, error) {}, // run prints errors once; cli.Exit does not exit
		OnUsageError:   usageError,
		Commands:       commands,
		Flags:          []cli.Flag{stackTraceFlag()},
	}
}

// prepare gives c and every command below it usageError, a help
// subcommand of its own (see helpCommand), kustomize's global --stack-trace
// flag, and flags that work out their names once (see namedFlag).
func prepare(c *cli.Command) {
	c.OnUsageError = usageError
	if !c.SkipFlagParsing {
		c.Flags = append(c.Flags, stackTraceFlag())
	}
	for i, f := range c.Flags {
		c.Flags[i] = nameOnce(f)
	}
	if c.SkipFlagParsing {
		return // every argument is passed on (kpipe cache serve help too)
	}
	for _, s := range c.Subcommands {
		prepare(s)
	}
	c.Subcommands = append(c.Subcommands, helpCommand())
}

// stackTraceFlag is kustomize's global --stack-trace ("print a stack-trace
// on error"), accepted wherever kustomize takes it, so that a script that
// passes it works with kpipe: kpipe's errors say where they come from (the
// file and line) instead of Go's stack, so it changes nothing.
func stackTraceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "stack-trace", Hidden: true, Usage: "accepted for kustomize's scripts; kpipe's errors name the file instead"}
}

// namedFlag is a flag whose names were worked out once.
//
// urfave/cli v2 works out a flag's names (Names) by matching each against
// a regular expression, every time it asks; and after parsing, it asks
// for every flag whether it was set, each time looking through every
// flag's names: for `kpipe build`'s some 45 flags, about 2,000 regular
// expression replacements a run, 0.3 ms of a warm build's 4 (10% of its
// samples in perf). A namedFlag answers Names from what the flag's own
// Names said when it was made.
//
// Only the flag types whose every method urfave/cli looks for is in
// namedFlag's interface are wrapped (nameOnce): not the slice flags,
// whose help and separator settings come through interfaces of their own.
// urfave/cli's checks of the concrete *cli.BoolFlag (the help's
// DisableDefaultText, and hidden flags in shell completion) concern
// settings kpipe does not use.
type namedFlag struct {
	plainFlag
	names []string
}

// plainFlag is the methods urfave/cli v2 asks a plain flag for.
type plainFlag interface {
	cli.DocGenerationFlag
	cli.CategorizableFlag
	cli.RequiredFlag
	cli.ActionableFlag
}

func (f *namedFlag) Names() []string { return f.names }

// nameOnce returns f as a namedFlag where f is a bool, string, int or
// duration flag, else f. The names are the flag's name and aliases, as
// urfave/cli's Names gives them for names without a comma or a space
// (which it cuts at), without its regular expression.
func nameOnce(f cli.Flag) cli.Flag {
	var name string
	var aliases []string
	switch f := f.(type) {
	case *cli.BoolFlag:
		name, aliases = f.Name, f.Aliases
	case *cli.StringFlag:
		name, aliases = f.Name, f.Aliases
	case *cli.IntFlag:
		name, aliases = f.Name, f.Aliases
	case *cli.DurationFlag:
		name, aliases = f.Name, f.Aliases
	default:
		return f
	}
	names := append([]string{name}, aliases...)
	for _, n := range names {
		if strings.ContainsAny(n, ", \t\n\r\f\v") {
			return &namedFlag{f.(plainFlag), f.Names()}
		}
	}
	return &namedFlag{f.(plainFlag), names}
}

// usageError answers a command's usage error (a flag it does not have or
// cannot parse, a flag with no value): exit status 2 and two lines on
// stderr, the error and where the help is, as a shell tool answers; the
// whole help buried the error. (urfave/cli v2 by default prints
// "Incorrect Usage: ..." and the help.)
func usageError(c *cli.Context, err error, _ bool) error {
	return usage(c, "%s", flagMessage(err.Error()))
}

// flagDash finds a flag's name in the messages of Go's flag package, which
// writes every flag with one dash. (Compiled on first use: only a run
// with a usage error needs it.)
var flagDash = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[ ])-([A-Za-z][A-Za-z0-9-]+)`) })

// flagMessage words a flag parsing error of Go's flag package as a user
// typed the flag: a long flag with two dashes (--output, not -output),
// and kustomize's "unknown flag" for one kpipe does not have.
func flagMessage(msg string) string {
	msg = strings.Replace(msg, "flag provided but not defined: ", "unknown flag: ", 1)
	return flagDash().ReplaceAllString(msg, "$1--$2")
}

// usage is a usage error of c's command: exit status 2, the message, and
// a line naming the command's help.
func usage(c *cli.Context, format string, args ...any) error {
	name := "kpipe"
	if c.Command != nil && c.Command.HelpName != "" {
		name = c.Command.HelpName
	}
	return &exitError{code: 2, err: fmt.Errorf(format+"\n(see '%s --help')", append(args, name)...)}
}

// required is the usage error of a required flag that is missing (a flag
// marked Required would make urfave/cli print the whole help instead).
func required(c *cli.Context, names ...string) error {
	for _, n := range names {
		if !c.IsSet(n) {
			return usage(c, "--%s is required", n)
		}
	}
	return nil
}

// intersperse moves the flags of the command args run that follow its
// arguments in front of them, so that `kpipe build DIR -o out.yaml` works
// as with kustomize: urfave/cli v2 stops reading flags at a command's
// first argument. It reads the arguments as urfave/cli v3 did:
//
//   - `--` ends the flags: what follows it is arguments;
//   - a flag that takes a value takes the next argument, whatever it is;
//   - a single dash followed by something other than a letter (-1) is an
//     argument, and so is everything after it; "-" alone is an argument;
//   - a flag given under two of its names (--jobs 3 -j 4) is given under
//     its first name each time, so the last value counts (urfave/cli v2
//     refuses two forms of one flag);
//   - a flag that takes a value and is last with none fails to parse
//     ("flag needs an argument"): the arguments are left out, so that it
//     does not take `--` for its value.
//
// The command's flags come first, then `--` and its arguments.
func intersperse(app *cli.App, args []string) []string {
	if len(args) < 3 {
		return args
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.HasName(args[1]) {
			cmd = c
		}
	}
	if cmd == nil {
		return args
	}
	// Descend into subcommands (kpipe fn run ...).
	n := 2
	for n < len(args) {
		sub := cmd.Command(args[n])
		if sub == nil {
			break
		}
		cmd, n = sub, n+1
	}
	if cmd.SkipFlagParsing {
		return args // its arguments are another program's (kpipe cache serve)
	}
	byName := map[string]cli.Flag{}
	for _, f := range cmd.Flags {
		for _, name := range f.Names() {
			byName[name] = f
		}
	}
	type given struct {
		at int // index in flags
		f  cli.Flag
	}
	var (
		flags, positional []string
		seen              []given
		forms             = map[cli.Flag]string{} // the first name each flag was given under
		mixed             = map[cli.Flag]bool{}
	)
	rest := args[n:]
scan:
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			positional = append(positional, rest[i+1:]...)
			break scan
		case len(a) < 2 || a[0] != '-':
			positional = append(positional, a)
			continue
		case a[1] != '-':
			if r, _ := utf8.DecodeRuneInString(a[1:]); !unicode.IsLetter(r) {
				positional = append(positional, rest[i:]...)
				break scan
			}
		}
		name := strings.TrimPrefix(a[1:], "-")
		name, _, hasValue := strings.Cut(name, "=")
		f := byName[name]
		if f != nil {
			seen = append(seen, given{len(flags), f})
			if first, ok := forms[f]; !ok {
				forms[f] = name
			} else if first != name {
				mixed[f] = true
			}
		}
		flags = append(flags, a)
		if df, ok := f.(cli.DocGenerationFlag); ok && df.TakesValue() && !hasValue {
			if i+1 == len(rest) {
				positional = nil
				break
			}
			i++
			flags = append(flags, rest[i])
		}
	}
	for _, g := range seen {
		if mixed[g.f] {
			canonical := g.f.Names()[0]
			dashes := "--"
			if len(canonical) == 1 {
				dashes = "-"
			}
			_, value, hasValue := strings.Cut(flags[g.at], "=")
			flags[g.at] = dashes + canonical
			if hasValue {
				flags[g.at] += "=" + value
			}
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
