package kustomize_test

import (
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/argocdtest"
	"github.com/kpipe/kpipe/internal/argocd/kustomize"
	"github.com/kpipe/kpipe/internal/argocd/source"
)

// TestEditsAgainstArgoCD runs the edits of every Kustomize source of the
// reference cases and compares the commands Argo CD reported, its error
// where an edit failed, and the kustomization file it left in its
// checkout, byte for byte.
func TestEditsAgainstArgoCD(t *testing.T) {
	var ran, files int
	for _, c := range argocdtest.Cases(t) {
		a, err := app.ParseApplication(c.App)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		a.Spec.Normalize()
		srcs := a.Spec.GetSources()
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
			typ, err := source.Detect(co, dir, &src, a.InstanceName(c.Arg("controller-namespace", "argocd")))
			if err != nil || typ != source.Kustomize {
				continue
			}
			if src.Kustomize != nil && src.Kustomize.Version != "" {
				continue // a kustomize version not registered: checked before any edit
			}
			ran++
			env := app.NewEnv(a.InstanceName("argocd"), a.Spec.Destination.Namespace, a.Spec.GetProject(), c.Result.Settings.Revision, &src)
			res, err := kustomize.Edit(co, dir, src.Kustomize, env)
			if want.Error != "" && !strings.Contains(want.Error, "kustomize build") {
				if err == nil {
					t.Errorf("%s: source %d: no error, Argo CD: %s", c.ID, i, want.Error)
					continue
				}
				got, w := err.Error(), want.Error
				if j := strings.Index(w, "\nUsage:"); j >= 0 {
					w = w[:j] // kustomize's usage text is not reproduced
				}
				if got != w {
					t.Errorf("%s: source %d: error\n got: %s\nwant: %s", c.ID, i, got, w)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: source %d: %v", c.ID, i, err)
				continue
			}
			if want.Error != "" {
				continue // the build failed after the edits: commands are not recorded
			}
			build := kustomize.BuildArgs(app.Checkout{Root: "."}, dir, c.Result.Settings.BuildOptions, mustKube(t, src.KubeVersionOrDefault(c.Result.Settings.KubeVersion)), src.APIVersionsOrDefault(c.Result.Settings.APIVersions))
			got := append(append([]string{}, res.Commands...), app.CommandString(append([]string{"kustomize"}, build...)))
			if strings.Join(got, "\n") != strings.Join(want.Commands, "\n") {
				t.Errorf("%s: source %d: commands\n got: %q\nwant: %q", c.ID, i, got, want.Commands)
			}
			if wantFile, ok := c.Edits[res.File]; ok {
				files++
				if string(res.Data) != string(wantFile) {
					t.Errorf("%s: %s:\n--- got\n%s--- want (Argo CD's checkout)\n%s", c.ID, res.File, res.Data, wantFile)
				}
			} else if res.Data != nil && len(c.Edits) > 0 {
				t.Errorf("%s: edited %s, Argo CD edited %v", c.ID, res.File, keys(c.Edits))
			}
		}
	}
	t.Logf("%d Kustomize sources, %d edited files compared", ran, files)
}

func mustKube(t *testing.T, v string) string {
	k, err := app.ParseKubeVersion(v)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
