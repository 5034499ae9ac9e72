package stages

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/internal/procgroup"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// HelmChartArgs configures one chart inflation, in the shape of the
// HelmChartInflationGenerator builtin plugin config: the kustomization's
// helmGlobals with one of its helmCharts entries.
type HelmChartArgs struct {
	loaders.HelmGlobals
	loaders.HelmChart
}

// HelmSettings are what a chart inflation takes from the build rather than
// from its config: the helm binary, the environment it runs in, and the
// --helm-* flags.
type HelmSettings struct {
	// Command is the helm command as given (--helm-command).
	Command string
	// Path is where Command was found, absolute.
	Path string
	// Digest is the hex SHA-256 of the file at Path.
	Digest string
	// Env is the environment helm runs in (kustomize passes its own).
	Env []string
	// EnvFingerprint covers everything in Env (and the files it names)
	// that can change helm's output: the HELM_* and XDG_* variables,
	// HOME, KUBECONFIG, and the digests of the kubeconfig files, from
	// which helm takes a default namespace.
	EnvFingerprint []string
	// APIVersions, KubeVersion and Debug are the --helm-api-versions,
	// --helm-kube-version and --helm-debug flags; a chart's own
	// apiVersions, kubeVersion and debug take precedence.
	APIVersions []string
	KubeVersion string
	Debug       bool
}

// ReadTree reads every file below a directory a stage's config names,
// through the build's loader.
type ReadTree func(path string) ([]loaders.TreeFile, error)

// Values merge modes of a chart's valuesInline.
const (
	valuesMergeMerge    = "merge"
	valuesMergeOverride = "override"
	valuesMergeReplace  = "replace"
)

// helmStage is the HelmChartInflationGenerator: it runs `helm template` on
// a local chart and adds the objects it renders. Its config holds the
// chart's files, the values files and the helm binary's digest, so Run
// works on a private copy in a temporary directory and never reads the
// user's tree; it runs the helm binary, whose digest is part of the
// fingerprint, in the environment fixed when the stage was configured.
type helmStage struct {
	name         string // the chart's name (its directory below chartHome)
	chartDir     string // the chart's directory as found, for messages
	chart        []loaders.TreeFile
	values       []byte   // the values file kustomize writes (-f, first)
	additional   [][]byte // additionalValuesFiles (-f, in order)
	addNames     []string
	releaseName  string
	namespace    string
	nameTemplate string
	apiVersions  []string
	kubeVersion  string
	includeCRDs  bool
	skipTests    bool
	skipHooks    bool
	debug        bool
	helm         HelmSettings
	fp           []byte
}

