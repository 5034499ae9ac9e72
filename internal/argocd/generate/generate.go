// Package generate puts the phase-1 pieces together the way Argo CD
// v3.6.1's controller and repo-server do for one Application: per source
// (controller/state.go GetRepoObjs), the shortcuts for ref-only sources,
// the app path and symlink checks, source type detection with the
// .argocd-source files, the Kustomize edits or the helm command or the
// Directory read, the render itself through a Renderer (kpipe's engine:
// package render), then the repo-server's post-processing and the
// controller's normalization, with Argo CD's error wording.
//
// It imports kpipe's internal/argocd packages only.
package generate

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/directory"
	"github.com/kpipe/kpipe/internal/argocd/helm"
	"github.com/kpipe/kpipe/internal/argocd/kustomize"
	"github.com/kpipe/kpipe/internal/argocd/manifest"
	"github.com/kpipe/kpipe/internal/argocd/source"
)

// Settings are what the controller and repo-server know besides the
// Application (argocd-cm, the destination cluster, the commit).
type Settings struct {
	ControllerNamespace string // default "argocd"
	AppLabelKey         string // default app.kubernetes.io/instance
	TrackingMethod      string // default annotation
	InstallationID      string
	KubeVersion         string   // the destination cluster's; "" offline
	APIVersions         []string // the destination cluster's
	BuildOptions        string   // kustomize.buildOptions
	Revision            string   // the commit SHA rendered
	MaxDirectorySize    int64    // default directory.DefaultMaxCombinedSize
	ValuesFileSchemes   []string // helm value file URL schemes allowed
	ClusterScoped       []string // extra cluster-scoped group/Kind
	// KustomizeVersions are the registered kustomize.version names.
	KustomizeVersions []string
}

func (s *Settings) defaults() {
	if s.ControllerNamespace == "" {
		s.ControllerNamespace = "argocd"
	}
	if s.AppLabelKey == "" {
		s.AppLabelKey = manifest.DefaultAppLabelKey
	}
	if s.TrackingMethod == "" {
		s.TrackingMethod = manifest.TrackingAnnotation
	}
	if s.MaxDirectorySize == 0 {
		s.MaxDirectorySize = directory.DefaultMaxCombinedSize
	}
}

// KustomizeBuild is one `kustomize build` to run: the app directory of
// the checkout, with the edited kustomization file (File, Data) in place
// of the checkout's when Data is set.
type KustomizeBuild struct {
	Checkout app.Checkout
	AppDir   string
	Edit     *kustomize.Result
	Args     []string // after "kustomize"; Args[1] names the app dir
	Env      []string // ARGOCD_APP_* for exec plugins and helm
}

// HelmTemplate is one `helm template` to run, in the app directory.
type HelmTemplate struct {
	Checkout app.Checkout
	AppDir   string
	Template *helm.Template
	Env      []string
}

// CommandError is a command that failed: its cause ("exit status 1",
// "timeout after 1m30s") and its standard error, paths in it named by
// the checkouts' labels. Renderers return it; generate words it as Argo
// CD does.
type CommandError struct {
	Cause  string
	Stderr string
}

func (e *CommandError) Error() string { return e.Cause + ": " + e.Stderr }

// TempValuesFile names the helm values file in error messages (Argo CD
// writes its temporary path, which differs per run).
const TempValuesFile = "<temp values file>"

// Renderer renders what generate cannot compute: kustomize build and
// helm template, returning their standard output (a YAML stream). An
// error is reported as Argo CD reports a failed command.
type Renderer interface {
	Kustomize(ctx context.Context, b *KustomizeBuild) ([]byte, error)
	Helm(ctx context.Context, h *HelmTemplate) ([]byte, error)
}

// ObjectRenderer is a Renderer that can also return a kustomize build's
// objects parsed as manifest.SplitYAML parses its output (a renderer that
// sees the same output many times parses it once): fresh objects the
// caller may change. Errors are as Kustomize's.
type ObjectRenderer interface {
	Renderer
	KustomizeObjects(ctx context.Context, b *KustomizeBuild) ([]manifest.Object, error)
}

// Checkouts finds the local checkout of a repoURL; ok false for another
// repository (skipped).
type Checkouts func(repoURL string) (app.Checkout, bool)

// Source is the outcome for one source.
type Source struct {
	Index    int
	Type     source.Type
	Commands []string
	Objects  []manifest.Object // as the repo-server returns them
	Skipped  string            // why nothing was generated
	Err      error             // the repo-server's error
	Code     string            // its gRPC code
}

