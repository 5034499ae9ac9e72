package plugins

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
)

// Role is how a kustomization uses a plugin config.
type Role int

const (
	// Generator configs are listed under `generators:`.
	Generator Role = iota
	// Transformer configs are listed under `transformers:`.
	Transformer
	// Validator configs are listed under `validators:`; they run as
	// transformers that may only add the `validated-by` label.
	Validator
)

func (r Role) String() string {
	switch r {
	case Generator:
		return "generator"
	case Transformer:
		return "transformer"
	default:
		return "validator"
	}
}

// DefaultTimeout bounds a plugin run when Options.Timeout is zero.
const DefaultTimeout = 5 * time.Minute

// Options are the settings of a build that govern plugins.
type Options struct {
	// EnableAlpha allows external plugins (--enable-alpha-plugins).
	EnableAlpha bool
	// EnableExec allows KRM exec functions and KEP-993 plugins found on PATH
	// (--enable-exec).
	EnableExec bool
	// Timeout bounds each plugin run (--plugin-timeout; zero: DefaultTimeout).
	Timeout time.Duration
	// Env are the --env entries: KEY=VALUE, or KEY to pass the variable
	// from the environment; given to KRM functions.
	Env []string
	// Environ is the process environment plugins start from (nil: the
	// current process's).
	Environ []string
	// Warn, when set, receives what a plugin that succeeded wrote to its
	// standard error (kustomize passes it through); a failure quotes it in
	// its error instead.
	Warn func(msg string)
	// GoPlugins opens a Go plugin (`<Kind>.so`) and returns its symbol
	// lookup: goplugin.Open (package plugins/goplugin), which links the
	// standard plugin package. Nil: a Go plugin fails to load with
	// ErrNoGoPlugins, and this package does not link the plugin package.
	GoPlugins func(path string) (func(string) (any, error), error)
}

// Config is one plugin config of a kustomization.
type Config struct {
	// Object is the config object.
	Object *resource.Resource
	// Role says which field listed it.
	Role Role
	// Dir is the kustomization's directory (absolute): the working
	// directory of the plugin.
	Dir string
	// Source names where the config was read, for messages: its file, or
	// the kustomization file for an inline config.
	Source string
	// Read reads files relative to the kustomization (argsFromFile).
	Read stages.ReadFile
}

// Environment variables kpipe does not pass to plugins: the shell's own
// bookkeeping, which says nothing a plugin should depend on and changes
// from one shell to the next.
var droppedEnv = []string{"OLDPWD", "SHLVL", "_"}

// IsBuiltin reports whether a config names a builtin plugin (apiVersion
// `builtin`, as kustomize tests it).
func IsBuiltin(c *resource.Resource) bool {
	g := c.GVK()
	return g.Group == "" && g.Version == "builtin"
}

// DisabledError is the refusal of an external plugin without
// --enable-alpha-plugins: its kind and where it was configured (a file,
// or "").
type DisabledError struct{ Kind, Source string }

func (e *DisabledError) Error() string {
	if e.Source == "" {
		return fmt.Sprintf("external plugins disabled; unable to load external plugin '%s' (add --enable-alpha-plugins to use it)", e.Kind)
	}
	return fmt.Sprintf("external plugins disabled; unable to load external plugin '%s' (configured in %s): add --enable-alpha-plugins to use it", e.Kind, e.Source)
}

// KustomizeText is kustomize's words for the refusal.
func (e *DisabledError) KustomizeText() string {
	return fmt.Sprintf("external plugins disabled; unable to load external plugin '%s'", e.Kind)
}

// Load configures the stage that runs an external plugin config.
func Load(c Config, o Options) (stages.Stage, error) {
	kind := c.Object.Kind()
	if !o.EnableAlpha {
		return nil, &DisabledError{Kind: kind, Source: c.Source}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	p := &plugin{role: c.Role, source: c.Source, dir: c.Dir, timeout: o.Timeout, warn: o.Warn,
		name: fmt.Sprintf("%s '%s'", kind, c.Object.Name())}
	cfg, err := configYAML(c.Object)
	if err != nil {
		return nil, p.fail("%v", err)
	}
	p.config = cfg
	if spec, ok, err := functionSpec(c.Object); err != nil {
		return nil, p.fail("%v", err)
	} else if ok {
		err = p.configureFunction(c, spec, o)
		if err != nil {
			return nil, err
		}
	} else if err := p.configureExec(c, o); err != nil {
		return nil, err
	}
	return p, nil
}

// environ is the environment given to a plugin: base without the dropped
// variables and PWD, then PWD=dir, then extra, later entries winning;
// sorted, so that its digest is canonical.
func environ(base []string, dir string, extra ...string) []string {
	m := map[string]string{}
	for _, e := range base {
		k, v, _ := strings.Cut(e, "=")
		if slices.Contains(droppedEnv, k) || k == "PWD" {
			continue
		}
		m[k] = v
	}
	m["PWD"] = dir
	for _, e := range extra {
		k, v, _ := strings.Cut(e, "=")
		m[k] = v
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// fileDigest is the SHA-256 of a file's content.
func fileDigest(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// checkExecutable fails unless path is a regular file with an execute bit.
func checkExecutable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("'%s' is a directory, not an executable", path)
	}
	if st.Mode()&0o111 == 0 {
		return fmt.Errorf("unexecutable plugin at: %s (set its execute bit)", path)
	}
	return nil
}

// absIn resolves p against dir unless it is absolute.
func absIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// lookPath finds an executable by name in the PATH of environ.
func lookPath(name string, environ []string) (string, bool) {
	for _, e := range environ {
		k, v, _ := strings.Cut(e, "=")
		if k != "PATH" {
			continue
		}
		for _, dir := range filepath.SplitList(v) {
			if dir == "" {
				continue
			}
			p := filepath.Join(dir, name)
			if checkExecutable(p) == nil {
				return p, true
			}
		}
	}
	return "", false
}
