// Package helm builds the `helm template` command Argo CD v3.6.1's
// repo-server runs for a Helm source (reposerver/repository.go
// helmTemplate, util/helm/cmd.go): release name, namespace, kube and API
// versions, --set/--set-string/--set-file with Argo CD's comma escaping,
// value files resolved relative to the app path, from the repository
// root ("/...") or from a ref source ("$ref/..."), with doublestar globs,
// the explicit-entry rule and the no-match error, then values or
// valuesObject as a last values file, --include-crds unless skipCrds,
// --skip-tests. It is a pure function over the checkouts (io/fs): it runs
// nothing.
//
// It imports kpipe's internal/argocd/app, go.yaml.in/yaml/v2 and
// github.com/bmatcuk/doublestar/v4 (the glob library Argo CD uses, so
// that "**" and the match order are the same).
package helm

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	yaml "go.yaml.in/yaml/v2"

	"github.com/kpipe/kpipe/internal/argocd/app"
)

// ValuesPlaceholder stands in Args for the temporary file holding values
// or valuesObject (Argo CD reports it so too).
const ValuesPlaceholder = "<temp file with values from source.helm.values/valuesObject>"

// Request is what the command depends on.
type Request struct {
	// Checkout is the source's repository; AppDir the app path in it
	// (slash, relative to its root).
	Checkout app.Checkout
	AppDir   string
	Source   *app.ApplicationSource
	// InstanceName is the Application's instance name; the release is
	// its name part unless releaseName is set.
	InstanceName string
	// Namespace is the destination namespace.
	Namespace string
	// KubeVersion and APIVersions are the cluster's (the source's own
	// options win).
	KubeVersion string
	APIVersions []string
	Env         app.Env
	// Refs maps "$ref" to its source (app.RefSources), RefCheckouts a
	// normalized repoURL (app.NormalizeGitURL) to its checkout.
	Refs         map[string]app.RefTarget
	RefCheckouts map[string]app.Checkout
	// ValuesFileSchemes are the URL schemes a value file may use
	// (repo-server helm options; Argo CD's default is https, http).
	ValuesFileSchemes []string
}

// File is a resolved value file or --set-file path.
type File struct {
	Checkout app.Checkout
	Path     string // slash path relative to Checkout's root
	URL      string // set for a remote value file
}

func (f File) String() string {
	if f.URL != "" {
		return f.URL
	}
	return f.Checkout.Display(f.Path)
}

// Template is the command.
type Template struct {
	// Args are helm's arguments after "helm", paths named by their
	// checkout's Display, the values file as ValuesPlaceholder.
	Args []string
	// Release is the release name.
	Release string
	// Values is the content of the values file (values or valuesObject
	// as YAML), nil when neither is set.
	Values []byte
	// ValueFiles and SetFiles are the files helm will read.
	ValueFiles []File
	SetFiles   []File
	// Version is the helm version asked for ("", "v3", "v4").
	Version string
}

// CheckRefs is the check the repo-server makes before generating a
// multi-source Helm source: every "$ref/..." value file or file
// parameter must name a ref source that is not a chart.
func CheckRefs(hasMultipleSources bool, h *app.ApplicationSourceHelm, refs map[string]app.RefTarget) error {
	if !hasMultipleSources || h == nil {
		return nil
	}
	cands := append([]string{}, h.ValueFiles...)
	for _, fp := range h.FileParameters {
		cands = append(cands, fp.Path)
	}
	for _, v := range cands {
		if !strings.HasPrefix(v, "$") {
			continue
		}
		ref, _, _ := strings.Cut(v, "/")
		t, ok := refs[ref]
		if !ok {
			if len(refs) == 0 {
				return fmt.Errorf("source referenced %q, but no source has a 'ref' field defined", ref)
			}
			var keys []string
			for k := range refs {
				keys = append(keys, k)
			}
			sort.Strings(keys) // Argo CD: Go map order
			return fmt.Errorf("source referenced %q, which is not one of the available sources (%s)", ref, strings.Join(keys, ", "))
		}
		if t.Chart != "" {
			return errors.New("source has a 'chart' field defined, but Helm charts are not yet not supported for 'ref' sources")
		}
	}
	return nil
}

