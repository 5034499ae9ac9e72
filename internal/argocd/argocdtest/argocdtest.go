// Package argocdtest loads the Argo CD reference cases for the tests of
// the internal/argocd packages: the cases kept in internal/argocd/testdata
// (the synthetic repository and the cases over it, with what Argo CD
// v3.6.1 produced for them, recorded by the argocd-oracle reference
// program) and, when present, the whole recorded corpus (450 Application
// cases over real repositories, 173 ApplicationSet cases): the directory
// named by $KPIPE_ARGOCD_CORPUS, else /work/ref/argocd-corpus. Tests that
// need the corpus skip with a message naming it when it is absent.
//
// Only tests import it.
package argocdtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/render"
)

// SyntheticURL is the synthetic repository's URL in the cases.
const SyntheticURL = "https://example.com/kpipe/synthetic.git"

// Testdata is internal/argocd/testdata.
func Testdata() string {
	_, f, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(filepath.Dir(f)), "testdata")
}

// CorpusDir is the recorded corpus, "" when absent.
func CorpusDir() string {
	d := os.Getenv("KPIPE_ARGOCD_CORPUS")
	if d == "" {
		d = "/work/ref/argocd-corpus"
	}
	if fi, err := os.Stat(filepath.Join(d, "apps")); err == nil && fi.IsDir() {
		return d
	}
	return ""
}

// Corpus returns the corpus directory or skips t.
func Corpus(t testing.TB) string {
	d := CorpusDir()
	if d == "" {
		t.Skip("Argo CD reference corpus not found (set KPIPE_ARGOCD_CORPUS; /work/ref/argocd-corpus, recorded by /work/ref/bin/argocd-oracle)")
	}
	return d
}

// SourceResult is the oracle's record of one source.
type SourceResult struct {
	Index      int               `json:"index"`
	RepoURL    string            `json:"repoURL"`
	Path       string            `json:"path"`
	SourceType string            `json:"sourceType"`
	Commands   []string          `json:"commands"`
	Manifests  []json.RawMessage `json:"manifests"`
	Skipped    string            `json:"skipped"`
	Error      string            `json:"error"`
	GRPCCode   string            `json:"grpcCode"`
}

// Result is the oracle's record of an Application.
type Result struct {
	App        string            `json:"app"`
	AppName    string            `json:"appInstanceName"`
	Sources    []SourceResult    `json:"sources"`
	Manifests  []json.RawMessage `json:"manifests"`
	Normalized []json.RawMessage `json:"normalized"`
	Conditions []string          `json:"conditions"`
	Error      string            `json:"error"`
	Skipped    string            `json:"skipped"`
	Settings   struct {
		APIVersions    []string `json:"apiVersions"`
		AppLabelKey    string   `json:"appLabelKey"`
		BuildOptions   string   `json:"buildOptions"`
		InstallationID string   `json:"installationID"`
		KubeVersion    string   `json:"kubeVersion"`
		Revision       string   `json:"revision"`
		TrackingMethod string   `json:"trackingMethod"`
	} `json:"settings"`
}

// Case is one Application case.
type Case struct {
	ID     string
	Dir    string
	App    []byte
	Repos  map[string]string // repoURL -> local checkout
	Args   []string          // the oracle's settings flags
	Result Result
	Exit   int
	// Edits are the kustomization files Argo CD's edits left in its
	// checkout: path -> content (from edits/ beside the case).
	Edits map[string][]byte
	// Missing names a repository the case needs that is not here.
	Missing string

	trees *trees
}

// Arg returns the value of the oracle flag name, or def.
func (c *Case) Arg(name, def string) string {
	for i := 0; i+1 < len(c.Args); i++ {
		if c.Args[i] == "-"+name {
			return c.Args[i+1]
		}
	}
	return def
}

// Checkout returns the local checkout of repoURL (a render.Tree), as
// Argo CD's messages name it ("<path to cached source>").
func (c *Case) Checkout(repoURL string) (app.Checkout, bool) {
	for u, d := range c.Repos {
		if app.NormalizeGitURL(u) == app.NormalizeGitURL(repoURL) {
			t, err := c.trees.get(d)
			if err != nil {
				return app.Checkout{}, false
			}
			return app.Checkout{FS: t, Root: "<path to cached source>"}, true
		}
	}
	return app.Checkout{}, false
}

// Cases returns the kept cases and, when the corpus is present, all of
// the corpus's (kept ones once), sorted by id.
func Cases(t testing.TB) []*Case {
	seen := map[string]bool{}
	ts := &trees{m: map[string]*render.Tree{}}
	var out []*Case
	kept := filepath.Join(Testdata(), "apps")
	corpus := CorpusDir()
	add := func(dir, editsDir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if seen[e.Name()] {
				continue
			}
			seen[e.Name()] = true
			c := load(t, filepath.Join(dir, e.Name()), filepath.Join(editsDir, e.Name(), "files"), corpus)
			c.trees = ts
			out = append(out, c)
		}
	}
	if corpus != "" {
		add(filepath.Join(corpus, "apps"), filepath.Join(corpus, "edits"))
	}
	add(kept, "")
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func load(t testing.TB, dir, editsDir, corpus string) *Case {
	c := &Case{ID: filepath.Base(dir), Dir: dir, Edits: map[string][]byte{}}
	var err error
	if c.App, err = os.ReadFile(filepath.Join(dir, "app.yaml")); err != nil {
		t.Fatal(err)
	}
	var cj struct {
		Repos map[string]string `json:"repos"`
		Args  []string          `json:"args"`
	}
	readJSON(t, filepath.Join(dir, "case.json"), &cj)
	readJSON(t, filepath.Join(dir, "result.json"), &c.Result)
	ex, _ := os.ReadFile(filepath.Join(dir, "exit"))
	c.Exit, _ = strconv.Atoi(strings.TrimSpace(string(ex)))
	c.Args = cj.Args
	c.Repos = map[string]string{}
	for u, d := range cj.Repos {
		if corpus == "" || !exists(d) {
			if strings.HasSuffix(d, "/repos/synthetic") {
				d = filepath.Join(Testdata(), "synthetic")
			} else if corpus != "" && strings.Contains(d, "/argocd-corpus/") {
				d = filepath.Join(corpus, d[strings.Index(d, "/argocd-corpus/")+len("/argocd-corpus/"):])
			}
		}
		if !exists(d) {
			c.Missing = d
			continue
		}
		c.Repos[u] = d
	}
	edits := editsDir
	if !exists(edits) {
		edits = filepath.Join(dir, "edits")
	}
	filepath.WalkDir(edits, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".edited") {
			rel, _ := filepath.Rel(edits, strings.TrimSuffix(p, ".edited"))
			b, _ := os.ReadFile(p)
			c.Edits[filepath.ToSlash(rel)] = b
		}
		return nil
	})
	return c
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func readJSON(t testing.TB, p string, v any) {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
}

// Kept reports a case kept in testdata (always run, must match).
func Kept(id string) bool {
	_, err := os.Stat(filepath.Join(Testdata(), "apps", id))
	return err == nil
}

// Unstable reports a case the corpus lists in unstable.txt (its output
// differs from run to run: a chart generating random secrets).
func Unstable(id string) bool {
	d := CorpusDir()
	if d == "" {
		return false
	}
	b, _ := os.ReadFile(filepath.Join(d, "unstable.txt"))
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == id {
			return true
		}
	}
	return false
}
