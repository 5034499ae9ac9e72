package plugins

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
)

// The annotations that carry a KRM function spec, newest first, and the
// legacy annotation that names only a container image.
var (
	functionAnnotations = []string{"config.kubernetes.io/function", "config.k8s.io/function"}
	containerAnnotation = "config.kubernetes.io/container"
)

// fnSpec is a KRM function spec.
type fnSpec struct {
	Exec struct {
		Path string   `yaml:"path"`
		Args []string `yaml:"args"`
		Env  []string `yaml:"envs"`
	} `yaml:"exec"`
	Container struct {
		Image   string   `yaml:"image"`
		Env     []string `yaml:"envs"`
		Network bool     `yaml:"network"`
	} `yaml:"container"`
	Starlark map[string]any `yaml:"starlark"`
}

// functionSpec reads the KRM function spec of a config, if it has one.
func functionSpec(c *resource.Resource) (fnSpec, bool, error) {
	var spec fnSpec
	ann := c.Annotations()
	for _, key := range functionAnnotations {
		if v := ann[key]; v != "" {
			if err := yaml.Unmarshal([]byte(v), &spec); err != nil {
				return spec, true, fmt.Errorf("annotation %s is not a function spec: %v", key, err)
			}
			return spec, true, nil
		}
	}
	if v, ok := resource.Lookup(c.Object(), "metadata", "configFn"); ok && v != nil {
		b, err := output.MarshalValue(v)
		if err == nil {
			err = yaml.Unmarshal(b, &spec)
		}
		if err != nil {
			return spec, true, fmt.Errorf("metadata.configFn is not a function spec: %v", err)
		}
		return spec, true, nil
	}
	if img := ann[containerAnnotation]; img != "" {
		spec.Container.Image = img
		return spec, true, nil
	}
	return spec, false, nil
}

// configureFunction prepares a KRM function run.
func (p *plugin) configureFunction(c Config, spec fnSpec, o Options) error {
	fc := resource.CopyMap(c.Object.Object())
	ann, err := resource.EnsureMap(fc, "metadata", "annotations")
	if err != nil {
		return p.fail("%v", err)
	}
	ann[localConfigAnnotation] = "true"
	p.fnConfig = fc
	switch {
	case spec.Exec.Path != "":
		p.mode = modeFnExec
		p.path = spec.Exec.Path
		if !o.EnableExec {
			return p.fail("running the KRM exec function '%s' needs --enable-exec (kustomize skips it silently without the flag; kpipe refuses to drop it)", spec.Exec.Path)
		}
		path := spec.Exec.Path
		if !strings.Contains(path, "/") {
			lp, ok := lookPath(path, o.Environ)
			if !ok {
				return p.fail("exec function '%s': not found on PATH", path)
			}
			path = lp
		}
		path = absIn(c.Dir, path)
		p.path = path
		if err := checkExecutable(path); err != nil {
			return p.fail("exec function: %v", err)
		}
		if p.digest, err = fileDigest(path); err != nil {
			return p.fail("%v", err)
		}
		p.args = spec.Exec.Args
		p.env = environ(o.Environ, c.Dir, envEntries(o.Environ, append(append([]string(nil), spec.Exec.Env...), o.Env...))...)
		return nil
	case spec.Container.Image != "":
		p.mode = modeContainer
		p.image = spec.Container.Image
		if spec.Container.Network {
			return p.fail("the function needs network access, which kpipe does not give functions (--network is not supported yet)")
		}
		engine := ""
		for _, e := range []string{"docker", "podman"} {
			if lp, ok := lookPath(e, o.Environ); ok {
				engine = lp
				break
			}
		}
		if engine == "" {
			return p.fail("container function '%s': no container engine found (looked for docker and podman on PATH)", p.image)
		}
		p.path = engine
		if p.digest, err = fileDigest(engine); err != nil {
			return p.fail("%v", err)
		}
		p.args = []string{"run", "--rm", "-i", "--network", "none", "--user", "nobody", "--security-opt=no-new-privileges"}
		for _, e := range envEntries(o.Environ, append(append([]string(nil), spec.Container.Env...), o.Env...)) {
			p.args = append(p.args, "-e", e)
		}
		p.args = append(p.args, p.image)
		p.env = environ(o.Environ, c.Dir)
		return nil
	case spec.Starlark != nil:
		return p.fail("starlark functions are not supported by kpipe")
	default:
		return p.fail("the function spec names neither exec.path nor container.image")
	}
}