// Command builds the helm template command. Errors are worded as the
// repo-server's.
func Command(r Request) (*Template, error) {
	name := r.InstanceName
	if _, n, ok := strings.Cut(name, "_"); ok {
		name = n
	}
	kubeVersion, err := app.ParseKubeVersion(r.Source.KubeVersionOrDefault(r.KubeVersion))
	if err != nil {
		return nil, fmt.Errorf("could not parse kubernetes version %s: %w", r.Source.KubeVersionOrDefault(r.KubeVersion), err)
	}
	t := &Template{Release: name}
	ns := r.Namespace
	set, setString := map[string]string{}, map[string]string{}
	setFile := map[string]File{}
	var extra bool
	h := r.Source.Helm
	if h != nil {
		t.Version = h.Version
		if h.ReleaseName != "" {
			t.Release = h.ReleaseName
		}
		if h.Namespace != "" {
			ns = h.Namespace
		}
		if t.ValueFiles, err = r.valueFiles(h.ValueFiles, h.IgnoreMissingValueFiles); err != nil {
			return nil, fmt.Errorf("error resolving helm value files: %w", err)
		}
		if !h.ValuesIsEmpty() {
			if t.Values, err = valuesYAML(h); err != nil {
				return nil, err
			}
			extra = true
		}
		for _, p := range h.Parameters {
			if p.ForceString {
				setString[p.Name] = p.Value
			} else {
				set[p.Name] = p.Value
			}
		}
		for _, p := range h.FileParameters {
			var f File
			if ref, ok := r.refOf(p.Path); ok {
				f, err = r.refFile(p.Path, ref)
				if err != nil {
					return nil, fmt.Errorf("error resolving set-file path: %w", err)
				}
			} else {
				f, err = r.resolve(r.Checkout, r.AppDir, r.Env.Envsubst(p.Path))
				if err != nil {
					return nil, fmt.Errorf("error resolving helm value file path: %w", err)
				}
			}
			setFile[p.Name] = f
			t.SetFiles = append(t.SetFiles, f)
		}
		switch h.Version {
		case "", "v3", "v4":
		default:
			return nil, fmt.Errorf("error initializing helm app object: failed to create new helm command: helm version '%s' is not supported", h.Version)
		}
	}
	if t.Release == "" {
		t.Release = r.InstanceName
	}
	for k, v := range set {
		set[k] = r.Env.Envsubst(v)
	}
	for k, v := range setString {
		setString[k] = r.Env.Envsubst(v)
	}
	args := []string{"template", ".", "--name-template", t.Release}
	if ns != "" {
		args = append(args, "--namespace", ns)
	}
	if kubeVersion != "" {
		args = append(args, "--kube-version", kubeVersion)
	}
	// Argo CD writes these in Go map order (random); kpipe sorts them.
	for _, kv := range sortedPairs(set) {
		args = append(args, "--set", kv)
	}
	for _, kv := range sortedPairs(setString) {
		args = append(args, "--set-string", kv)
	}
	files := map[string]string{}
	for k, f := range setFile {
		files[k] = f.String()
	}
	for _, kv := range sortedPairs(files) {
		args = append(args, "--set-file", kv)
	}
	for _, f := range t.ValueFiles {
		args = append(args, "--values", f.String())
	}
	if extra {
		args = append(args, "--values", ValuesPlaceholder)
	}
	for _, v := range r.Source.APIVersionsOrDefault(r.APIVersions) {
		args = append(args, "--api-versions", v)
	}
	if h == nil || !h.SkipCrds {
		args = append(args, "--include-crds")
	}
	if h != nil && h.SkipSchemaValidation {
		args = append(args, "--skip-schema-validation")
	}
	if h != nil && h.SkipTests {
		args = append(args, "--skip-tests")
	}
	t.Args = args
	return t, nil
}

