package helmrelease

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// TemplateOptions say how to run `helm template` for a HelmRelease.
type TemplateOptions struct {
	// Helm is the helm executable (kpipe's reference is v3.10.2); "helm"
	// when empty.
	Helm string
	// Chart is the chart: a directory or a packaged .tgz, as the chart's
	// source left it (see LocalChart and Repository.Pull).
	Chart string
	// Dir is the directory the values file is to be written in (the
	// caller makes it, writes Files, runs Args, removes it).
	Dir string
	// Upgrade renders what an upgrade applies (spec.upgrade's CRD policy
	// and disableHooks, .Release.IsUpgrade) instead of an install.
	Upgrade bool
	// KubeVersion and APIVersions are the cluster's (--kube-version,
	// --api-versions); helm's defaults when empty.
	KubeVersion string
	APIVersions []string
}

// Command is a `helm template` run: write Files, run Args.
type Command struct {
	// Args is the argv, Args[0] the helm executable.
	Args []string
	// Files are the files to write before running, by path (under Dir).
	Files map[string][]byte
	// Notes say what of the release this command does not render as
	// helm-controller would (post-renderers, options helm v3.10.2 lacks).
	Notes []string
}

// ValuesFile is the name of the values file in TemplateOptions.Dir.
const ValuesFile = "values.yaml"

// Template returns the `helm template` command that renders what
// helm-controller installs for hr with values (Values' result):
//
//	helm template RELEASE CHART --namespace NS --values DIR/values.yaml
//	  [--include-crds] [--skip-tests] [--no-hooks] [--is-upgrade]
//	  [--kube-version V] [--api-versions A]... [--set PATH=INT]...
//
// RELEASE and NS are ReleaseName and ReleaseNamespace; --include-crds
// unless the CRD policy is Skip (helm-controller applies the chart's CRDs
// itself before the release, which never holds them); --skip-tests unless
// spec.test.enable (helm tests are hooks helm-controller runs only then);
// --no-hooks with disableHooks. The values file holds values as JSON (a
// YAML document helm reads back to the same values); integers that
// helm's --set parser made int64 (targetPath values) would come back
// float64 from a file, so they are set again, at their own paths, with
// --set, which types them int64 as the controller's values have them
// (`{{ .Values.x }}` prints 5000000, not 5e+06).
func Template(hr *HelmRelease, values map[string]any, o TemplateOptions) (*Command, error) {
	if o.Chart == "" || o.Dir == "" {
		return nil, fmt.Errorf("HelmRelease %s: no chart or directory to render it with", hr.id())
	}
	ns := hr.ReleaseNamespace()
	if ns == "" {
		return nil, fmt.Errorf("HelmRelease %s has no namespace (a cluster would refuse it)", hr.id())
	}
	policy, err := hr.CRDPolicy(o.Upgrade)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s: %w", hr.id(), err)
	}
	file, ints, err := EncodeValues(values)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s: %w", hr.id(), err)
	}
	helm := o.Helm
	if helm == "" {
		helm = "helm"
	}
	valuesPath := filepath.Join(o.Dir, ValuesFile)
	args := []string{helm, "template", hr.ReleaseName(), o.Chart, "--namespace", ns, "--values", valuesPath}
	if policy != "Skip" {
		args = append(args, "--include-crds")
	}
	if hr.Spec.Test == nil || !hr.Spec.Test.Enable {
		args = append(args, "--skip-tests")
	}
	var notes []string
	disableHooks, disableSchema := false, false
	if o.Upgrade {
		if u := hr.Spec.Upgrade; u != nil {
			disableHooks, disableSchema = u.DisableHooks, u.DisableSchemaValidation
			if u.PreserveValues {
				notes = append(notes, "upgrade.preserveValues reuses the values of the release in the cluster")
			}
		}
	} else if i := hr.Spec.Install; i != nil {
		disableHooks, disableSchema = i.DisableHooks, i.DisableSchemaValidation
	}
	if disableHooks {
		args = append(args, "--no-hooks")
	}
	if disableSchema {
		notes = append(notes, "disableSchemaValidation: helm v3.10.2 always validates values against the chart's schema")
	}
	if o.Upgrade {
		args = append(args, "--is-upgrade")
	}
	if o.KubeVersion != "" {
		args = append(args, "--kube-version", o.KubeVersion)
	}
	for _, a := range o.APIVersions {
		args = append(args, "--api-versions", a)
	}
	for _, set := range ints {
		args = append(args, "--set", set)
	}
	if len(hr.Spec.PostRenderers) > 0 {
		notes = append(notes, fmt.Sprintf("%d post-renderer(s) to apply to the output", len(hr.Spec.PostRenderers)))
	}
	return &Command{Args: args, Files: map[string][]byte{valuesPath: file}, Notes: notes}, nil
}

// EncodeValues writes values as a values file helm reads back (with
// sigs.k8s.io/yaml, as `helm template --values` does) to the same values,
// and lists as `--set` arguments (PATH=INT) the int64 integers a file
// cannot carry (it reads every number as float64), sorted. A string that
// is not valid UTF-8 cannot be carried by a file either: it is an error.
func EncodeValues(values map[string]any) (file []byte, sets []string, err error) {
	if values == nil {
		values = map[string]any{}
	}
	if err := checkValues(values, "", true, &sets); err != nil {
		return nil, nil, err
	}
	sort.Strings(sets)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(values); err != nil {
		return nil, nil, fmt.Errorf("encoding the values: %w", err)
	}
	return b.Bytes(), sets, nil
}

// checkValues walks v, collecting the --set arguments of its int64
// integers; path is v's path in --set syntax, reachable false when --set
// cannot name it (an empty key on the way: --set ignores empty keys).
func checkValues(v any, path string, reachable bool, sets *[]string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !utf8.ValidString(k) {
				return fmt.Errorf("the values key %q under %q is not valid UTF-8: a values file cannot carry it", k, path)
			}
			p := escapeKey(k)
			if path != "" {
				p = path + "." + p
			}
			if err := checkValues(x, p, reachable && k != "", sets); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range v {
			if err := checkValues(x, path+"["+strconv.Itoa(i)+"]", reachable, sets); err != nil {
				return err
			}
		}
	case int64:
		if !reachable {
			return fmt.Errorf("the integer %d at %q cannot be passed to helm (--set ignores empty keys)", v, path)
		}
		*sets = append(*sets, path+"="+strconv.FormatInt(v, 10))
	case string:
		if !utf8.ValidString(v) {
			return fmt.Errorf("the value at %q is not valid UTF-8: a values file cannot carry it", path)
		}
	case float64, bool, nil, json.Number:
	default:
		return fmt.Errorf("the value at %q has the unexpected type %T", path, v)
	}
	return nil
}

// escapeKey escapes what helm's --set parser reads as syntax in a key.
func escapeKey(k string) string {
	var b strings.Builder
	for _, r := range k {
		switch r {
		case '\\', '=', '[', ']', ',', '.':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