// Result is the outcome for the Application.
type Result struct {
	Instance   string
	Sources    []Source
	Manifests  []manifest.Object // all sources, in order
	Normalized []manifest.Object // the controller's view
	Conditions []string
	// Err is the controller's error ("failed to generate manifest for
	// source 1 of 1: rpc error: ..."); Skipped says why the Application
	// cannot be rendered here.
	Err     error
	Skipped string
}

// Application generates an Application's manifests.
func Application(ctx context.Context, a *app.Application, cos Checkouts, s Settings, r Renderer) *Result {
	s.defaults()
	spec := a.Spec
	spec.Normalize()
	res := &Result{Instance: a.InstanceName(s.ControllerNamespace)}
	srcs := spec.GetSources()
	multi := spec.HasMultipleSources()
	refs, err := app.RefSources(srcs)
	if err != nil {
		res.Err = fmt.Errorf("failed to get ref sources: %w", err)
		return res
	}
	var all []manifest.Object
	for i := range srcs {
		src := srcs[i]
		sr := Source{Index: i}
		if multi && src.Path == "" && !src.IsOCI() && !src.IsHelm() && src.IsRef() {
			sr.Skipped = "ref-only source"
			res.Sources = append(res.Sources, sr)
			continue
		}
		if multi && src.Path == "" && src.Chart == "" {
			sr.Skipped = "multi-source source without path or chart: nothing generated"
			res.Sources = append(res.Sources, sr)
			continue
		}
		if src.IsHelm() || src.IsOCI() {
			sr.Skipped = "Helm/OCI repository source: needs network"
			res.Sources = append(res.Sources, sr)
			res.Skipped = sr.Skipped
			return res
		}
		co, ok := cos(src.RepoURL)
		if !ok {
			sr.Skipped = "no local checkout for " + src.RepoURL
			res.Sources = append(res.Sources, sr)
			res.Skipped = sr.Skipped
			return res
		}
		objs, err := generateSource(ctx, &sr, co, cos, &spec, &src, multi, refs, res.Instance, s, r)
		if err != nil {
			sr.Err, sr.Code = err, code(err)
			res.Sources = append(res.Sources, sr)
			res.Err = fmt.Errorf("failed to generate manifest for source %d of %d: rpc error: code = %s desc = %s", i+1, len(srcs), sr.Code, err.Error())
			return res
		}
		sr.Objects = objs
		res.Sources = append(res.Sources, sr)
		if err := manifest.CheckKinds(objs); err != nil {
			res.Err = fmt.Errorf("failed to unmarshal manifests for source %d of %d: %w", i+1, len(srcs), err)
			return res
		}
		all = append(all, objs...)
	}
	for _, o := range all {
		res.Manifests = append(res.Manifests, manifest.DeepCopy(o))
	}
	tr := manifest.Tracking{Method: s.TrackingMethod, LabelKey: s.AppLabelKey, AppName: res.Instance, Namespace: spec.Destination.Namespace, InstallationID: s.InstallationID}
	norm, conds, err := manifest.Normalize(all, spec.Destination.Namespace, manifest.NewScope(all, s.ClusterScoped...), tr)
	if err != nil {
		res.Conditions = append(res.Conditions, "Failed to normalize target state: "+err.Error())
	}
	res.Normalized, res.Conditions = norm, append(res.Conditions, conds...)
	return res
}

func code(err error) string {
	var de *directory.Error
	if errors.As(err, &de) {
		return "FailedPrecondition"
	}
	return "Unknown"
}

