package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
)

// Annotations kustomize reads on, or sets for, plugin input and output.
const (
	// hashAnnotation on a generated object asks for a content-hash suffix.
	hashAnnotation = "kustomize.config.k8s.io/needs-hash"
	// behaviorAnnotation on a generated object is its generator behavior
	// (create, merge or replace).
	behaviorAnnotation = "kustomize.config.k8s.io/behavior"
	// idAnnotation carries each input object's ID to a transformer.
	idAnnotation = "kustomize.config.k8s.io/id"
	// localConfigAnnotation keeps an object out of the build's output.
	localConfigAnnotation = "config.kubernetes.io/local-config"
	// validatedByLabel is the one label a validator may add.
	validatedByLabel = "validated-by"

	fnIDAnnotation         = "config.k8s.io/id"
	indexAnnotation        = "internal.config.kubernetes.io/index"
	legacyIndexAnnotation  = "config.kubernetes.io/index"
	pathAnnotation         = "internal.config.kubernetes.io/path"
	legacyPathAnnotation   = "config.kubernetes.io/path"
	resourceListAPIVersion = "config.kubernetes.io/v1"
)

// Mode says how a plugin runs.
const (
	modeExec      = "exec"         // legacy exec plugin
	modeFnExec    = "fn-exec"      // KRM function, exec
	modeContainer = "fn-container" // KRM function, container
)

// plugin is one configured external plugin: a stages.Stage.
type plugin struct {
	role    Role
	name    string // kind and name of the config
	source  string // where the config was read
	dir     string // working directory
	timeout time.Duration
	config  []byte // the config as YAML
	warn    func(string)

	mode     string
	path     string   // the executable (for containers: the engine)
	args     []string // arguments after the config file (legacy) or all (functions)
	env      []string // the exact environment, sorted
	digest   []byte   // of the executable
	image    string   // container image
	fnConfig map[string]any
	origin   string      // generators: the origin annotation given to objects without one
	configID resource.ID // of the config (KEP-993 plugins)
	maxOut   int         // cap on standard output (0: maxStdout); tests lower it

	// openGo opens a Go plugin (Options.GoPlugins; nil: ErrNoGoPlugins).
	openGo func(path string) (func(string) (any, error), error)
}

// Kind names the stage kind in statistics.
func (p *plugin) Kind() string {
	switch p.mode {
	case modeExec:
		return "ExecPlugin"
	case modeContainer:
		return "ContainerFunction"
	case modeGo:
		return "GoPlugin"
	case modeKEP:
		return "KEP993Plugin"
	default:
		return "ExecFunction"
	}
}

// Describe names the plugin for messages: its config, executable and
// config file.
func (p *plugin) Describe() string {
	switch {
	case p.mode == modeContainer:
		return fmt.Sprintf("plugin %s (image %s, configured in %s)", p.name, p.image, p.source)
	case p.mode == modeGo:
		return fmt.Sprintf("plugin %s (Go plugin %s, configured in %s)", p.name, p.path, p.source)
	case p.path != "":
		return fmt.Sprintf("plugin %s (exec %s, configured in %s)", p.name, p.path, p.source)
	}
	return fmt.Sprintf("plugin %s (configured in %s)", p.name, p.source)
}

// Fingerprint covers the config, the executable's digest, the whole
// environment passed, and every file under the kustomization directory the
// plugin runs in, so that a changed script, variable or file next to the
// config (the KSOPS pattern: a plugin decrypting secret.enc.yaml) re-runs
// it. A plugin that reads files elsewhere is not covered: build with
// --no-cache-plugins (or check with --verify-cache). No absolute path is
// in it (keys are relocatable): the executable is named by its base name
// and digest, files by their path relative to the directory.
func (p *plugin) Fingerprint() []byte {
	env := sha256.Sum256([]byte(strings.Join(p.env, "\x00")))
	return stages.Fingerprint(p.Kind(), struct {
		Role               int
		Mode, Name, Config string
		Args               []string
		Env, Digest, Files []byte
		Image              string
		Origin             string
	}{int(p.role), p.mode, filepath.Base(p.path), string(p.config), p.args, env[:], p.digest, dirDigest(p.dir), p.image, p.origin})
}

