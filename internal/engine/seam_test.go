package engine

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
)

// tree is one tree as a build reads it: where it lies and what reads it.
type tree struct {
	name string
	dir  string
	fs   loaders.FS
}

// seamTrees writes files (executable when their name ends in .sh) to
// disk and commits them to a git repository kept apart, and returns the
// tree three ways: the disk's directory, the commit's tree read from git's
// objects and an fstest.MapFS, both mounted at paths that name nothing on
// disk.
func seamTrees(t *testing.T, files map[string]string) []tree {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed (apt-get install git)")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mem := fstest.MapFS{}
	for p, c := range files {
		mode := fs.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
		mem[p] = &fstest.MapFile{Data: []byte(c), Mode: mode}
	}
	virtual := t.TempDir()
	return []tree{
		{"disk", dir, loaders.Disk},
		{"git", filepath.Join(virtual, "repo@commit"), loaders.NewFS(gitTree(t, dir), filepath.Join(virtual, "repo@commit"))},
		{"memory", filepath.Join(virtual, "mem"), loaders.NewFS(mem, filepath.Join(virtual, "mem"))},
	}
}

// buildIn builds the roots (relative to the tree) of tr with opts and a
// file index of store, and returns their outputs (or errors) and the
// builder's counts.
func buildIn(t *testing.T, tr tree, roots []string, opts Options, store *cache.Store) ([]string, Stats) {
	t.Helper()
	var dirs []string
	for _, r := range roots {
		dirs = append(dirs, filepath.Join(tr.dir, filepath.FromSlash(r)))
	}
	g, errs := LoadContext(context.Background(), dirs, LoadOptions{FS: tr.fs, Restriction: loaders.RootOnly})
	if store != nil {
		opts.Cache = Cache{Store: store, Files: store.FileIndex(), Version: "test"}
	}
	b := NewBuilder(g, opts)
	var out []string
	for _, res := range b.Run(context.Background(), errs) {
		if res.Err != nil {
			out = append(out, "error: "+strings.ReplaceAll(res.Err.Error(), tr.dir, "TREE"))
			continue
		}
		out = append(out, string(res.YAML))
	}
	if store != nil {
		_ = opts.Cache.Files.Save("")
		store.Flush()
	}
	return out, b.Stats()
}

// seamTree is a tree of the usual shape: a base with a generator reading
// files and a patch, two overlays, a component.
var seamTree = map[string]string{
	"base/kustomization.yaml": "resources:\n- deploy.yaml\nconfigMapGenerator:\n- name: cfg\n  files:\n  - app.properties\npatches:\n- path: patch.yaml\n",
	"base/deploy.yaml":        deployment,
	"base/app.properties":     "mode=fast\n",
	"base/patch.yaml":         "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  replicas: 2\n",
	"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  team: a\n",
	"prod/kustomization.yaml": "namePrefix: prod-\nresources:\n- ../base\ncomponents:\n- ../comp\n",
	"dev/kustomization.yaml":  "namePrefix: dev-\nresources:\n- ../base\n",
}

// TestCacheKeysAcrossSeams: a tree read from disk, from a git commit and
// from memory is keyed alike, so that whichever builds it first, the
// others build nothing and print the same bytes (a kpipe diff after a
// build-all of the same commit builds nothing on that side); a changed
// file is still a changed key.
func TestCacheKeysAcrossSeams(t *testing.T) {
	trees := seamTrees(t, seamTree)
	roots := []string{"prod", "dev"}
	for first := range trees {
		t.Run(trees[first].name+" first", func(t *testing.T) {
			store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
			defer store.Close()
			want, st := buildIn(t, trees[first], roots, Options{Jobs: 2}, store)
			if st.NodesBuilt == 0 || strings.HasPrefix(want[0], "error") {
				t.Fatalf("first build: %d nodes built, %v", st.NodesBuilt, want)
			}
			for _, tr := range trees {
				got, st := buildIn(t, tr, roots, Options{Jobs: 2}, store)
				if st.NodesBuilt != 0 {
					t.Errorf("%s after %s: %d nodes built, want none", tr.name, trees[first].name, st.NodesBuilt)
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s: output differs from %s's:\n%s\n---\n%s", tr.name, trees[first].name, got, want)
				}
			}
		})
	}
	// The same tree but for one generator file: its nodes are built.
	changed := map[string]string{}
	for p, c := range seamTree {
		changed[p] = c
	}
	changed["base/app.properties"] = "mode=slow\n"
	for _, tr := range seamTrees(t, changed)[1:] {
		store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
		defer store.Close()
		buildIn(t, trees[0], roots, Options{Jobs: 2}, store)
		got, st := buildIn(t, tr, roots, Options{Jobs: 2}, store)
		if st.NodesBuilt != 3 || !strings.Contains(got[0], "mode=slow") {
			t.Errorf("%s with a changed file: %d nodes built (want base, prod, dev), output\n%s", tr.name, st.NodesBuilt, got[0])
		}
	}
}

