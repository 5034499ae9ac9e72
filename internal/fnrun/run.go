package fnrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/plugins"
)

// Options are the settings of a run.
type Options struct {
	// Plugins are the function settings: EnableExec, Timeout, Env and
	// Environ.
	Plugins plugins.Options
	// WorkDir is the directory functions run in, against which a relative
	// exec path resolves (kustomize's fn run: its working directory).
	WorkDir string
	// Stderr receives what functions write to their standard error.
	Stderr io.Writer
	// DryRun, when set, receives the result as one YAML stream, each
	// object with its path annotations, and no file is written.
	DryRun io.Writer
}

// Result says what a run changed, as slash-separated paths relative to the
// directory.
type Result struct {
	Written, Removed []string
}

// function is one function config found in the package, ready to run.
type function struct {
	config *yaml.Node // the config object, as read (and annotated since)
	spec   *FunctionSpec
	cmd    *plugins.FunctionCommand
	exit   error // a deferred failure
}

// Run runs the functions found in dir over its objects and writes the
// result back (see the package documentation).
func Run(ctx context.Context, dir string, o Options) (*Result, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	nodes, files, err := readPackage(abs)
	if errors.Is(err, fs.ErrNotExist) && !exists(abs) {
		return nil, &loaders.Hinted{Hint: fmt.Sprintf("fn run: the directory %s does not exist", dir), Err: err}
	} else if err != nil {
		return nil, err
	}
	fns, err := findFunctions(nodes, o)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	result := nodes
	for _, f := range fns {
		recorded, err := preprocess(result)
		if err != nil {
			return nil, err
		}
		result, err = f.run(ctx, result, o)
		if err != nil {
			return nil, err
		}
		if len(result) == 0 {
			return res, deferred(fns)
		}
		if err := reconcile(result, recorded); err != nil {
			return nil, err
		}
	}
	if len(fns) == 0 {
		// kustomize's search for functions numbers every object and, when
		// it finds none, leaves the numbers in: its fn run writes
		// `internal.config.kubernetes.io/annotations-migration-resource-id`
		// into every file. kpipe removes them.
		for _, n := range result {
			if err := clearAnnotation(n, migrationAnnotation); err != nil {
				return nil, err
			}
		}
	}
	if o.DryRun != nil {
		var buf bytes.Buffer
		if err := (writer{}).write(&buf, result); err != nil {
			return nil, err
		}
		if _, err := o.DryRun.Write(buf.Bytes()); err != nil {
			return nil, err
		}
	} else if err := writePackage(abs, files, result, res); err != nil {
		return nil, err
	}
	return res, deferred(fns)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// deferred joins the failures of the functions that deferred them.
func deferred(fns []*function) error {
	var msgs, hints []string
	for _, f := range fns {
		if f.exit != nil {
			msgs = append(msgs, f.exit.Error())
			var h *loaders.Hinted
			if errors.As(f.exit, &h) {
				hints = append(hints, h.Hint)
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &loaders.Hinted{Hint: strings.Join(hints, "\n"), Err: errors.New(strings.Join(msgs, "\n---\n"))}
}

// findFunctions finds the function configs among the objects and orders
// them as kustomize does (see sortFunctions).
func findFunctions(nodes []*yaml.Node, o Options) ([]*function, error) {
	recorded, err := preprocess(nodes)
	if err != nil {
		return nil, err
	}
	var configs []*yaml.Node
	for _, n := range nodes {
		spec, err := functionSpec(n)
		if err != nil {
			return nil, withSource(n, err)
		}
		if spec != nil {
			configs = append(configs, n)
		}
	}
	if len(configs) == 0 {
		return nil, nil
	}
	if err := reconcile(configs, recorded); err != nil {
		return nil, err
	}
	if err := sortFunctions(configs); err != nil {
		return nil, err
	}
	var fns []*function
	for _, n := range configs {
		spec, err := functionSpec(n)
		if err != nil {
			return nil, withSource(n, fmt.Errorf("failed to get FunctionSpec: %w", err))
		}
		if spec == nil {
			continue
		}
		cmd, err := plugins.NewFunctionCommand(spec.pluginSpec(), o.WorkDir, o.Plugins)
		if err != nil {
			return nil, withSource(n, err)
		}
		if cmd == nil {
			continue
		}
		fns = append(fns, &function{config: n, spec: spec, cmd: cmd})
	}
	return fns, nil
}

// withSource gives err a plain line naming the function config's file.
func withSource(n *yaml.Node, err error) error {
	m, _ := getMeta(n)
	return &loaders.Hinted{
		Hint: fmt.Sprintf("%s: function config %s '%s': %v", pathOf(n), m.Kind, m.Name, err),
		Err:  err,
	}
}

// sortFunctions orders function configs as kustomize's sortFns does:
// deeper scopes first, then by scope, then by position in the same file
// (sort.Slice with kustomize's comparison, so that ties come out as there).
func sortFunctions(fns []*yaml.Node) error {
	var outer error
	sort.Slice(fns, func(i, j int) bool {
		if copyLegacyAnnotations(fns[i]) != nil || copyLegacyAnnotations(fns[j]) != nil {
			return false
		}
		mi, mj := annotations(fns[i]), annotations(fns[j])
		pi, pj := filepath.ToSlash(mi[PathAnnotation]), filepath.ToSlash(mj[PathAnnotation])
		if pi == pj {
			ii, err := strconv.Atoi(mi[IndexAnnotation])
			if err != nil {
				outer = err
				return false
			}
			ij, err := strconv.Atoi(mj[IndexAnnotation])
			if err != nil {
				outer = err
				return false
			}
			return ii < ij
		}
		scope := func(p string) string {
			if filepath.Base(path.Dir(p)) == "functions" {
				return filepath.Dir(path.Dir(p))
			}
			return filepath.Dir(p)
		}
		pi, pj = scope(pi), scope(pj)
		depth := func(p string) int {
			if p == "." {
				return 0
			}
			return len(strings.Split(p, "/"))
		}
		if li, lj := depth(pi), depth(pj); li != lj {
			return li > lj
		}
		return pi < pj
	})
	return outer
}

// scopeDir is the directory a function config applies to: its own, or
// the one above for a config in a `functions` directory; "" when it has
// no path.
func (f *function) scopeDir() string {
	a := annotations(f.config)
	p, ok := a[PathAnnotation]
	if !ok {
		if p, ok = a[LegacyPathAnnotation]; !ok {
			return ""
		}
	}
	d := path.Clean(path.Dir(p))
	if path.Base(d) == "functions" {
		d = path.Dir(d)
	}
	return d
}

// scope splits the objects into those the function sees (in its directory
// and below, compared as kustomize does: as a string prefix) and the
// others.
func (f *function) scope(dir string, nodes []*yaml.Node) (in, out []*yaml.Node, err error) {
	if dir == "" || dir == "." {
		return nodes, nil, nil
	}
	for _, n := range nodes {
		m, err := getMeta(n)
		if err != nil {
			return nil, nil, err
		}
		p, ok := m.Annotations[PathAnnotation]
		if !ok {
			if p, ok = m.Annotations[LegacyPathAnnotation]; !ok {
				out = append(out, n)
				continue
			}
		}
		d := path.Clean(path.Dir(p))
		if path.Base(d) == "functions" {
			d = path.Dir(d)
		}
		if !strings.HasPrefix(d, dir) {
			out = append(out, n)
			continue
		}
		in = append(in, n)
	}
	return in, out, nil
}

// run runs the function over the objects in its scope, as kyaml's
// FunctionFilter does, and returns its output followed by the objects out
// of its scope.
func (f *function) run(ctx context.Context, nodes []*yaml.Node, o Options) ([]*yaml.Node, error) {
	dir := f.scopeDir()
	in, saved, err := f.scope(dir, nodes)
	if err != nil {
		return nil, err
	}
	ids := map[string]*yaml.Node{}
	for i, n := range in {
		id := strconv.Itoa(i + 1)
		if err := setAnnotation(n, idAnnotation, id); err != nil {
			return nil, err
		}
		if err := setAnnotation(n, legacyIDAnnotation, id); err != nil {
			return nil, err
		}
		ids[id] = n
	}
	var stdin bytes.Buffer
	if err := (writer{wrap: true, keepReader: true, functionConfig: f.config}).write(&stdin, in); err != nil {
		return nil, err
	}
	stdout, runErr := f.cmd.Run(ctx, stdin.Bytes(), o.Stderr)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rd := &reader{unwrap: true}
	out, err := rd.read(stdout)
	if err != nil {
		return nil, f.failure(err, nil)
	}
	for _, n := range out {
		v, err := annotationNode(n, idAnnotation)
		if err != nil {
			return nil, err
		}
		if v == nil {
			if v, err = annotationNode(n, legacyIDAnnotation); err != nil {
				return nil, err
			}
			if v == nil {
				continue
			}
		}
		from, ok := ids[v.Value]
		if !ok {
			continue
		}
		if err := copyComments(from, n); err != nil {
			return nil, err
		}
		if err := syncOrder(from, n); err != nil {
			return nil, err
		}
		if err := clearAnnotation(n, idAnnotation); err != nil {
			return nil, err
		}
		if err := clearAnnotation(n, legacyIDAnnotation); err != nil {
			return nil, err
		}
	}
	if runErr != nil {
		runErr = f.failure(runErr, rd.results)
		if !f.spec.DeferFailure {
			return append(out, saved...), runErr
		}
		f.exit = runErr
	}
	if err := defaultPathAnnotation(dir, out); err != nil {
		return nil, err
	}
	return append(out, saved...), nil
}

// failure gives a function's error a plain line naming the function, its
// config and the results it reported.
func (f *function) failure(err error, results *yaml.Node) error {
	m, _ := getMeta(f.config)
	hint := fmt.Sprintf("%s: %s (%s '%s') failed: %v", pathOf(f.config), f.cmd.Describe(), m.Kind, m.Name, err)
	if lines := resultLines(results); len(lines) > 0 {
		hint += "; it reported:\n  " + strings.Join(lines, "\n  ")
	}
	var te *plugins.TimeoutError
	if errors.As(err, &te) {
		return &loaders.Hinted{Hint: hint, Err: fmt.Errorf("%s: %w", f.cmd.Describe(), err)}
	}
	return &loaders.Hinted{Hint: hint, Err: err}
}

// resultLines renders a ResourceList's results, one line each.
func resultLines(results *yaml.Node) []string {
	if results == nil || results.Kind != yaml.SequenceNode {
		return nil
	}
	var lines []string
	for _, r := range results.Content {
		get := func(keys ...string) string {
			v, _ := lookup(r, keys...)
			return value(v)
		}
		sev := get("severity")
		if sev == "" {
			sev = "error"
		}
		line := fmt.Sprintf("[%s] %s", sev, get("message"))
		if k := get("resourceRef", "kind"); k != "" {
			line += fmt.Sprintf(" (%s %s)", k, get("resourceRef", "name"))
		}
		if p := get("field", "path"); p != "" {
			line += " field " + p
		}
		if p := get("file", "path"); p != "" {
			line += " file " + p
		}
		lines = append(lines, line)
	}
	return lines
}