// NewHelmChartInflationGenerator returns the stage that inflates one local
// helm chart as kustomize's HelmChartInflationGenerator does. The chart is
// chartHome/name (chartHome/name-version/name when version and repo are
// set), chartHome defaulting to "charts" and relative paths to the
// kustomization root. Its files are read with readTree; the values file
// (default: the chart's values.yaml) and additionalValuesFiles with read.
// With valuesInline the values file is merged as valuesMerge says
// (override, the default: inline values win; merge: the file's values win;
// replace: the inline values alone) and helm gets the result.
func NewHelmChartInflationGenerator(args HelmChartArgs, h HelmSettings, read ReadFile, readTree ReadTree) (Stage, error) {
	if args.Name == "" {
		return nil, fmt.Errorf("chart name cannot be empty")
	}
	// helm reads the release and chart names as bare arguments: one that
	// starts with '-' would be taken for a flag (--post-renderer=...), so
	// kustomize v5.8.1+ refuses it.
	if strings.HasPrefix(args.ReleaseName, "-") {
		return nil, fmt.Errorf("releaseName must not start with '-', got %q", args.ReleaseName)
	}
	if strings.HasPrefix(args.Name, "-") {
		return nil, fmt.Errorf("chart name must not start with '-', got %q", args.Name)
	}
	switch args.ValuesMerge {
	case "":
		args.ValuesMerge = valuesMergeOverride
	case valuesMergeMerge, valuesMergeOverride, valuesMergeReplace:
	default:
		return nil, fmt.Errorf("valuesMerge must be one of %v", []string{valuesMergeMerge, valuesMergeOverride, valuesMergeReplace})
	}
	home := args.ChartHome
	if home == "" {
		home = "charts"
	}
	if args.Version != "" && args.Repo != "" {
		home = filepath.Join(home, args.Name+"-"+args.Version)
	}
	chartPath := filepath.Join(home, args.Name)
	chart, err := readTree(chartPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, loaders.ErrNotDirectory) {
		return nil, fmt.Errorf("reading chart %s: %w", chartPath, err)
	}
	if err != nil {
		if args.Repo == "" {
			return nil, fmt.Errorf("no repo specified for pull, no chart found at '%s': %w", chartPath, err)
		}
		// The build pulls a chart of a repository before it gets here (into
		// its cache, then named by ChartHome).
		return nil, fmt.Errorf("no chart found at '%s', and it was not pulled from its repository (%s): %w", chartPath, args.Repo, err)
	}
	s := &helmStage{
		name: args.Name, chartDir: chartPath, chart: chart,
		releaseName: args.ReleaseName, namespace: args.Namespace, nameTemplate: args.NameTemplate,
		apiVersions: args.ApiVersions, kubeVersion: args.KubeVersion,
		includeCRDs: args.IncludeCRDs, skipTests: args.SkipTests, skipHooks: args.SkipHooks,
		debug: args.Debug || h.Debug, helm: h,
	}
	if len(s.apiVersions) == 0 {
		s.apiVersions = h.APIVersions
	}
	if s.kubeVersion == "" {
		s.kubeVersion = h.KubeVersion
	}
	valuesFile := args.ValuesFile
	if valuesFile == "" {
		valuesFile = filepath.Join(chartPath, "values.yaml")
	}
	if s.values, err = helmValues(args, valuesFile, read); err != nil {
		return nil, err
	}
	for _, f := range args.AdditionalValuesFiles {
		data, err := read(f)
		if err != nil {
			return nil, fmt.Errorf("could not load additionalValuesFile: %w", err)
		}
		s.additional = append(s.additional, data)
		s.addNames = append(s.addNames, f)
	}
	s.fp = s.fingerprint()
	return s, nil
}

// helmChartInflationGeneratorFromConfig configures the generator from its
// builtin plugin config.
func helmChartInflationGeneratorFromConfig(data []byte, h HelmSettings, read ReadFile, readTree ReadTree) (Stage, error) {
	args, err := DecodeHelmChartArgs(data)
	if err != nil {
		return nil, err
	}
	return NewHelmChartInflationGenerator(args, h, read, readTree)
}

// DecodeHelmChartArgs reads a HelmChartInflationGenerator plugin config.
func DecodeHelmChartArgs(data []byte) (HelmChartArgs, error) {
	var args HelmChartArgs
	err := decodeLenientConfig(data, &args)
	return args, err
}

// helmValues returns the content of the values file helm is given first:
// the values file as it is, or, with valuesInline, its merge with them.
func helmValues(args HelmChartArgs, valuesFile string, read ReadFile) ([]byte, error) {
	if len(args.ValuesInline) == 0 {
		return read(valuesFile)
	}
	inline := any(args.ValuesInline)
	if args.ValuesMerge == valuesMergeReplace {
		return json.Marshal(inline)
	}
	data, err := read(valuesFile)
	if err != nil {
		return nil, err
	}
	file, err := parseValues(data)
	if err != nil {
		return nil, err
	}
	var merged any
	if args.ValuesMerge == valuesMergeOverride {
		merged, err = mergeValues(inline, file)
	} else {
		merged, err = mergeValues(file, copyValue(inline))
	}
	if err != nil {
		return nil, fmt.Errorf("could not merge values: %w", err)
	}
	out, err := json.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("could not write merged values: %w", err)
	}
	return out, nil
}

// copyValue deep-copies a JSON-like value.
func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = copyValue(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = copyValue(e)
		}
		return l
	}
	return v
}