// CommandLine is the command as Argo CD writes it ("helm template ..."),
// the checkout labels in roots kept unquoted, the values file named by
// values (Argo CD reports ValuesPlaceholder; its error messages the
// temporary file's path).
func (t *Template) CommandLine(values string, roots ...string) string {
	args := make([]string, len(t.Args))
	for i, a := range t.Args {
		if a == ValuesPlaceholder {
			a = values
		}
		args[i] = a
	}
	return app.CommandLine(append([]string{"helm"}, args...), append([]string{values}, roots...)...)
}

// Roots are the labels of the checkouts the command names.
func (t *Template) Roots() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range append(append([]File{}, t.ValueFiles...), t.SetFiles...) {
		if f.URL == "" && !seen[f.Checkout.Root] {
			seen[f.Checkout.Root] = true
			out = append(out, f.Checkout.Root)
		}
	}
	return out
}

// sortedPairs writes k=v with Argo CD's escaping, sorted.
func sortedPairs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+CleanSetParameter(v))
	}
	sort.Strings(out)
	return out
}

// CleanSetParameter escapes a --set value as Argo CD does: unless it is a
// list ("{...}"), every comma not after a backslash gets one.
func CleanSetParameter(v string) string {
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		return v
	}
	var b strings.Builder
	var prev rune
	for _, c := range v {
		if c == ',' && prev != '\\' {
			b.WriteString(`\,`)
		} else {
			b.WriteRune(c)
		}
		prev = c
	}
	return b.String()
}

// valuesYAML is ValuesYAML: valuesObject as YAML (sigs.k8s.io/yaml's
// JSON to YAML), else values as written.
func valuesYAML(h *app.ApplicationSourceHelm) ([]byte, error) {
	raw := strings.TrimSpace(string(h.ValuesObject))
	if raw == "" || raw == "null" {
		return []byte(h.Values), nil
	}
	var tree any
	if err := yaml.Unmarshal([]byte(raw), &tree); err != nil {
		return nil, err
	}
	return yaml.Marshal(tree)
}

func (r Request) refOf(raw string) (app.RefTarget, bool) {
	if !strings.HasPrefix(raw, "$") {
		return app.RefTarget{}, false
	}
	ref, _, _ := strings.Cut(raw, "/")
	t, ok := r.Refs[ref]
	return t, ok
}

// refFile resolves "$ref/rest" in the ref source's checkout, from its
// root.
func (r Request) refFile(raw string, ref app.RefTarget) (File, error) {
	co, ok := r.RefCheckouts[app.NormalizeGitURL(ref.RepoURL)]
	if !ok {
		return File{}, fmt.Errorf("failed to find repo %q", ref.RepoURL)
	}
	parts := strings.Split(raw, "/")
	parts[0] = ""
	f, err := r.resolve(co, ".", r.Env.Envsubst(strings.Join(parts, "/")))
	if err != nil {
		return File{}, fmt.Errorf("error resolving value file path: %w", err)
	}
	return f, nil
}

// resolve is ResolveValueFilePathOrUrl: a URL with an allowed scheme is
// kept; a path is relative to dir, or to the root if it starts with "/";
// a final symlink is followed; outside the root, or the root itself, is
// refused.
func (r Request) resolve(co app.Checkout, dir, v string) (File, error) {
	if u, err := url.Parse(v); err == nil && u.Scheme != "" {
		for _, s := range r.ValuesFileSchemes {
			if strings.EqualFold(strings.TrimSpace(s), u.Scheme) {
				return File{URL: v}, nil
			}
		}
		return File{}, fmt.Errorf("the URL scheme '%s' is not allowed", u.Scheme)
	}
	p := v
	if strings.HasPrefix(p, "/") {
		p = path.Clean("." + p)
	} else {
		p = path.Join(dir, p)
	}
	p, err := followLinks(co.FS, p, 10)
	if err != nil {
		return File{}, errors.New("internal error: failed to resolve path. Check logs for more details")
	}
	if p == "." {
		return File{}, errors.New("internal error: failed to resolve path. Check logs for more details")
	}
	if p == ".." || strings.HasPrefix(p, "../") {
		return File{}, fmt.Errorf("file '%s' resolved to outside repository root", v)
	}
	return File{Checkout: co, Path: p}, nil
}

