package generate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/argocdtest"
	"github.com/kpipe/kpipe/internal/argocd/generate"
	"github.com/kpipe/kpipe/internal/argocd/render"
	"github.com/kpipe/kpipe/internal/engine"
)

func settings(c *argocdtest.Case) generate.Settings {
	s := generate.Settings{
		ControllerNamespace: c.Arg("controller-namespace", "argocd"),
		AppLabelKey:         c.Arg("app-label-key", ""),
		TrackingMethod:      c.Arg("tracking-method", ""),
		InstallationID:      c.Arg("installation-id", ""),
		KubeVersion:         c.Arg("kube-version", ""),
		BuildOptions:        c.Arg("build-options", ""),
		Revision:            c.Result.Settings.Revision,
	}
	if v := c.Arg("api-versions", ""); v != "" {
		s.APIVersions = strings.Split(v, ",")
	}
	if v := c.Arg("cluster-scoped", ""); v != "" {
		s.ClusterScoped = strings.Split(v, ",")
	}
	if v := c.Arg("max-combined-directory-manifests-size", ""); v != "" {
		n, _ := strconv.ParseInt(strings.TrimSuffix(v, "M"), 10, 64)
		s.MaxDirectorySize = n * 1000 * 1000
	}
	return s
}

// canon decodes JSON objects for comparison (numbers as float64).
func canon(t *testing.T, objs any) any {
	b, err := json.Marshal(objs)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	json.Unmarshal(b, &v)
	if v == nil {
		v = []any{}
	}
	return v
}

func raws(objs []json.RawMessage) []any {
	out := []any{}
	for _, r := range objs {
		var v any
		json.Unmarshal(r, &v)
		out = append(out, v)
	}
	return out
}