// fingerprint covers the whole config: the chart's files, the values, the
// settings, the helm binary and its environment.
func (s *helmStage) fingerprint() []byte {
	digest := func(b []byte) string {
		d := sha256.Sum256(b)
		return hex.EncodeToString(d[:])
	}
	files := make([]string, 0, 2*len(s.chart))
	for _, f := range s.chart {
		files = append(files, f.Rel, digest(f.Data))
	}
	add := make([]string, len(s.additional))
	for i, a := range s.additional {
		add[i] = digest(a)
	}
	return Fingerprint("HelmChartInflationGenerator", struct {
		Name, ReleaseName, Namespace, NameTemplate string
		Chart                                      []string
		Values                                     string
		Additional                                 []string
		APIVersions                                []string
		KubeVersion                                string
		CRDs, SkipTests, SkipHooks, Debug          bool
		Command, Path, Digest                      string
		Env                                        []string
	}{s.name, s.releaseName, s.namespace, s.nameTemplate, files, digest(s.values), add,
		s.apiVersions, s.kubeVersion, s.includeCRDs, s.skipTests, s.skipHooks, s.debug,
		s.helm.Command, s.helm.Path, s.helm.Digest, s.helm.EnvFingerprint})
}

func (s *helmStage) Kind() string        { return "HelmChartInflationGenerator" }
func (s *helmStage) Fingerprint() []byte { return s.fp }

// templateArgs are the arguments of `helm template`, in kustomize's order.
func (s *helmStage) templateArgs(chartDir, values string, additional []string) []string {
	args := []string{"template"}
	if s.releaseName != "" {
		args = append(args, s.releaseName)
	} else {
		args = append(args, "--generate-name")
	}
	args = append(args, chartDir)
	if s.namespace != "" {
		args = append(args, "--namespace", s.namespace)
	}
	if s.nameTemplate != "" {
		args = append(args, "--name-template", s.nameTemplate)
	}
	args = append(args, "-f", values)
	for _, a := range additional {
		args = append(args, "-f", a)
	}
	for _, v := range s.apiVersions {
		args = append(args, "--api-versions", v)
	}
	if s.kubeVersion != "" {
		args = append(args, "--kube-version", s.kubeVersion)
	}
	if s.includeCRDs {
		args = append(args, "--include-crds")
	}
	if s.skipTests {
		args = append(args, "--skip-tests")
	}
	if s.skipHooks {
		args = append(args, "--no-hooks")
	}
	if s.debug {
		args = append(args, "--debug")
	}
	return args
}

