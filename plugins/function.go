package plugins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/procgroup"
)

// FunctionSpec is the spec of a KRM function run outside a build, by
// `kpipe fn run` (package fnrun): what kustomize's fn run reads from a
// function config (its runtimeutil.FunctionSpec).
type FunctionSpec struct {
	// DeferFailure lets the run go on past the function's failure; the
	// failure is reported at the end.
	DeferFailure bool
	Exec         struct {
		Path string
		Args []string
		Env  []string // KEY=VALUE
	}
	Container struct {
		Image   string
		Network bool
		Mounts  []Mount
		Env     []string // KEY=VALUE, or KEY to pass the variable on
	}
}

// Mount is a container function's storage mount (`docker run --mount`).
type Mount struct {
	Type, Src, Dst string
	RW             bool
}

// String is the mount as `docker run --mount` takes it.
func (m Mount) String() string {
	mode := ""
	if !m.RW {
		mode = ",readonly"
	}
	return fmt.Sprintf("type=%s,source=%s,target=%s%s", m.Type, m.Src, m.Dst, mode)
}

// FunctionCommand is one KRM function ready to run outside a build: an
// executable, or a container engine running an image.
type FunctionCommand struct {
	path    string
	args    []string
	env     []string
	dir     string
	timeout time.Duration
	// Image is the function's container image ("" for an exec function).
	Image string
	// Path is the exec function's path as its spec gives it.
	Path string
}

// NewFunctionCommand prepares the function spec describes, started in
// workDir as kustomize's fn run starts it: an exec function's path as
// given (a relative path with a slash is relative to workDir, a bare name
// is looked up on PATH), with the process environment plus the spec's
// `envs` and o.Env (KEY=VALUE entries only, sorted); a container function
// with `docker run` (podman when docker is not on PATH), without network,
// as user nobody, with the spec's and o.Env's variables and the spec's
// mounts. An exec function needs o.EnableExec (kustomize skips one silently
// without --enable-exec; kpipe refuses to drop it); a function that needs
// the network is refused (kustomize's --network is not supported). A spec
// naming neither an image nor an exec path gives nil: nothing to run.
func NewFunctionCommand(spec FunctionSpec, workDir string, o Options) (*FunctionCommand, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if spec.Container.Network {
		return nil, errors.New("network required but not enabled with --network")
	}
	f := &FunctionCommand{dir: workDir, timeout: o.Timeout}
	switch {
	case spec.Container.Image != "":
		f.Image = spec.Container.Image
		engine := "docker"
		if _, ok := lookPath("docker", o.Environ); !ok {
			if _, ok := lookPath("podman", o.Environ); ok {
				engine = "podman"
			}
		}
		f.path = engine
		f.args = []string{"run", "--rm", "-i", "-a", "STDIN", "-a", "STDOUT", "-a", "STDERR",
			"--network", "none", "--user", "nobody", "--security-opt=no-new-privileges"}
		for _, m := range spec.Container.Mounts {
			if !filepath.IsAbs(m.Src) {
				m.Src = filepath.Join(workDir, m.Src)
			}
			f.args = append(f.args, "--mount", m.String())
		}
		f.args = append(f.args, containerEnvFlags(spec.Container.Env, o.Env)...)
		f.args = append(f.args, spec.Container.Image)
		f.env = o.Environ
	case spec.Exec.Path != "":
		if !o.EnableExec {
			return nil, fmt.Errorf("running the KRM exec function '%s' needs --enable-exec (kustomize skips it silently without the flag; kpipe refuses to drop it)", spec.Exec.Path)
		}
		f.Path = spec.Exec.Path
		f.path = spec.Exec.Path
		f.args = spec.Exec.Args
		f.env = append(append([]string(nil), o.Environ...), execEnv(spec.Exec.Env, o.Env)...)
	default:
		return nil, nil
	}
	return f, nil
}

// execEnv merges an exec function's `envs` and the --env entries as
// kustomize does: KEY=VALUE entries with exactly one '=' (a later one
// wins), sorted.
func execEnv(spec, flags []string) []string {
	m := map[string]string{}
	for _, e := range append(append([]string(nil), spec...), flags...) {
		if parts := strings.Split(e, "="); len(parts) == 2 {
			m[parts[0]] = parts[1]
		}
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// containerEnvFlags are the `-e` flags of a container function: the
// spec's variables and the --env entries (which win), with kustomize's
// defaults LOG_TO_STDERR and STRUCTURED_RESULTS, KEY=VALUE pairs sorted
// by key, then the bare KEYs passed on from the environment.
func containerEnvFlags(spec, flags []string) []string {
	vals := map[string]string{"LOG_TO_STDERR": "true", "STRUCTURED_RESULTS": "true"}
	var keys []string
	add := func(entries []string) {
		for _, e := range entries {
			k, v, ok := strings.Cut(e, "=")
			if ok {
				vals[k] = v
				continue
			}
			found := false
			for _, x := range keys {
				found = found || x == e
			}
			if !found {
				keys = append(keys, e)
			}
		}
	}
	add(spec)
	add(flags)
	var names []string
	for k := range vals {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		out = append(out, "-e", k+"="+vals[k])
	}
	for _, k := range keys {
		out = append(out, "-e", k)
	}
	return out
}

// Describe names the function: its exec path or image.
func (f *FunctionCommand) Describe() string {
	if f.Image != "" {
		return "container function " + f.Image
	}
	return "exec function " + f.Path
}

// TimeoutError is the error of a function that ran past its timeout.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("timed out after %s and was killed (raise --plugin-timeout if it needs longer)", e.After)
}

// Run runs the function with stdin, its standard error going to stderr as
// it comes (kustomize passes it through), and returns its standard output,
// also when it fails. A failure is the error os/exec reports ("exit status
// 1", "fork/exec ./f.sh: no such file or directory": kustomize's words), a
// *TimeoutError, or output past 256 MiB. The function runs in its own
// process group, killed on cancellation and once it has exited.
func (f *FunctionCommand) Run(ctx context.Context, stdin []byte, stderr io.Writer) ([]byte, error) {
	tctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	ictx, stop := context.WithCancel(tctx)
	defer stop()
	cmd := exec.CommandContext(ictx, f.path, f.args...)
	cmd.Dir = f.dir
	cmd.Env = f.env
	cmd.Stdin = bytes.NewReader(stdin)
	out := &procgroup.Capped{Max: maxStdout, OnOverflow: stop}
	cmd.Stdout = out
	if stderr == nil {
		stderr = io.Discard
	}
	cmd.Stderr = stderr
	procgroup.Prepare(cmd)
	err := cmd.Run()
	procgroup.Reap(cmd)
	switch {
	case out.Overflowed() && ctx.Err() == nil:
		return nil, fmt.Errorf("its output passed %d MiB, the most kpipe takes from a function; it was stopped", maxStdout>>20)
	case err == nil:
		return out.Bytes(), nil
	case errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return out.Bytes(), &TimeoutError{After: f.timeout}
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return out.Bytes(), err
}