// followLinks resolves p while it is a symlink (relative targets from
// its directory), as resolveSymbolicLinkRecursive does.
func followLinks(fsys fs.FS, p string, depth int) (string, error) {
	rl, ok := fsys.(fs.ReadLinkFS)
	if !ok || p == ".." || strings.HasPrefix(p, "../") {
		return p, nil
	}
	target, err := rl.ReadLink(p)
	if err != nil {
		return p, nil // not a symlink
	}
	if depth == 0 {
		return "", errors.New("maximum nesting level reached")
	}
	if strings.HasPrefix(target, "/") {
		return "..", nil // absolute: outside the checkout
	}
	return followLinks(fsys, path.Join(path.Dir(p), target), depth-1)
}

// valueFiles is getResolvedValueFiles.
func (r Request) valueFiles(raw []string, ignoreMissing bool) ([]File, error) {
	key := func(f File) string { return f.Checkout.Root + "\x00" + f.Path + "\x00" + f.URL }
	explicit := map[string]bool{}
	for _, v := range raw {
		var f File
		var err error
		if ref, ok := r.refOf(v); ok {
			f, err = r.refFile(v, ref)
		} else {
			f, err = r.resolve(r.Checkout, r.AppDir, r.Env.Envsubst(v))
		}
		if err == nil && !isGlob(f.String()) {
			explicit[key(f)] = true
		}
	}
	var out []File
	seen := map[string]bool{}
	add := func(f File) {
		if !seen[key(f)] {
			seen[key(f)] = true
			out = append(out, f)
		}
	}
	for _, v := range raw {
		var f File
		var err error
		if ref, ok := r.refOf(v); ok {
			if f, err = r.refFile(v, ref); err != nil {
				return nil, fmt.Errorf("error resolving value file path: %w", err)
			}
		} else if f, err = r.resolve(r.Checkout, r.AppDir, r.Env.Envsubst(v)); err != nil {
			return nil, fmt.Errorf("error resolving value file path: %w", err)
		}
		if f.URL == "" && isGlob(f.Path) {
			matches, err := doublestar.Glob(f.Checkout.FS, f.Path)
			if err != nil {
				return nil, fmt.Errorf("error expanding glob pattern %q: %w", v, err)
			}
			if len(matches) == 0 {
				if ignoreMissing {
					continue
				}
				return nil, &GlobNoMatchError{Pattern: v}
			}
			for _, m := range matches {
				if real, err := followLinks(f.Checkout.FS, m, 10); err != nil || real == ".." || strings.HasPrefix(real, "../") {
					return nil, fmt.Errorf("glob pattern %q: glob match %q resolved to outside repository root", v, f.Checkout.Display(m))
				}
				g := File{Checkout: f.Checkout, Path: m}
				if !explicit[key(g)] {
					add(g)
				}
			}
			continue
		}
		if f.URL == "" {
			if _, err := fs.Stat(f.Checkout.FS, f.Path); errors.Is(err, fs.ErrNotExist) && ignoreMissing {
				continue
			}
		}
		add(f)
	}
	return out, nil
}

// GlobNoMatchError is a value file glob that matched nothing (gRPC
// NotFound in Argo CD).
type GlobNoMatchError struct{ Pattern string }

func (e *GlobNoMatchError) Error() string {
	return fmt.Sprintf("values file glob %q matched no files", e.Pattern)
}

func isGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// ChartYAMLCheck is the first thing the repo-server reads of a Helm
// source, its Chart.yaml (for dependency repositories): missing, it is
// Argo CD's error.
func ChartYAMLCheck(co app.Checkout, appDir string) error {
	p := path.Join(appDir, "Chart.yaml")
	if _, err := fs.ReadFile(co.FS, p); err != nil {
		msg := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			msg = "open " + co.Display(p) + ": " + pe.Err.Error()
		}
		return fmt.Errorf("error getting helm repos: error retrieving helm dependency repos: error reading helm chart from %s: %s", co.Display(p), msg)
	}
	return nil
}