func generateSource(ctx context.Context, sr *Source, co app.Checkout, cos Checkouts, spec *app.ApplicationSpec, src *app.ApplicationSource, multi bool, refs map[string]app.RefTarget, instance string, s Settings, r Renderer) ([]manifest.Object, error) {
	if multi && src.Helm != nil {
		if err := helm.CheckRefs(true, src.Helm, refs); err != nil {
			return nil, err
		}
		for _, t := range refs {
			if _, ok := cos(t.RepoURL); !ok {
				return nil, fmt.Errorf("failed to get git client for repo %s", t.RepoURL)
			}
		}
	}
	if err := source.CheckSymlinks(co.FS); err != nil {
		return nil, err
	}
	dir, err := source.AppPath(co.FS, src.Path)
	if err != nil {
		return nil, err
	}
	env := app.NewEnv(instance, spec.Destination.Namespace, spec.GetProject(), s.Revision, src)
	typ, err := source.Detect(co, dir, src, instance)
	if err != nil {
		return nil, err
	}
	sr.Type = typ
	var objs []manifest.Object
	switch typ {
	case source.Kustomize:
		if v := src.Kustomize; v != nil && v.Version != "" && !contains(s.KustomizeVersions, v.Version) {
			return nil, fmt.Errorf("error getting kustomize binary path: kustomize version %s is not registered", v.Version)
		}
		kv, err := app.ParseKubeVersion(src.KubeVersionOrDefault(s.KubeVersion))
		if err != nil {
			return nil, fmt.Errorf("could not parse kubernetes version %s: %w", src.KubeVersionOrDefault(s.KubeVersion), err)
		}
		ed, err := kustomize.Edit(co, dir, src.Kustomize, env)
		sr.Commands = ed.Commands
		if err != nil {
			return nil, err
		}
		args := kustomize.BuildArgs(co, dir, s.BuildOptions, kv, src.APIVersionsOrDefault(s.APIVersions))
		dot := co
		dot.Root = "."
		sr.Commands = append(sr.Commands, app.CommandString(append([]string{"kustomize"}, kustomize.BuildArgs(dot, dir, s.BuildOptions, kv, src.APIVersionsOrDefault(s.APIVersions))...)))
		kb := &KustomizeBuild{Checkout: co, AppDir: dir, Edit: ed, Args: args, Env: env.Environ()}
		if or, ok := r.(ObjectRenderer); ok {
			if objs, err = or.KustomizeObjects(ctx, kb); err != nil {
				return nil, commandError(app.CommandLine(append([]string{"kustomize"}, args...), co.Root), err)
			}
			break
		}
		out, err := r.Kustomize(ctx, kb)
		if err != nil {
			return nil, commandError(app.CommandLine(append([]string{"kustomize"}, args...), co.Root), err)
		}
		if objs, err = manifest.SplitYAML(out); err != nil {
			return nil, err
		}
	case source.Helm:
		rcos := map[string]app.Checkout{}
		for _, t := range refs {
			if c, ok := cos(t.RepoURL); ok {
				rcos[app.NormalizeGitURL(t.RepoURL)] = c
			}
		}
		t, err := helm.Command(helm.Request{
			Checkout: co, AppDir: dir, Source: src, InstanceName: instance,
			Namespace: spec.Destination.Namespace, KubeVersion: s.KubeVersion, APIVersions: s.APIVersions,
			Env: env, Refs: refs, RefCheckouts: rcos, ValuesFileSchemes: s.ValuesFileSchemes,
		})
		if err != nil {
			return nil, err
		}
		if err := helm.ChartYAMLCheck(co, dir); err != nil {
			return nil, err
		}
		cmd := t.CommandLine(helm.ValuesPlaceholder, t.Roots()...)
		for _, c := range append([]app.Checkout{co}, values(rcos)...) {
			cmd = strings.ReplaceAll(cmd, c.Root, ".")
		}
		sr.Commands = []string{cmd}
		out, err := r.Helm(ctx, &HelmTemplate{Checkout: co, AppDir: dir, Template: t, Env: env.Environ()})
		if err != nil {
			err = commandError(t.CommandLine(TempValuesFile, t.Roots()...), err)
			var ce *CommandError
			if errors.As(err, &ce) {
				msg := err.Error()
				if strings.Contains(msg, "--api-versions") {
					msg = apiVersionsRemover().ReplaceAllString(msg, "<api versions removed> ")
				}
				err = errors.New(msg)
			}
			return nil, fmt.Errorf("failed to execute helm template command: failed running helm: %w", err)
		}
		if objs, err = manifest.SplitYAML(out); err != nil {
			return nil, err
		}
	case source.Directory:
		if objs, err = directory.Objects(co, dir, src.Directory, s.MaxDirectorySize); err != nil {
			return nil, err
		}
	case source.Plugin:
		return nil, errors.New("config management plugins are not rendered by kpipe")
	}
	tr := manifest.Tracking{Method: s.TrackingMethod, LabelKey: s.AppLabelKey, AppName: instance, Namespace: spec.Destination.Namespace, InstallationID: s.InstallationID}
	return manifest.Generated(objs, tr)
}

var apiVersionsRemover = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(--api-versions [^ ]+ )+`) })

// commandError words a failed command as util/exec's CmdError.
func commandError(cmd string, err error) error {
	var ce *CommandError
	if !errors.As(err, &ce) {
		return err
	}
	msg := fmt.Sprintf("`%s` failed %s", cmd, ce.Cause)
	if s := strings.TrimSpace(ce.Stderr); s != "" {
		msg += ": " + s
	}
	return &wrapped{msg: msg, err: ce}
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

func values(m map[string]app.Checkout) []app.Checkout {
	var out []app.Checkout
	for _, c := range m {
		out = append(out, c)
	}
	return out
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}