// envEntries resolves KEY=VALUE and KEY (exported from environ) entries to
// KEY=VALUE; a KEY not set in environ is left out.
func envEntries(environ, entries []string) []string {
	var out []string
	for _, e := range entries {
		if strings.Contains(e, "=") {
			out = append(out, e)
			continue
		}
		for _, kv := range environ {
			if k, _, _ := strings.Cut(kv, "="); k == e {
				out = append(out, kv)
			}
		}
	}
	return out
}

// invokeFunction runs a KRM function over the input objects (for a
// generator, over its own config) and returns the objects it printed.
func (p *plugin) invokeFunction(ctx context.Context, in []*resource.Resource) ([]*resource.Resource, error) {
	var items []map[string]any
	if in == nil {
		items = []map[string]any{resource.CopyMap(p.fnConfig)}
	} else {
		var err error
		if items, err = withIDs(in); err != nil {
			return nil, p.fail("%v", err)
		}
	}
	list := make([]any, len(items))
	for i, it := range items {
		ann, err := resource.EnsureMap(it, "metadata", "annotations")
		if err != nil {
			return nil, p.fail("%v", err)
		}
		ann[indexAnnotation] = strconv.Itoa(i)
		ann[legacyIndexAnnotation] = strconv.Itoa(i)
		ann[fnIDAnnotation] = strconv.Itoa(i + 1)
		list[i] = it
	}
	stdin, err := output.MarshalValue(map[string]any{
		"apiVersion":     resourceListAPIVersion,
		"kind":           "ResourceList",
		"items":          list,
		"functionConfig": p.fnConfig,
	})
	if err != nil {
		return nil, p.fail("encoding its input: %v", err)
	}
	out, stderr, err := p.exec(ctx, p.args, stdin)
	if err != nil {
		// A function that fails may have said why in its results.
		if lines, _ := resultLines(out); len(lines) > 0 {
			return nil, fmt.Errorf("%w\nresults:\n  %s", err, strings.Join(lines, "\n  "))
		}
		return nil, err
	}
	if lines, failed := resultLines(out); failed {
		return nil, p.fail("the function reported errors:\n  %s", strings.Join(lines, "\n  "))
	}
	rs, err := resyaml.Decode(out)
	if err != nil {
		return nil, p.fail("its output is not valid YAML objects: %v%s%s", err, firstLines("output", out), firstLines("stderr", stderr))
	}
	for _, r := range rs {
		for _, a := range []string{indexAnnotation, legacyIndexAnnotation, fnIDAnnotation} {
			r.RemoveAnnotation(a)
		}
		// Like kustomize's function runner, give every object without a
		// path one; the build strips path annotations from its output.
		ann := r.Annotations()
		if ann[pathAnnotation] == "" && ann[legacyPathAnnotation] == "" {
			p := strings.ToLower(r.Kind()) + "_" + r.Name() + ".yaml"
			if ns := r.Namespace(); ns != "" {
				p = ns + "/" + p
			}
			r.SetAnnotation(pathAnnotation, p)
			r.SetAnnotation(legacyPathAnnotation, p)
		}
	}
	return rs, nil
}

// resultLines renders the results of a ResourceList a function printed,
// and says whether one has severity error (or none, which the KRM
// functions specification reads as error).
func resultLines(out []byte) (lines []string, failed bool) {
	vals, err := resyaml.DecodeValues(out)
	if err != nil || len(vals) != 1 {
		return nil, false
	}
	m, ok := vals[0].(map[string]any)
	if !ok || m["kind"] != "ResourceList" {
		return nil, false
	}
	results, _ := m["results"].([]any)
	for _, r := range results {
		m, _ := r.(map[string]any)
		sev := resource.LookupString(m, "severity")
		if sev == "" {
			sev = "error"
		}
		if sev == "error" {
			failed = true
		}
		line := fmt.Sprintf("[%s] %s", sev, resource.LookupString(m, "message"))
		if ref := resource.LookupMap(m, "resourceRef"); ref != nil {
			line += fmt.Sprintf(" (%s %s", resource.LookupString(ref, "kind"), resource.LookupString(ref, "name"))
			if ns := resource.LookupString(ref, "namespace"); ns != "" {
				line += " in namespace " + ns
			}
			line += ")"
		}
		if f := resource.LookupString(m, "field", "path"); f != "" {
			line += " field " + f
		}
		if f := resource.LookupString(m, "file", "path"); f != "" {
			line += " file " + f
		}
		lines = append(lines, line)
	}
	return lines, failed
}

// ExecPath returns the path of the executable the KRM exec function
// config c runs, as written ("" when c is not one): a path with a slash
// is relative to the directory of the kustomization that lists c, a
// bare name is looked up on PATH.
func ExecPath(c *resource.Resource) string {
	spec, ok, err := functionSpec(c)
	if !ok || err != nil {
		return ""
	}
	return spec.Exec.Path
}