// network reports an Argo CD error that comes from the network being
// out of reach (remote kustomize bases, chart repositories).
func network(msg string) bool {
	for _, s := range []string{"no such host", "dial tcp", "git fetch", "Could not read from remote repository", "Could not resolve host"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// maskSecrets drops Secrets' data, for the cases whose chart generates
// random secrets (the corpus lists them in unstable.txt).
func maskSecrets(objs any) {
	l, _ := objs.([]any)
	for _, o := range l {
		if m, ok := o.(map[string]any); ok && m["kind"] == "Secret" {
			delete(m, "data")
		}
	}
}

// outcome classifies one case against Argo CD's record.
func outcome(t *testing.T, c *argocdtest.Case, res *generate.Result, parseErr error) (string, string) {
	if parseErr != nil {
		return "miss: application does not parse", parseErr.Error()
	}
	switch c.Exit {
	case 3:
		if res.Skipped != "" {
			return "match: skipped (needs the network)", ""
		}
		return "miss: rendered a case Argo CD could not reach", fmt.Sprint(res.Err)
	case 1:
		if res.Err == nil {
			return "miss: rendered, Argo CD failed", c.Result.Error
		}
		got, want := res.Err.Error(), c.Result.Error
		if got == want {
			return "match: same error", ""
		}
		if i := strings.Index(want, "\nUsage:"); i >= 0 && got == want[:i] {
			return "match: same error (without kustomize's usage text)", ""
		}
		if network(want) {
			return "both fail: network needed (remote base or chart repository; messages differ in what the network said)", ""
		}
		if strings.Contains(got, "found in Chart.yaml, but missing in charts/ directory") && (strings.Contains(want, "helm dependency build") || strings.Contains(want, "are not permitted in project")) {
			return "both fail: chart dependencies need `helm dependency build` (network)", ""
		}
		return "miss: different error", "got:  " + got + "\nwant: " + want
	}
	if res.Err != nil {
		if strings.Contains(res.Err.Error(), "jsonnet is not rendered by kpipe") {
			return "refused: jsonnet", ""
		}
		return "miss: failed, Argo CD rendered", res.Err.Error()
	}
	if res.Skipped != "" {
		return "miss: skipped, Argo CD rendered", res.Skipped
	}
	got, want := canon(t, res.Manifests), raws(c.Result.Manifests)
	if argocdtest.Unstable(c.ID) {
		maskSecrets(got)
		maskSecrets(want)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(canon(t, res.Manifests))
		w, _ := json.Marshal(raws(c.Result.Manifests))
		return "miss: different manifests", fmt.Sprintf("got:  %.3000s\nwant: %.3000s", g, w)
	}
	gotN, wantN := canon(t, res.Normalized), raws(c.Result.Normalized)
	if argocdtest.Unstable(c.ID) {
		maskSecrets(gotN)
		maskSecrets(wantN)
	}
	if !reflect.DeepEqual(gotN, wantN) {
		return "miss: different normalized objects", ""
	}
	if strings.Join(res.Conditions, "\n") != strings.Join(c.Result.Conditions, "\n") {
		return "miss: different conditions", fmt.Sprintf("%q vs %q", res.Conditions, c.Result.Conditions)
	}
	for i, s := range res.Sources {
		if i < len(c.Result.Sources) && strings.Join(s.Commands, "\n") != strings.Join(c.Result.Sources[i].Commands, "\n") {
			return "miss: different commands", fmt.Sprintf("%q vs %q", s.Commands, c.Result.Sources[i].Commands)
		}
	}
	if argocdtest.Unstable(c.ID) {
		return "match: rendered (Secret data aside: the chart generates random secrets)", ""
	}
	return "match: rendered", ""
}

// TestApplicationsAgainstArgoCD renders every reference case end to end
// on kpipe's engine (package render, in process: the cases rendered as
// one batch, as build-all renders a repository's Applications) and
// compares with what Argo CD generated: the objects the repo-server
// returned (parsed, in order), the controller's normalized set, its
// conditions and the commands, or the error (exact wording, kustomize's
// usage text aside). The kept cases (testdata) must all match, and so
// must every case of the corpus when it is here (its randomized
// Application options and settings: the differential test of issue 53),
// but for the classes the network or design explains, which are
// reported.
func TestApplicationsAgainstArgoCD(t *testing.T) {
	if testing.Short() {
		t.Skip("renders hundreds of Applications")
	}
	r := render.New(render.Options{Engine: engine.Options{Helm: engine.HelmOptions{Command: argocdtest.Helm(t)}}, HelmSources: true})
	cases := argocdtest.Cases(t)
	results := make([]*generate.Result, len(cases))
	parseErrs := make([]error, len(cases))
	r.Batch(context.Background(), len(cases), func(ctx context.Context, i int) {
		c := cases[i]
		if c.Missing != "" {
			return
		}
		a, err := app.ParseApplication(c.App)
		if err != nil {
			parseErrs[i] = err
			return
		}
		results[i] = generate.Application(ctx, a, c.Checkout, settings(c), r)
	})
	classes := map[string][]string{}
	total := 0
	for i, c := range cases {
		if c.Missing != "" {
			classes["not run: repository absent ("+c.Missing+")"] = append(classes["not run: repository absent ("+c.Missing+")"], c.ID)
			continue
		}
		total++
		class, detail := outcome(t, c, results[i], parseErrs[i])
		classes[class] = append(classes[class], c.ID)
		if strings.HasPrefix(class, "miss") {
			t.Errorf("%s: %s\n%s", c.ID, class, detail)
		}
	}
	var names []string
	for k := range classes {
		names = append(names, k)
	}
	sort.Strings(names)
	matched := 0
	for _, n := range names {
		if !strings.HasPrefix(n, "miss") && !strings.HasPrefix(n, "not run") {
			matched += len(classes[n])
		}
		t.Logf("%4d  %s", len(classes[n]), n)
	}
	st := r.Stats()
	t.Logf("%d of %d cases reproduced end to end (matched, or failing as Argo CD fails for want of the network, or refused as designed); %d engine builds of %d roots (%d nodes), %d helm runs",
		matched, total, st.Builds, st.Roots, st.NodesBuilt, st.HelmRuns)
}