// TestPluginsOfATreeNotOnDisk: a KRM exec function of a tree read from
// git or memory runs in a copy of its kustomization's directory (with its
// executable bits, and the script it names outside it), written for the
// build and removed after it; its output is the disk's. Helm reads its
// chart through the seam.
func TestPluginsOfATreeNotOnDisk(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the functions are shell scripts")
	}
	files := map[string]string{
		"app/kustomization.yaml": "resources:\n- deploy.yaml\ntransformers:\n- fn.yaml\n- fn2.yaml\n",
		"app/deploy.yaml":        deployment,
		"app/secret.enc":         "s3cret\n",
		"app/fn.yaml": `apiVersion: example.com/v1
kind: Retagger
metadata:
  name: retag
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ./retag.sh
`,
		"app/fn2.yaml": `apiVersion: example.com/v1
kind: Where
metadata:
  name: where
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ../fns/where.sh
`,
		// Reads a file beside its config, as KSOPS does.
		"app/retag.sh": "#!/bin/sh\nv=$(cat secret.enc)\nsed \"s/image: nginx\\$/image: nginx:$v/\"\n",
		// Says where it ran.
		"fns/where.sh":                    "#!/bin/sh\nsed \"s|- sleep\\$|- ran-in:$PWD|\"\n",
		"chart/kustomization.yaml":        "helmCharts:\n- name: c\n  releaseName: r\n  namespace: ns\n",
		"chart/charts/c/Chart.yaml":       "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"chart/charts/c/values.yaml":      "",
		"chart/charts/c/templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: NAMESPACE\n",
	}
	trees := seamTrees(t, files)
	opts := Options{Jobs: 2, EnableAlphaPlugins: true, EnableExec: true, EnableHelm: true,
		Helm: HelmOptions{Command: fakeHelmCommand(t)}, PluginEnviron: pluginEnv(t.TempDir())}
	var want []string
	for _, tr := range trees {
		got, _ := buildIn(t, tr, []string{"app", "chart"}, opts, nil)
		if !strings.Contains(got[0], "image: nginx:s3cret") || !strings.Contains(got[1], "namespace: ns") {
			t.Fatalf("%s: the function or helm did not run:\n%s", tr.name, got)
		}
		_, ran, _ := strings.Cut(got[0], "ran-in:")
		ran, _, _ = strings.Cut(ran, "\n")
		switch {
		case tr.name == "disk" && ran != filepath.Join(tr.dir, "app"):
			t.Errorf("disk: the function ran in %s", ran)
		case tr.name != "disk" && (loaders.Within(tr.dir, ran) || !strings.HasSuffix(ran, filepath.Join(tr.dir, "app"))):
			t.Errorf("%s: the function ran in %s, want a copy of %s", tr.name, ran, filepath.Join(tr.dir, "app"))
		}
		if _, err := os.Stat(ran); tr.name != "disk" && !os.IsNotExist(err) {
			t.Errorf("%s: the copy %s is still there after the build", tr.name, ran)
		}
		got[0] = strings.ReplaceAll(got[0], ran, "DIR")
		if want == nil {
			want = got
		} else if strings.Join(got, "---") != strings.Join(want, "---") {
			t.Errorf("%s: output differs from the disk's:\n%s\n---\n%s", tr.name, got, want)
		}
	}
}
