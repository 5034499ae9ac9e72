package helm_test

import (
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/argocdtest"
	"github.com/kpipe/kpipe/internal/argocd/helm"
	"github.com/kpipe/kpipe/internal/argocd/source"
)

// TestCommandsAgainstArgoCD builds the helm command of every Helm source of
// the reference cases and compares it with the command Argo CD reported
// (checkout paths as "."), and Argo CD's error where it failed before
// running helm.
func TestCommandsAgainstArgoCD(t *testing.T) {
	var ran int
	for _, c := range argocdtest.Cases(t) {
		a, err := app.ParseApplication(c.App)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		a.Spec.Normalize()
		srcs := a.Spec.GetSources()
		refs, err := app.RefSources(srcs)
		if err != nil {
			continue
		}
		inst := a.InstanceName(c.Arg("controller-namespace", "argocd"))
		for i := range srcs {
			if i >= len(c.Result.Sources) {
				break
			}
			want := c.Result.Sources[i]
			src := srcs[i]
			if want.Skipped != "" || src.Path == "" {
				continue
			}
			co, ok := c.Checkout(src.RepoURL)
			if !ok {
				continue
			}
			dir, err := source.AppPath(co.FS, src.Path)
			if err != nil {
				continue
			}
			typ, err := source.Detect(co, dir, &src, inst)
			if err != nil || typ != source.Helm {
				continue
			}
			ran++
			dot := func(co app.Checkout) app.Checkout { co.Root = "."; return co }
			refCOs := map[string]app.Checkout{}
			for u := range c.Repos {
				rc, _ := c.Checkout(u)
				refCOs[app.NormalizeGitURL(u)] = dot(rc)
			}
			gotErr := helm.CheckRefs(a.Spec.HasMultipleSources(), src.Helm, refs)
			var tmpl *helm.Template
			if gotErr == nil {
				tmpl, gotErr = helm.Command(helm.Request{
					Checkout: dot(co), AppDir: dir, Source: &src, InstanceName: inst,
					Namespace: a.Spec.Destination.Namespace, KubeVersion: c.Result.Settings.KubeVersion,
					APIVersions: c.Result.Settings.APIVersions,
					Env:         app.NewEnv(inst, a.Spec.Destination.Namespace, a.Spec.GetProject(), c.Result.Settings.Revision, &src),
					Refs:        refs, RefCheckouts: refCOs,
				})
			}
			if gotErr == nil {
				gotErr = helm.ChartYAMLCheck(co, dir)
			}
			argoErr := want.Error
			if argoErr == "" && c.Result.Error != "" && len(want.Commands) == 0 {
				argoErr = c.Result.Error
			}
			if strings.Contains(argoErr, "`helm ") || strings.Contains(argoErr, "error building helm chart dependencies") || strings.Contains(argoErr, "PermissionDenied") || strings.Contains(argoErr, "Error: ") {
				argoErr = "" // helm itself failed: its command ran
			}
			if argoErr != "" {
				if gotErr == nil || !strings.HasSuffix(argoErr, gotErr.Error()) {
					t.Errorf("%s: source %d: error\n got: %v\nwant: %s", c.ID, i, gotErr, argoErr)
				}
				continue
			}
			if gotErr != nil {
				t.Errorf("%s: source %d: %v", c.ID, i, gotErr)
				continue
			}
			if len(want.Commands) == 0 {
				continue // helm failed: the command is not recorded
			}
			got := tmpl.CommandLine(helm.ValuesPlaceholder, tmpl.Roots()...)
			if got != want.Commands[0] {
				t.Errorf("%s: source %d:\n got: %s\nwant: %s", c.ID, i, got, want.Commands[0])
			}
		}
	}
	t.Logf("%d Helm sources", ran)
}

func TestCleanSetParameter(t *testing.T) {
	for in, want := range map[string]string{
		"a,b": `a\,b`, "{a,b}": "{a,b}", `a\,b`: `a\,b`, "a": "a", ",": `\,`, "{a,b": `{a\,b`,
	} {
		if got := helm.CleanSetParameter(in); got != want {
			t.Errorf("CleanSetParameter(%q) = %q, want %q", in, got, want)
		}
	}
}
