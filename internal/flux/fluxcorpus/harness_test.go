package fluxcorpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/internal/flux/generate"
	"github.com/kpipe/kpipe/internal/flux/postbuild"
	"github.com/kpipe/kpipe/loaders"
)

// fluxCase is a case.json of the reference corpus: one run of the flux
// CLI, with what it printed beside it (stdout, stderr).
type fluxCase struct {
	Argv             []string `json:"argv"`
	Case             string   `json:"case"`
	Cwd              string   `json:"cwd"`
	Root             string   `json:"root"`
	RC               int      `json:"rc"`
	Repo             string   `json:"repo"`
	Status           string   `json:"status"`
	Variant          string   `json:"variant"`
	NetworkDependent bool     `json:"network_dependent"`

	dir string // the directory of case.json
}

func readCase(dir string) (*fluxCase, error) {
	b, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		return nil, err
	}
	c := &fluxCase{dir: dir}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return c, nil
}

func (c *fluxCase) want(t testing.TB) (stdout, stderr string) {
	t.Helper()
	o, err := os.ReadFile(filepath.Join(c.dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := os.ReadFile(filepath.Join(c.dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	return string(o), string(e)
}

// fluxArgs are the flags of `flux build kustomization` a case sets.
type fluxArgs struct {
	name, path, ksFile, namespace string
	dryRun, strict, recursive     bool
	ignorePaths                   []string
	localSources                  map[string]string
	unknown                       string
}

// parseArgs reads argv (after the binary) as flux's cobra command does,
// for the flags the corpus uses.
func parseArgs(argv []string) fluxArgs {
	a := fluxArgs{namespace: "flux-system", localSources: map[string]string{}}
	var positional []string
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		name, value, hasValue := strings.Cut(arg, "=")
		next := func() string {
			if hasValue {
				return value
			}
			if i+1 < len(argv) {
				i++
				return argv[i]
			}
			return ""
		}
		switch name {
		case "--path":
			a.path = next()
		case "--kustomization-file":
			a.ksFile = next()
		case "-n", "--namespace":
			a.namespace = next()
		case "--dry-run":
			a.dryRun = !hasValue || value == "true"
		case "--strict-substitute":
			a.strict = !hasValue || value == "true"
		case "--recursive", "-r":
			a.recursive = !hasValue || value == "true"
		case "--in-memory-build":
			// same output; reads confined to the working directory
		case "--ignore-paths":
			a.ignorePaths = append(a.ignorePaths, strings.Split(next(), ",")...)
		case "--local-sources":
			for _, kv := range strings.Split(next(), ",") {
				k, v, _ := strings.Cut(kv, "=")
				a.localSources[k] = v
			}
		default:
			if strings.HasPrefix(arg, "-") {
				a.unknown = arg
				continue
			}
			positional = append(positional, arg)
		}
	}
	// build kustomization NAME (or the alias ks)
	if len(positional) > 2 {
		a.name = positional[2]
	}
	return a
}

// Outcome classes of a case.
const (
	classMatch = "match" // stdout (or the error) is flux's, byte for byte
	// Flag parsing (cobra's "unknown flag"): phase 2's CLI.
	classCLI = "flags (phase 2)"
	// Runs without --dry-run need a cluster; kpipe refuses them.
	classLive = "live (needs a cluster)"
	// kustomize failed as flux's kustomize failed, with another message
	// (or a network fetch): the engine's errors are phase 2's.
	classKustomizeError = "kustomize error, message differs"
	// kustomize v5.8.2 (the reference here) and v5.8.1 (Flux's) differ.
	classKustomizeVersion = "kustomize v5.8.1 vs v5.8.2"
	classMiss             = "MISS"
	// flux needed the network (a remote base) and failed; so does the run
	// here: only the outcome is compared.
	classNetwork = "network: refused as flux did (status only)"
)

// outcome is what running a case gave.
type outcome struct {
	class  string
	detail string // for misses: what differs
}

// env is what runs the cases: the kustomize command and the copies of the
// trees it builds (with the generated kustomization files in them).
type env struct {
	kustomize []string
	// origin is the directory the cases' paths are under; mirror is its
	// copy, made lazily one top-level directory at a time.
	origin, mirror string
	copied         map[string]bool
	// saveKustomized, when set, is given each kustomize output.
	saveKustomized func(k *flux.Kustomization, out []byte)
}

// kustomizeCommand finds the build command: $KPIPE_FLUX_KUSTOMIZE (a
// kustomize or a kpipe binary), kustomize v5.8.2 as .ci/run installs it,
// or kustomize on PATH.
func kustomizeCommand(t testing.TB) []string {
	bin := os.Getenv("KPIPE_FLUX_KUSTOMIZE")
	if bin == "" {
		if home, err := os.UserHomeDir(); err == nil {
			if p := filepath.Join(home, ".cache/kpipe-ci/kustomize-v5.8.2/kustomize"); fileExists(p) {
				bin = p
			}
		}
	}
	if bin == "" {
		if p, err := exec.LookPath("kustomize"); err == nil {
			bin = p
		}
	}
	if bin == "" {
		t.Skip("no kustomize binary: install one with `GOBIN=$HOME/.cache/kpipe-ci/kustomize-v5.8.2 go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.2` (as .ci/run does), or set KPIPE_FLUX_KUSTOMIZE")
	}
	// Flux builds with no reordering and load restrictor none.
	cmd := []string{bin, "build", "--reorder", "none", "--load-restrictor", "LoadRestrictionsNone"}
	if strings.Contains(filepath.Base(bin), "kpipe") {
		cmd = append(cmd, "--no-cache")
	}
	return cmd
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// mirrorOf is p's place in the copy, copying its top-level directory
// (below origin) first when it is not there yet.
func (e *env) mirrorOf(t testing.TB, p string) string {
	rel, err := filepath.Rel(e.origin, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		t.Fatalf("%s is not under %s", p, e.origin)
	}
	parts := strings.Split(rel, string(filepath.Separator))
	top := parts[0]
	if top == "flux-corpus" && len(parts) > 2 { // flux-corpus/artifacts/<repo>
		top = filepath.Join(parts[0], parts[1], parts[2])
	}
	if !e.copied[top] {
		if err := copyTree(filepath.Join(e.origin, top), filepath.Join(e.mirror, top)); err != nil {
			t.Fatal(err)
		}
		e.copied[top] = true
	}
	return filepath.Join(e.mirror, rel)
}

// copyTree copies a tree (symlinks as symlinks), without .git.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
		return nil
	})
}

// stageError is a failure of one stage of a build.
type stageError struct {
	stage string // "find", "generate", "kustomize", "post-build", "recursive"
	msg   string // flux's message, for kustomize kustomize's (with flux's prefix)
}

func (e *stageError) Error() string { return e.msg }

// run runs one case with cwd standing for the case's working directory
// and root for its "root" (the absolute path in flux's messages).
func (e *env) run(t testing.TB, c *fluxCase, cwd, root string) outcome {
	wantOut, wantErr := c.want(t)
	wantErr = fluxError(strings.ReplaceAll(wantErr, c.Root, root))
	a := parseArgs(c.Argv)
	if a.unknown != "" {
		return outcome{class: classCLI} // cobra's flag parsing
	}
	path, err := flux.Args{Name: a.name, Path: a.path, KustomizationFile: a.ksFile, Namespace: a.namespace, DryRun: a.dryRun}.Check(loaders.Disk, cwd)
	if errors.Is(err, flux.ErrLive) {
		return outcome{class: classLive}
	}
	if err != nil {
		if c.RC == 1 && "✗ "+err.Error() == wantErr {
			return outcome{class: classMatch}
		}
		return outcome{class: classMiss, detail: fmt.Sprintf("args error\n got: ✗ %s\nwant: %s", err, wantErr)}
	}
	data, err := os.ReadFile(filepath.Join(cwd, a.ksFile))
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	k, err := flux.Find(data, a.ksFile, a.name, a.namespace)
	if err == nil {
		objs, err = e.build(t, k, path, cwd, a)
	}
	if err != nil {
		var se *stageError
		if !errors.As(err, &se) {
			se = &stageError{stage: "find", msg: err.Error()}
		}
		got := "✗ " + se.msg
		switch {
		case c.RC == 1 && got == wantErr:
			return outcome{class: classMatch}
		case c.RC == 1 && se.stage == "kustomize":
			return outcome{class: classKustomizeError, detail: fmt.Sprintf(" got: %s\nwant: %s", got, wantErr)}
		case c.RC == 1:
			return outcome{class: classMiss, detail: fmt.Sprintf("%s error\n got: %s\nwant: %s", se.stage, got, wantErr)}
		}
		return outcome{class: classMiss, detail: fmt.Sprintf("%s failed, flux did not: %s", se.stage, got)}
	}
	out, err := postbuild.Encode(objs)
	if err != nil {
		t.Fatal(err)
	}
	if c.RC != 0 {
		return outcome{class: classMiss, detail: "rendered, flux refused: " + wantErr}
	}
	if string(out) != wantOut {
		return outcome{class: classMiss, detail: "stdout differs:\n" + firstDiff(string(out), wantOut)}
	}
	return outcome{class: classMatch}
}

// runNetwork runs a case whose flux run needed the network (a remote
// base): only the outcome is compared, a refusal with a refusal.
func (e *env) runNetwork(t testing.TB, c *fluxCase, cwd, root string) outcome {
	o := e.run(t, c, cwd, root)
	if c.RC == 1 && (o.class == classMatch || o.class == classKustomizeError || strings.Contains(o.detail, " error\n")) {
		return outcome{class: classNetwork}
	}
	return o
}

// build renders k from path (relative to cwd, or absolute) as flux build
// does: generate, kustomize (the binary, over the copy of the tree),
// post-build; with --recursive, the Flux Kustomizations it renders are
// built after it, depth first.
func (e *env) build(t testing.TB, k *flux.Kustomization, path, cwd string, a fluxArgs) ([]map[string]any, error) {
	dir, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := generate.Generate(loaders.Disk, k, dir, generate.Options{IgnorePaths: a.ignorePaths})
	if err != nil {
		return nil, &stageError{stage: "generate", msg: err.Error()}
	}
	kout, err := e.kustomizeBuild(t, gen, dir)
	if err != nil {
		return nil, err
	}
	if e.saveKustomized != nil {
		e.saveKustomized(k, kout)
	}
	objs, err := postbuild.Objects(kout, k.PostBuild(nil, a.strict))
	if err != nil {
		return nil, &stageError{stage: "post-build", msg: err.Error()}
	}
	if !a.recursive {
		return objs, nil
	}
	var children []map[string]any
	for _, obj := range objs {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		if !flux.IsFluxKustomization(apiVersion, kind) {
			continue
		}
		child, err := flux.FromObject(obj)
		if err != nil {
			return nil, &stageError{stage: "recursive", msg: err.Error()}
		}
		if child.Name == k.Name && child.Namespace == k.Namespace {
			continue
		}
		p, err := child.LocalPath(a.localSources)
		if err != nil {
			return nil, &stageError{stage: "recursive", msg: err.Error()}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		sub, err := e.build(t, child, p, cwd, a)
		if err != nil {
			return nil, err
		}
		children = append(children, sub...)
	}
	return append(objs, children...), nil
}

// kustomizeBuild builds dir's copy with the generated kustomization file
// in it.
func (e *env) kustomizeBuild(t testing.TB, gen *generate.Result, dir string) ([]byte, error) {
	mfile := e.mirrorOf(t, gen.File)
	mdir := e.mirrorOf(t, dir)
	old, readErr := os.ReadFile(mfile)
	if err := os.WriteFile(mfile, gen.Manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if readErr == nil {
			os.WriteFile(mfile, old, 0o644)
		} else {
			os.Remove(mfile)
		}
	}()
	cmd := exec.Command(e.kustomize[0], append(e.kustomize[1:], mdir)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatal(err)
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "Error: "); i >= 0 {
			msg = msg[i+len("Error: "):]
		}
		msg = strings.ReplaceAll(msg, e.mirror, e.origin)
		return nil, &stageError{stage: "kustomize", msg: "kustomize build failed: " + msg}
	}
	return stdout.Bytes(), nil
}

// fluxError is flux's error message in its stderr: from the last "✗ " on
// (kustomize's warnings may come before it).
func fluxError(stderr string) string {
	if i := strings.LastIndex(stderr, "✗ "); i >= 0 {
		stderr = stderr[i:]
	}
	return strings.TrimRight(stderr, "\n")
}

// firstDiff shows the first line where got and want differ, with context.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d\n got: %q\nwant: %q", i+1, gl, wl)
		}
	}
	return "(same lines)"
}
