package plugins

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

// modeKEP is a KEP-993 plugin executable: named after the config's API
// group, with `generate` and `transform` subcommands.
const modeKEP = "kep-993"

// kepNotSupported is the exit status with which a KEP-993 plugin says it
// does not support a subcommand; it is not an error.
const kepNotSupported = 127

// errNotSupported is returned by a run of a plugin that declined it (a
// KEP-993 plugin exiting with status 127): the objects stay as they are.
var errNotSupported = errors.New("the plugin does not support this operation")

// kepDirs are the directories searched for a KEP-993 plugin before PATH:
// $XDG_CONFIG_HOME/kustomize/plugins ($HOME/.config when XDG_CONFIG_HOME is
// not set), as KEP-993 places them. (kustomize's own plugin home,
// `kustomize/plugin`, holds `<group>/<version>/...` directories, so an
// executable named after the group cannot live there.)
func kepDirs(environ []string) []string {
	env := map[string]string{}
	for _, e := range environ {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	base := env["XDG_CONFIG_HOME"]
	if base == "" {
		if env["HOME"] == "" {
			return nil
		}
		base = filepath.Join(env["HOME"], ".config")
	}
	return []string{filepath.Join(base, "kustomize", "plugins")}
}

// kepWhereDir names the KEP-993 plugin directory for the error messages.
func kepWhereDir(environ []string) string {
	if d := kepDirs(environ); len(d) > 0 {
		return d[0]
	}
	return "$XDG_CONFIG_HOME/kustomize/plugins"
}

// kepWhere says where a KEP-993 plugin for group was looked for.
func kepWhere(group string, environ []string) string {
	if group == "" {
		return "(the config's apiVersion has no group to name one)"
	}
	if !isAPIGroup(group) {
		return "(the config's group '" + group + "' is not an API group with a dot, so none is looked for)"
	}
	where := "on PATH"
	if d := kepDirs(environ); len(d) > 0 {
		where = "in " + d[0] + " or on PATH"
	}
	return "named '" + group + "' " + where
}

// isAPIGroup reports whether group can be a named API group: a DNS
// subdomain (lowercase letters, digits, '-' and '.') with at least one dot,
// as every API group but the core one is. Only such a name is looked for as
// a KEP-993 plugin, so that `apiVersion: sh/v1` or `python3/v1` never
// selects a shell or an interpreter found on PATH.
func isAPIGroup(group string) bool {
	if len(group) > 253 || !strings.Contains(group, ".") {
		return false
	}
	for _, label := range strings.Split(group, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// configureKEP looks for a KEP-993 plugin for c; found is false when there
// is none. One found on PATH (rather than in the KEP-993 plugin directory,
// which the user fills) runs only with --enable-exec.
func (p *plugin) configureKEP(c Config, o Options) (found bool, err error) {
	group := c.Object.GVK().Group
	if !isAPIGroup(group) {
		return false, nil
	}
	path := ""
	for _, d := range kepDirs(o.Environ) {
		if cand := filepath.Join(d, group); checkExecutable(cand) == nil {
			path = cand
			break
		}
	}
	if path == "" {
		lp, ok := lookPath(group, o.Environ)
		if !ok {
			return false, nil
		}
		if !o.EnableExec {
			return true, p.fail("the KEP-993 plugin '%s' was found on PATH; running an executable found on PATH needs --enable-exec (or put it in %s)", lp, kepWhereDir(o.Environ))
		}
		path = lp
	}
	p.mode, p.path = modeKEP, path
	if p.digest, err = fileDigest(path); err != nil {
		return true, p.fail("%v", err)
	}
	p.configID = c.Object.ID()
	p.env = environ(o.Environ, c.Dir)
	return true, nil
}

// invokeKEP runs `PLUGIN generate` with the config on stdin, or
// `PLUGIN transform` with the config and then the objects (annotated with
// their IDs) on stdin. A transformer's output may echo the config: that
// object is dropped. Exit status 127 returns errNotSupported.
func (p *plugin) invokeKEP(ctx context.Context, in []*resource.Resource) ([]*resource.Resource, error) {
	stdin := append([]byte(nil), p.config...)
	sub := "generate"
	if in != nil {
		sub = "transform"
		objs, err := withIDs(in)
		if err != nil {
			return nil, p.fail("%v", err)
		}
		for _, o := range objs {
			b, err := output.MarshalValue(o)
			if err != nil {
				return nil, p.fail("encoding its input: %v", err)
			}
			stdin = append(append(stdin, "---\n"...), b...)
		}
	}
	out, stderr, err := p.exec(ctx, []string{sub}, stdin)
	if err != nil {
		return nil, err
	}
	rs, err := resyaml.Decode(out)
	if err != nil {
		return nil, p.fail("its output is not valid YAML objects: %v%s%s", err, firstLines("output", out), firstLines("stderr", stderr))
	}
	if in == nil {
		return rs, nil
	}
	kept := rs[:0]
	for _, r := range rs {
		if !r.ID().Equals(p.configID) {
			kept = append(kept, r)
		}
	}
	return kept, nil
}
