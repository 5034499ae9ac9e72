package plugins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/shlex"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

// maxEnvString is the longest KUSTOMIZE_PLUGIN_CONFIG_* value kustomize
// passes; longer ones are left out.
const maxEnvString = 131071

// pathSafe fails when the config's group, version or kind could lead the
// plugin path out of the plugin home: a path separator, a NUL, or a whole
// component of "." or "..". (kustomize joins them unchecked, so that
// `kind: ../../../../bin/sh` selects /bin/sh; kpipe refuses.)
func pathSafe(group, version, kind string) error {
	for _, c := range []struct{ field, v string }{{"group", group}, {"version", version}, {"kind", kind}} {
		if strings.ContainsAny(c.v, "/\\\x00") || c.v == "." || c.v == ".." {
			return fmt.Errorf("the config's %s %q cannot name a plugin: it must be one path component, without '/', '\\' or '..'", c.field, c.v)
		}
	}
	return nil
}

// configureExec finds a legacy exec plugin for c and prepares its run.
func (p *plugin) configureExec(c Config, o Options) error {
	g := c.Object.GVK()
	if c.Object.APIVersion() == "" {
		return p.fail("the config has no apiVersion: kpipe needs it to find the plugin (<plugin home>/<group>/<version>/<lowercase kind>/<kind>) or a KRM function annotation")
	}
	if err := pathSafe(g.Group, g.Version, g.Kind); err != nil {
		return p.fail("%v", err)
	}
	path := filepath.Join(pluginHome(o.Environ), g.Group, g.Version, strings.ToLower(g.Kind), g.Kind)
	p.mode, p.path = modeExec, path
	if err := checkExecutable(path); err != nil {
		so := path + ".so"
		if _, serr := os.Stat(so); serr == nil {
			return p.configureGo(c, o, so)
		}
		if found, kerr := p.configureKEP(c, o); found || kerr != nil {
			return kerr
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return p.fail("%v; no Go plugin at '%s' either, nor a KEP-993 plugin %s", err, so, kepWhere(g.Group, o.Environ))
		}
		return p.fail("no plugin found: neither an executable at '%s' nor a Go plugin at '%s' nor a KEP-993 plugin %s", path, so, kepWhere(g.Group, o.Environ))
	}
	d, err := fileDigest(path)
	if err != nil {
		return p.fail("%v", err)
	}
	p.digest = d
	if s := resource.LookupString(c.Object.Object(), "argsOneLiner"); s != "" {
		args, err := shlex.Split(s)
		if err != nil {
			return p.fail("argsOneLiner: %v", err)
		}
		p.args = args
	}
	if f := resource.LookupString(c.Object.Object(), "argsFromFile"); f != "" {
		data, err := c.Read(f)
		if err != nil {
			return p.fail("argsFromFile: %v", err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimLeft(line, " "); line != "" {
				p.args = append(p.args, line)
			}
		}
	}
	var extra []string
	if s := "KUSTOMIZE_PLUGIN_CONFIG_STRING=" + string(p.config); len(s) <= maxEnvString {
		extra = append(extra, s)
	}
	if s := "KUSTOMIZE_PLUGIN_CONFIG_ROOT=" + c.Dir; len(s) <= maxEnvString {
		extra = append(extra, s)
	}
	p.env = environ(o.Environ, c.Dir, extra...)
	return nil
}

// pluginHome is kustomize's plugin home: the first existing directory of
// $KUSTOMIZE_PLUGIN_HOME (a list), $XDG_CONFIG_HOME/kustomize/plugin,
// $HOME/.config/kustomize/plugin and $HOME/kustomize/plugin; when none
// exists, the XDG one (for messages).
func pluginHome(environ []string) string {
	env := map[string]string{}
	for _, e := range environ {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	home := env["HOME"]
	if home == "" {
		home = "~"
	}
	var candidates []string
	if h := env["KUSTOMIZE_PLUGIN_HOME"]; h != "" {
		candidates = append(candidates, filepath.SplitList(h)...)
	}
	xdg := filepath.Join(home, ".config", "kustomize", "plugin")
	if x := env["XDG_CONFIG_HOME"]; x != "" {
		xdg = filepath.Join(x, "kustomize", "plugin")
		candidates = append(candidates, xdg)
	}
	candidates = append(candidates, filepath.Join(home, ".config", "kustomize", "plugin"), filepath.Join(home, "kustomize", "plugin"))
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
	}
	return xdg
}

// invokeExec runs a legacy exec plugin: the config in a temporary file
// named by the first argument, the input objects (with their IDs) on stdin.
func (p *plugin) invokeExec(ctx context.Context, in []*resource.Resource) ([]*resource.Resource, error) {
	f, err := os.CreateTemp("", "kust-plugin-config-")
	if err != nil {
		return nil, p.fail("creating the config file: %v", err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(p.config)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, p.fail("writing the config file: %v", err)
	}
	var stdin []byte
	if in != nil {
		objs, err := withIDs(in)
		if err != nil {
			return nil, p.fail("%v", err)
		}
		for i, o := range objs {
			b, err := output.MarshalValue(o)
			if err != nil {
				return nil, p.fail("encoding its input: %v", err)
			}
			if i > 0 {
				stdin = append(stdin, "---\n"...)
			}
			stdin = append(stdin, b...)
		}
	}
	out, stderr, err := p.exec(ctx, append([]string{f.Name()}, p.args...), stdin)
	if err != nil {
		return nil, err
	}
	rs, err := resyaml.Decode(out)
	if err != nil {
		return nil, p.fail("its output is not valid YAML objects: %v%s%s", err, firstLines("output", out), firstLines("stderr", stderr))
	}
	return rs, nil
}

// firstLines quotes the first lines of a plugin's stream for an error.
func firstLines(what string, b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	const max = 10
	more := ""
	if len(lines) > max {
		more = fmt.Sprintf("\n  ... (%d more lines)", len(lines)-max)
		lines = lines[:max]
	}
	const maxLine = 1000
	for i, l := range lines {
		if len(l) > maxLine {
			lines[i] = fmt.Sprintf("%s... (%d more bytes on this line)", l[:maxLine], len(l)-maxLine)
		}
	}
	if what != "" {
		what = "\n" + what + ":"
	}
	return fmt.Sprintf("%s\n  %s%s", what, strings.Join(lines, "\n  "), more)
}