// dirDigest is the SHA-256 digest of the regular files under dir (their
// slash-separated paths relative to dir and their contents), following
// no symlinks to directories; an unreadable tree digests its error, and an
// empty dir (no working directory) digests nothing.
func dirDigest(dir string) []byte {
	h := sha256.New()
	if dir == "" {
		return h.Sum(nil)
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && (d.Name() == ".git" || d.Name() == ".kpipe-cache") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		data, err := fsread.File(path)
		if err != nil {
			if d.Type()&fs.ModeSymlink != 0 {
				data = []byte("dangling symlink")
			} else {
				return err
			}
		}
		fmt.Fprintf(h, "%d:%s%d:", len(rel), filepath.ToSlash(rel), len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		fmt.Fprintf(h, "error: %v", err)
	}
	return h.Sum(nil)
}

// WithOrigin returns the generator giving the objects it makes the origin
// o when they have none (build metadata originAnnotations), before they
// are merged into the list.
func (p *plugin) WithOrigin(o *stages.Origin) (stages.Stage, error) {
	if o == nil {
		return p, nil
	}
	val, err := o.String()
	if err != nil {
		return nil, err
	}
	c := *p
	c.origin = val
	return &c, nil
}

func (p *plugin) fail(format string, args ...any) error {
	return fmt.Errorf("%s: %s", p.Describe(), fmt.Sprintf(format, args...))
}

// Run runs the plugin over rs: a generator adds its objects, a
// transformer replaces rs by its output, a validator checks rs.
func (p *plugin) Run(ctx context.Context, rs *resource.List) error {
	if p.role == Generator {
		out, err := p.invoke(ctx, nil)
		if errors.Is(err, errNotSupported) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, r := range out {
			if err := generatorOptions(r); err != nil {
				return p.fail("%v", err)
			}
			if _, ok := r.Annotation(stages.OriginAnnotation); p.origin != "" && !ok {
				r.SetAnnotation(stages.OriginAnnotation, p.origin)
			}
			if err := stages.Absorb(rs, r); err != nil {
				return p.fail("merging generated object %s: %v", r.ID(), err)
			}
		}
		return nil
	}
	var before []snapshot
	if p.role == Validator {
		before = snapshotOf(rs)
	}
	out, err := p.invoke(ctx, rs.All())
	if errors.Is(err, errNotSupported) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := p.applyTransform(rs, out); err != nil {
		return err
	}
	if p.role == Validator {
		if err := unchanged(before, rs); err != nil {
			return p.fail("validator shouldn't modify the resource map: %v", err)
		}
	}
	return nil
}

// invoke runs the plugin on the given input objects (nil for a generator)
// and returns the objects it printed.
func (p *plugin) invoke(ctx context.Context, in []*resource.Resource) ([]*resource.Resource, error) {
	switch p.mode {
	case modeExec:
		return p.invokeExec(ctx, in)
	case modeGo:
		return p.invokeGo(ctx, in)
	case modeKEP:
		return p.invokeKEP(ctx, in)
	}
	return p.invokeFunction(ctx, in)
}

// withIDs returns copies of the objects of rs annotated with their IDs, as
// kustomize gives them to transformers.
func withIDs(rs []*resource.Resource) ([]map[string]any, error) {
	out := make([]map[string]any, len(rs))
	for i, r := range rs {
		obj := resource.CopyMap(r.Object())
		resource.PlainNulls(obj)
		ann, err := resource.EnsureMap(obj, "metadata", "annotations")
		if err != nil {
			return nil, err
		}
		id, err := idYAML(r.ID())
		if err != nil {
			return nil, err
		}
		ann[idAnnotation] = id
		out[i] = obj
	}
	return out, nil
}

// idYAML renders an ID as kustomize writes a resid.ResId in YAML.
func idYAML(id resource.ID) (string, error) {
	b, err := output.MarshalValue(idMap(id))
	return string(b), err
}

func idMap(id resource.ID) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{"group": id.Group, "version": id.Version, "kind": id.Kind, "name": id.Name, "namespace": id.Namespace} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// generatorOptions turns the generator-option annotations of a generated
// object into its generator options, as kustomize does: no hash suffix
// unless asked for.
func generatorOptions(r *resource.Resource) error {
	ann := r.Annotations()
	needsHash := false
	if v, ok := ann[hashAnnotation]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("the annotation %q contains an invalid value (%q)", hashAnnotation, v)
		}
		needsHash = b
	}
	behavior := ann[behaviorAnnotation]
	r.RemoveAnnotation(hashAnnotation)
	r.RemoveAnnotation(behaviorAnnotation)
	r.Gen = &resource.Generated{Behavior: stages.NormalBehavior(behavior), NeedsHash: needsHash}
	return nil
}

