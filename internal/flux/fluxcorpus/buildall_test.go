package fluxcorpus

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/internal/flux/cluster"
)

// recursiveArgs are the flags of a --recursive case that matter here.
type recursiveArgs struct {
	name, path, ksFile, namespace string
	localSources                  map[string]string
}

func parseRecursive(t testing.TB, argv []string) recursiveArgs {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var a recursiveArgs
	fs.StringVar(&a.path, "path", "", "")
	fs.StringVar(&a.ksFile, "kustomization-file", "", "")
	fs.StringVarP(&a.namespace, "namespace", "n", flux.DefaultNamespace, "")
	fs.StringToStringVar(&a.localSources, "local-sources", nil, "")
	fs.BoolP("recursive", "r", false, "")
	fs.Bool("dry-run", false, "")
	if err := fs.Parse(argv[2:]); err != nil {
		t.Fatal(err)
	}
	a.name = fs.Arg(0)
	return a
}

// concat is what flux build --recursive prints for id: its output, then,
// depth first, its children's (as they appear in its output).
func concat(t testing.TB, byID map[string]*cluster.Result, id string, depth int) string {
	res := byID[id]
	if res == nil || depth > 64 {
		t.Fatalf("no result for %s", id)
	}
	out := string(res.YAML)
	for _, raw := range res.Children {
		var obj struct {
			Metadata struct{ Name, Namespace string }
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		child := obj.Metadata.Namespace + "/" + obj.Metadata.Name
		if child == id {
			continue
		}
		out += concat(t, byID, child, depth+1)
	}
	return out
}

// TestRealCorpusBuildAll renders, with the machinery of kpipe flux
// build-all (package cluster: each Flux Kustomization once, a node of its
// own, with flux build's --dry-run settings), the roots of the corpus's
// whole-cluster runs (flux build kustomization --recursive), and compares
// the outputs, concatenated in flux's order, with flux's stdout; for the
// runs flux refused, some Kustomization must fail.
func TestRealCorpusBuildAll(t *testing.T) {
	corpus := os.Getenv("KPIPE_FLUX_CORPUS")
	if corpus == "" {
		t.Skip("set KPIPE_FLUX_CORPUS to the reference corpus directory (e.g. /work/ref/flux-corpus)")
	}
	dirs, err := filepath.Glob(filepath.Join(corpus, "cases", "*", "*.recursive", "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	counts := tally{}
	for _, f := range dirs {
		c, err := readCase(filepath.Dir(f))
		if err != nil {
			t.Fatal(err)
		}
		if c.NetworkDependent {
			continue
		}
		a := parseRecursive(t, c.Argv)
		data, err := os.ReadFile(filepath.Join(c.Cwd, a.ksFile))
		if err != nil {
			continue // (refused before: no such file)
		}
		k, err := flux.Find(data, a.ksFile, a.name, a.namespace)
		if err != nil {
			counts.add(c.Status, classMatch) // refused as flux refused (its own test covers the words)
			continue
		}
		root := cluster.Root{K: k, Dir: filepath.Join(c.Cwd, a.path)}
		rep, err := cluster.Run(context.Background(), []cluster.Root{root}, cluster.Options{Cwd: c.Cwd, SourceRoot: c.Root,
			LocalSources: a.localSources, DryRun: true, Engine: engine.Options{Jobs: 2}})
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]*cluster.Result{}
		failed := ""
		for i, rr := range rep.Roots {
			byID[rr.Path] = rep.Result(i)
			if rr.Status == "error" && failed == "" {
				failed = rr.Path + ": " + rr.Error
			}
		}
		want, _ := c.want(t)
		switch {
		case c.RC != 0 && failed != "":
			counts.add(c.Status, classMatch)
		case c.RC != 0:
			counts.add(c.Status, classMiss)
			t.Errorf("%s/%s: flux refused, every Kustomization rendered", c.Repo, c.Case)
		case failed != "":
			counts.add(c.Status, classMiss)
			t.Errorf("%s/%s: %s", c.Repo, c.Case, failed)
		default:
			got := concat(t, byID, k.Namespace+"/"+k.Name, 0)
			if got != want {
				counts.add(c.Status, classMiss)
				t.Errorf("%s/%s: output differs:\n%s", c.Repo, c.Case, firstDiff(got, want))
				continue
			}
			counts.add(c.Status, classMatch)
			t.Logf("%s/%s: %d Kustomizations, %d documents", c.Repo, c.Case, len(rep.Roots), strings.Count(got, "---\n"))
		}
	}
	counts.log(t)
}
