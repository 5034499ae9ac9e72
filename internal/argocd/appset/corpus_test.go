package appset_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/appset"
	"github.com/kpipe/kpipe/internal/argocd/argocdtest"
)

// prune drops empty values (what Argo CD's typed structs write as zero
// values and kpipe's omit) and status, for comparing Applications.
func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			if k == "status" || k == "operation" {
				continue
			}
			if p := prune(e); p != nil {
				out[k] = p
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(t) == 0 {
			return nil
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = prune(e)
		}
		return out
	case string:
		if t == "" {
			return nil
		}
	case bool:
		if !t {
			return nil
		}
	}
	return v
}

func jsonOf(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

// TestApplicationSetsAgainstArgoCD expands every ApplicationSet case and
// compares with Argo CD's expansion: the error (word for word), or the
// generated Applications (sorted by name; empty fields aside) and each
// generator's parameter sets.
func TestApplicationSetsAgainstArgoCD(t *testing.T) {
	classes := map[string][]string{}
	for _, c := range argocdtest.AppSetCases(t) {
		class, detail := appsetOutcome(t, c)
		classes[class] = append(classes[class], c.ID)
		if strings.HasPrefix(class, "miss") {
			// A kept case or one of the corpus: either must agree.
			t.Errorf("%s: %s\n%s", c.ID, class, detail)
		}
	}
	var names []string
	for k := range classes {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%4d  %s", len(classes[n]), n)
	}
}

func appsetOutcome(t *testing.T, c *argocdtest.AppSetCase) (string, string) {
	as, err := appset.Parse(c.YAML)
	if err != nil {
		return "miss: does not parse", err.Error()
	}
	repos := func(url string) (appset.Repo, error) {
		for u, d := range c.Repos {
			if app.NormalizeGitURL(u) == app.NormalizeGitURL(url) {
				return &appset.LocalRepo{URL: url, FS: os.DirFS(d), Tracked: argocdtest.Tracked(t, d), IncludeHidden: c.HasArg("include-hidden-directories"), NewGlobbing: c.HasArg("new-git-file-globbing")}, nil
			}
		}
		return nil, fmt.Errorf("no local checkout for %s (remote repository)", url)
	}
	res := appset.Generate(as, repos, "argocd")
	wantErr, _ := c.Result["error"].(string)
	if c.Exit == 1 {
		if res.Err == nil {
			return "miss: expanded, Argo CD failed", wantErr
		}
		if res.Err.Error() == wantErr {
			if strings.Contains(wantErr, "needs a cluster or network") {
				return "match: refused (cluster or network generator)", ""
			}
			return "match: same error", ""
		}
		if strings.Contains(wantErr, "no local checkout") && strings.Contains(res.Err.Error(), "no local checkout") {
			return "match: refused (repository not here)", ""
		}
		return "miss: different error", "got:  " + res.Err.Error() + "\nwant: " + wantErr
	}
	if res.Err != nil {
		return "miss: failed, Argo CD expanded", res.Err.Error()
	}
	got := prune(jsonOf(res.Applications))
	want := prune(jsonOf(c.Result["applications"]))
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		return "miss: different applications", fmt.Sprintf("got:  %.2500s\nwant: %.2500s", g, w)
	}
	if gp, wp := jsonOf(res.Params), jsonOf(c.Result["params"]); !reflect.DeepEqual(gp, wp) {
		g, _ := json.Marshal(gp)
		w, _ := json.Marshal(wp)
		return "miss: different params", fmt.Sprintf("got:  %.1500s\nwant: %.1500s", g, w)
	}
	if wi, _ := c.Result["invalid"].(map[string]any); len(wi) != len(res.Invalid) {
		return "miss: different invalid applications", fmt.Sprintf("%v vs %v", res.Invalid, wi)
	}
	return fmt.Sprintf("match: expanded"), ""
}