// Run writes the chart and the values into a temporary directory, runs
// `helm version` (kustomize requires helm 3) and `helm template` there, and
// appends the rendered objects, marked as made by helm.
func (s *helmStage) Run(ctx context.Context, rs *resource.List) error {
	tmp, err := os.MkdirTemp("", "kpipe-helm-")
	if err != nil {
		return fmt.Errorf("creating a temporary directory for helm: %w", err)
	}
	defer os.RemoveAll(tmp)
	base := path.Base(filepath.ToSlash(s.name))
	chartDir := filepath.Join(tmp, "chart", base)
	for _, f := range s.chart {
		p := filepath.Join(chartDir, filepath.FromSlash(f.Rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	values := filepath.Join(tmp, base+"-kustomize-values.yaml")
	if err := os.WriteFile(values, s.values, 0o644); err != nil {
		return err
	}
	var additional []string
	for i, a := range s.additional {
		p := filepath.Join(tmp, fmt.Sprintf("additional-values-%d-%s", i+1, filepath.Base(s.addNames[i])))
		if err := os.WriteFile(p, a, 0o644); err != nil {
			return err
		}
		additional = append(additional, p)
	}
	home := filepath.Join(tmp, "helm")
	env := append(append([]string(nil), s.helm.Env...),
		"HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home+"/.cache", "HELM_DATA_HOME="+home+"/.data")

	shown := func(args []string) string {
		a := strings.Join(append([]string{s.helm.Command}, args...), " ")
		a = strings.ReplaceAll(a, chartDir, s.chartDir)
		return strings.ReplaceAll(a, tmp+string(filepath.Separator), "$TMP/")
	}
	run := func(args ...string) ([]byte, error) { return s.runHelm(ctx, env, shown(args), args) }
	out, err := run("version", "--short") // helm v4 has no -c (kustomize v5.8.1+)
	if err != nil {
		return err
	}
	if err := checkHelmVersion(out); err != nil {
		return err
	}
	args := s.templateArgs(chartDir, values, additional)
	out, err = run(args...)
	if err != nil {
		return err
	}
	objs, err := resyaml.Decode(out)
	if err != nil {
		// helm may print messages before the first document.
		if i := bytes.Index(out, []byte("---")); i >= 0 {
			objs, err = resyaml.Decode(out[i:])
		}
		if err != nil {
			return fmt.Errorf("chart %s: reading the output of helm template: %w", s.chartDir, err)
		}
	}
	for _, r := range objs {
		r.SetAnnotation(helmGeneratedAnnotation, "true")
		if err := rs.Append(r); err != nil {
			return fmt.Errorf("chart %s: %w", s.chartDir, err)
		}
	}
	return nil
}

// maxHelmOutput and maxHelmStderr bound what kpipe takes from one run of
// helm: its standard output (past the cap helm is stopped and the build
// fails) and its standard error (the rest is dropped, and the error says so).
const (
	maxHelmOutput = 256 << 20
	maxHelmStderr = 64 << 10
)

// runHelm runs helm with args and returns its standard output; a failure
// names the command (shown) and carries helm's standard error.
func (s *helmStage) runHelm(ctx context.Context, env []string, shown string, args []string) ([]byte, error) {
	run := RunHelm(ctx, s.helm, "", env, args)
	if run.Overflowed && ctx.Err() == nil {
		return nil, fmt.Errorf("chart %s: the output of '%s' passed %d MiB, the most kpipe takes from helm; it was stopped", s.chartDir, shown, maxHelmOutput>>20)
	}
	if err := run.Err; err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("chart %s: unable to run '%s' (is '%s' installed?): %w", s.chartDir, shown, s.helm.Command, err)
		}
		msg := strings.TrimSpace(string(run.Stderr))
		if msg != "" {
			msg = "; helm said:\n" + msg
			if run.Truncation != "" {
				msg += "\n" + run.Truncation
			}
		}
		return nil, fmt.Errorf("chart %s: '%s' failed: %w%s", s.chartDir, shown, err, msg)
	}
	return run.Stdout, nil
}

// HelmRun is the outcome of one run of helm (RunHelm).
type HelmRun struct {
	// Stdout is what helm wrote to its standard output (nil when it
	// passed the cap: Overflowed), Stderr the start of its standard error
	// (Truncation says what was dropped).
	Stdout, Stderr []byte
	Overflowed     bool
	Truncation     string
	// Err is the run's error: an *exec.ExitError when helm failed.
	Err error
}

// RunHelm runs the helm binary h names with args in dir ("": the current
// directory) and the environment env, in a process group of its own that
// ctx's end kills, taking at most 256 MiB of its output and 64 KiB of its
// standard error: kpipe's one way of running helm, for helmCharts and
// for Argo CD's Helm sources.
func RunHelm(ctx context.Context, h HelmSettings, dir string, env []string, args []string) HelmRun {
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	stdout := &procgroup.Capped{Max: maxHelmOutput, OnOverflow: stop}
	stderr := &procgroup.Capped{Max: maxHelmStderr}
	cmd := exec.CommandContext(hctx, h.Path, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	procgroup.Prepare(cmd)
	err := cmd.Run()
	procgroup.Reap(cmd)
	run := HelmRun{Stderr: stderr.Bytes(), Truncation: stderr.Truncation(), Err: err}
	if stdout.Overflowed() {
		run.Overflowed = true
		if run.Err == nil {
			run.Err = fmt.Errorf("the output of helm passed %d MiB, the most kpipe takes from helm", maxHelmOutput>>20)
		}
		return run
	}
	run.Stdout = stdout.Bytes()
	return run
}

var helmVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`v?\d+(\.\d+)+`) })

// checkHelmVersion fails unless `helm version -c --short` printed a
// version 3 or 4, as kustomize v5.8.1+ requires.
func checkHelmVersion(out []byte) error {
	v := helmVersionRE().FindString(string(out))
	if v == "" {
		return fmt.Errorf("cannot find version string in %s", out)
	}
	v = strings.TrimPrefix(v, "v")
	if major, _, _ := strings.Cut(v, "."); major != "3" && major != "4" {
		return fmt.Errorf("this plugin requires helm V3 or V4 but got v%s", v)
	}
	return nil
}
