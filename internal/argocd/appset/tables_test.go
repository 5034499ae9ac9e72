package appset

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/kpipe/kpipe/internal/argocd/argocdtest"
)

// tableCase is one case of Argo CD's generator test tables, as the
// reference extractor recorded it: the test's inputs (Go field names),
// its expected params, and what Argo CD's generator returned.
type tableCase struct {
	Test       string `json:"test"`
	Kind       string `json:"kind"`
	GoTemplate bool   `json:"goTemplate"`
	Order      string `json:"order"`
	Name       string `json:"name"`
	Case       struct {
		Elements         []json.RawMessage `json:"elements"`
		Directories      []PathItem        `json:"directories"`
		Files            []PathItem        `json:"files"`
		RepoApps         []string          `json:"repoApps"`
		RepoError        map[string]string `json:"repoError"`
		RepoPathsError   map[string]string `json:"repoPathsError"`
		RepoFileContents map[string]string `json:"repoFileContents"`
		PathParamPrefix  string            `json:"pathParamPrefix"`
		Values           map[string]string `json:"values"`
		IncludePattern   []string          `json:"includePattern"`
		IncludeFiles     map[string]string `json:"includeFiles"`
		ExcludePattern   []string          `json:"excludePattern"`
		ExcludeFiles     map[string]string `json:"excludeFiles"`
		BaseGenerators   []Generator       `json:"baseGenerators"`
		MergeKeys        []string          `json:"mergeKeys"`
	} `json:"case"`
	Params []map[string]any `json:"params"`
	Error  *string          `json:"error"`
	Agree  bool             `json:"agree"`
}

// tableRepo answers as the tests' mock repo-server does.
type tableRepo struct {
	c *tableCase
}

func (r tableRepo) Directories() ([]string, error) {
	if r.c.Case.RepoError != nil {
		return nil, errors.New(r.c.Case.RepoError["$error"])
	}
	return r.c.Case.RepoApps, nil
}

func (r tableRepo) Files(pattern string) (map[string][]byte, error) {
	if r.c.Case.RepoPathsError != nil {
		return nil, errors.New(r.c.Case.RepoPathsError["$error"])
	}
	conv := func(m map[string]string) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range m {
			out[k] = []byte(v)
		}
		return out
	}
	if r.c.Kind == "git-files-exclude" {
		for _, p := range r.c.Case.IncludePattern {
			if p == pattern {
				return conv(r.c.Case.IncludeFiles), nil
			}
		}
		for _, p := range r.c.Case.ExcludePattern {
			if p == pattern {
				return conv(r.c.Case.ExcludeFiles), nil
			}
		}
		return map[string][]byte{}, nil
	}
	return conv(r.c.Case.RepoFileContents), nil
}

// TestGeneratorTables runs the cases of Argo CD's own generator tests
// that its generators agree with (52) and compares the parameter sets
// (or the error) with what Argo CD's generator returned. The tables are
// taken from Argo CD's sources, so they live in the reference corpus
// (appset-tables/), not in this repository.
func TestGeneratorTables(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(argocdtest.Corpus(t), "appset-tables", "*.json"))
	if len(files) == 0 {
		t.Fatal("no appset-tables/*.json in the reference corpus")
	}
	ran := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []tableCase
		if err := json.Unmarshal(b, &cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i := range cases {
			c := &cases[i]
			if !c.Agree {
				continue // recorded only: not re-run through Argo CD's generator
			}
			ran++
			as := &ApplicationSet{Spec: Spec{GoTemplate: c.GoTemplate}}
			e := &expander{as: as, r: NewRenderer(c.GoTemplate, nil), repos: func(string) (Repo, error) { return tableRepo{c}, nil }}
			var got []map[string]any
			switch c.Kind {
			case "list":
				got, err = e.list(&ListGenerator{Elements: c.Case.Elements})
			case "git-dirs":
				got, err = e.git(&GitGenerator{RepoURL: "RepoURL", Directories: c.Case.Directories, PathParamPrefix: c.Case.PathParamPrefix, Values: c.Case.Values})
			case "git-files", "git-files-exclude":
				got, err = e.git(&GitGenerator{RepoURL: "RepoURL", Files: c.Case.Files, PathParamPrefix: c.Case.PathParamPrefix, Values: c.Case.Values})
			case "merge":
				got, err = e.merge(&Combine{Generators: c.Case.BaseGenerators, MergeKeys: c.Case.MergeKeys})
			default:
				t.Fatalf("%s/%s: unknown kind %s", c.Test, c.Name, c.Kind)
			}
			name := c.Test + "/" + c.Name
			if c.Error != nil {
				if err == nil || err.Error() != *c.Error {
					t.Errorf("%s: error %v, Argo CD: %s", name, err, *c.Error)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			g, w := canon(got), canon(c.Params)
			if c.Order == "equal" || c.Kind == "merge" {
				sortJSON(g)
				sortJSON(w)
			}
			if !reflect.DeepEqual(g, w) {
				gb, _ := json.Marshal(g)
				wb, _ := json.Marshal(w)
				t.Errorf("%s:\n got: %s\nwant: %s", name, gb, wb)
			}
		}
	}
	if ran != 52 {
		t.Errorf("%d table cases run, want the 52 Argo CD's generators agree with", ran)
	}
}

func canon(v any) []any {
	b, _ := json.Marshal(v)
	var out []any
	json.Unmarshal(b, &out)
	if out == nil {
		out = []any{}
	}
	return out
}

func sortJSON(l []any) {
	sort.Slice(l, func(i, j int) bool {
		a, _ := json.Marshal(l[i])
		b, _ := json.Marshal(l[j])
		return string(a) < string(b)
	})
}
