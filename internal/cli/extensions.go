package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/cache/remote"
	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/fleet"
	"github.com/kpipe/kpipe/internal/cli/ext"
	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/internal/flux/fluxcmd"
)

// extensionsKey is where run keeps the run's Extensions in the
// application's Metadata (see extensions).
const extensionsKey = "kpipe.extensions"

// extensions is the running command's extensions: the binary's, with
// stand-ins where it has none, each of which hands the run over.
func extensions(c *cli.Context) *ext.Set {
	if e, ok := c.App.Metadata[extensionsKey].(*ext.Set); ok {
		return e
	}
	return &ext.Set{}
}

// fullName is the binary with every extension (cmd/kpipe-full).
const fullName = "kpipe-full"

// errHandedOver is the cause of a run's cancellation when it needs what
// its binary lacks.
var errHandedOver = errors.New("handed over to " + fullName)

// handover records what a run needed that its binary lacks (the first
// thing), and stops the run.
type handover struct {
	full   bool // the binary has every extension
	what   atomic.Pointer[string]
	cancel context.CancelCauseFunc
}

// need records what, stops the run, and returns the error the caller
// fails with (nothing prints it: run hands over instead).
func (h *handover) need(what string) error {
	h.what.CompareAndSwap(nil, &what)
	h.cancel(errHandedOver)
	return fmt.Errorf("%s needs %s", what, fullName)
}

// needed is what the run needed, or "".
func (h *handover) needed() string {
	if p := h.what.Load(); p != nil {
		return *p
	}
	return ""
}

// forRun returns the extensions a run uses (e's, and stand-ins that call
// h.need where e has none), the run's context (cancelled by h.need) and
// h.
func forRun(ctx context.Context, e *ext.Set) (*ext.Set, context.Context, *handover) {
	h := &handover{full: e.Complete()}
	ctx, h.cancel = context.WithCancelCause(ctx)
	r := *e
	if r.Net == nil {
		r.Net = newProcNet() // downloads in a kpipe-full process; the run stays
	}
	if r.RemoteCache == nil {
		r.RemoteCache = func(string, remote.Options) (remote.Backend, error) {
			return nil, h.need("the remote cache")
		}
	}
	if r.GoPlugins == nil {
		r.GoPlugins = func(path string) (func(string) (any, error), error) {
			return nil, h.need("loading the Go plugin " + path)
		}
	}
	if r.FluxFlags == nil {
		r.FluxFlags = func([]string, *fluxcmd.Flags) ([]string, error) {
			return nil, h.need("this flux build command line (flux's flag parser, pflag)")
		}
	}
	if r.HelmReleases == nil {
		r.HelmReleases = func(ext.HelmReleaseOptions) func(context.Context, cluster.HelmRelease) *cluster.Result {
			err := h.need("rendering Flux HelmReleases (--enable-helm)")
			return func(context.Context, cluster.HelmRelease) *cluster.Result {
				return &cluster.Result{Err: err.Error()}
			}
		}
	}
	if r.ApplicationSets == nil {
		r.ApplicationSets = func(o fleet.DiscoverOptions, f app.Found, ns string, tracked func() ([]string, error)) []fleet.Unit {
			err := h.need("generating Argo CD ApplicationSets")
			return []fleet.Unit{{Name: "applicationset/" + f.Name, File: f.Path, Set: f.Name, Err: err.Error()}}
		}
	}
	return &r, ctx, h
}

// quiet returns w, or a writer to w that drops what comes once the run
// has needed what its binary lacks: kpipe-full prints the run's results
// and warnings. build and version keep their stdout as it is (they write
// it only once they have succeeded, build from the cache's file).
func (h *handover) quiet(w io.Writer, stdout bool, args []string) io.Writer {
	if h.full || stdout && len(args) > 1 && (args[1] == "build" || args[1] == "version") {
		return w
	}
	return &quietWriter{w: w, h: h}
}

// quietWriter is handover.quiet's writer.
type quietWriter struct {
	w io.Writer
	h *handover
}

func (q *quietWriter) Write(p []byte) (int, error) {
	if q.h.needed() != "" {
		return len(p), nil
	}
	return q.w.Write(p)
}

// unquiet returns the writer w writes to: w, or a quietWriter's.
func unquiet(w io.Writer) io.Writer {
	if q, ok := w.(*quietWriter); ok {
		return q.w
	}
	return w
}

// terminal returns the file w writes to, through a quietWriter too.
func terminal(w io.Writer) (*os.File, bool) {
	f, ok := unquiet(w).(*os.File)
	return f, ok
}

// handOver runs the command line args in kpipe-full, writing to stdout
// and stderr, and returns its exit status; without kpipe-full, it says
// what the run needed and how to install it (status 1).
func (h *handover) handOver(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	path, err := findBeside(fullName)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %s needs %s, the kpipe with the network, Go plugins, Flux's flags and HelmReleases and Argo CD's ApplicationSets; %v: install it with `%s` (from a clone of kpipe: `%s`; the release archives and the container image carry it beside kpipe)\n", h.needed(), fullName, err, installLine, cloneInstall)
		return 1
	}
	// The run was cancelled (h.need): kpipe-full runs under the
	// context the run started with.
	if err := handOver(context.WithoutCancel(ctx), path, args[1:], stdout, stderr); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	return 0
}

// findBeside finds the executable name next to the running kpipe (as the
// release archives and the container image place it; next to the link's
// target too, when kpipe is a symbolic link), then on PATH.
func findBeside(name string) (string, error) {
	exe := name
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	var dirs []string
	if self, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(self))
		if real, err := filepath.EvalSymlinks(self); err == nil && filepath.Dir(real) != dirs[0] {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, exe)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if len(dirs) > 0 {
		return "", fmt.Errorf("there is none next to kpipe (in %s) or on PATH", dirs[0])
	}
	return "", errors.New("there is none on PATH")
}