// applyTransform makes rs what a transformer printed, as kustomize does:
// an output object replaces the content of the input object with its
// current ID (which keeps its build state), a new one is appended, and
// input objects missing from the output are removed. Objects are matched
// through maps of their IDs: a transformer prints every object it was
// given, and scanning the list for each made large builds quadratic.
func (p *plugin) applyTransform(rs *resource.List, out []*resource.Resource) error {
	index := currentIDs(rs)
	add := resource.NewAppender(rs)
	printed := make(map[resource.ID]bool, len(out))
	for _, r := range out {
		r.RemoveAnnotation(idAnnotation)
		id := r.ID()
		if printed[id.Key()] {
			j, _ := json.Marshal(idMap(id))
			return p.fail("plugin generated duplicate resource: %s", j)
		}
		printed[id.Key()] = true
		switch m := index[id.Key()]; len(m) {
		case 0:
			if err := add.Append(r); err != nil {
				return p.fail("%v", err)
			}
		case 1:
			rs.EditTree(m[0]).SetObject(r.Object())
		default:
			return p.fail("output object %s matches %d input objects", id, len(m))
		}
	}
	kept := make([]*resource.Resource, 0, rs.Len())
	for _, r := range rs.All() {
		if printed[r.ID().Key()] {
			kept = append(kept, r)
		}
	}
	rs.Replace(kept)
	return nil
}

// currentIDs indexes the objects of rs by current ID (ID.Key).
func currentIDs(rs *resource.List) map[resource.ID][]int {
	index := make(map[resource.ID][]int, rs.Len())
	for i, r := range rs.All() {
		k := r.ID().Key()
		index[k] = append(index[k], i)
	}
	return index
}

// snapshot is an object as a validator received it.
type snapshot struct {
	id  resource.ID
	obj map[string]any
}

func snapshotOf(rs *resource.List) []snapshot {
	out := make([]snapshot, rs.Len())
	for i, r := range rs.All() {
		out[i] = snapshot{r.ID(), resource.CopyMap(r.Object())}
	}
	return out
}

// unchanged checks that rs holds the objects of before, ignoring the
// validated-by label and the path annotations the function runner adds
// (kustomize compares those too, so that every KRM function validator
// fails there: "nodes unequal" with only config.kubernetes.io/path added).
func unchanged(before []snapshot, rs *resource.List) error {
	if len(before) != rs.Len() {
		return fmt.Errorf("%d objects before, %d after", len(before), rs.Len())
	}
	index := currentIDs(rs)
	for _, b := range before {
		m := index[b.id.Key()]
		if len(m) != 1 {
			return fmt.Errorf("object %s is missing", b.id)
		}
		after := resource.CopyMap(rs.At(m[0]).Object())
		tmp := resource.New(after)
		orig := resource.New(resource.CopyMap(b.obj))
		for _, r := range []*resource.Resource{tmp, orig} {
			r.RemoveLabel(validatedByLabel)
			r.RemoveAnnotation(pathAnnotation)
			r.RemoveAnnotation(legacyPathAnnotation)
		}
		if !reflect.DeepEqual(tmp.Object(), orig.Object()) {
			return fmt.Errorf("object %s was changed", b.id)
		}
	}
	return nil
}

// configYAML renders a config as kustomize hands it to plugins.
func configYAML(r *resource.Resource) ([]byte, error) {
	return output.MarshalOne(r)
}

// ExplainInputs names what Fingerprint covers, each as a short digest or
// value, so that `--explain` can say which one changed: the executable,
// the config, the arguments, each environment variable (its value's
// digest, never the value), the files beside the config, the image.
func (p *plugin) ExplainInputs() map[string]string {
	short := func(b []byte) string { return fmt.Sprintf("%x", b[:min(len(b), 8)]) }
	sum := func(s string) string { d := sha256.Sum256([]byte(s)); return short(d[:]) }
	m := map[string]string{
		"executable": filepath.Base(p.path) + " " + short(p.digest),
		"config":     sum(string(p.config)),
		"args":       sum(strings.Join(p.args, "\x00")),
		"files":      short(dirDigest(p.dir)),
	}
	if p.image != "" {
		m["image"] = p.image
	}
	for _, kv := range p.env {
		k, v, _ := strings.Cut(kv, "=")
		m["env "+k] = sum(v)
	}
	return m
}
