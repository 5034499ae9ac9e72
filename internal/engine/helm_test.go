package engine

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
)

// fakeHelmCommand writes a stand-in for helm: `template` prints the chart's
// templates/*.yaml with NAMESPACE replaced by its --namespace.
func fakeHelmCommand(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake helm is a shell script")
	}
	script := `#!/bin/sh
if [ "$1" = version ]; then echo v3.10.2; exit 0; fi
chart=$3
ns=default
prev=
for a in "$@"; do
  if [ "$prev" = --namespace ]; then ns=$a; fi
  prev=$a
done
for f in "$chart"/templates/*.yaml; do echo ---; sed "s/NAMESPACE/$ns/" "$f"; done
`
	p := filepath.Join(t.TempDir(), "fakehelm")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// helmBuild builds root and returns its YAML or error.
func helmBuild(t *testing.T, root string, opts Options, store *cache.Store) string {
	t.Helper()
	out, _ := helmBuildStats(t, root, opts, store)
	return out
}

func helmBuildStats(t *testing.T, root string, opts Options, store *cache.Store) (string, Stats) {
	t.Helper()
	g, errs := Load([]string{root}, loaders.RootOnly)
	if store != nil {
		files, _ := cache.LoadFileIndex(store.Dir())
		opts.Cache = Cache{Store: store, Files: files, Version: "test"}
	}
	b := NewBuilder(g, opts)
	res := b.Run(context.Background(), errs)[0]
	if store != nil {
		_ = opts.Cache.Files.Save(store.Dir())
		store.Flush()
	}
	if res.Err != nil {
		return "error: " + res.Err.Error(), b.Stats()
	}
	return string(res.YAML), b.Stats()
}

// listFiles lists every file below dir.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestHelmChartsWithCache(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"overlay/kustomization.yaml":           "namespace: prod\nnamePrefix: o-\nresources:\n- ../base\n",
		"base/kustomization.yaml":              "helmCharts:\n- name: c\n  releaseName: r\n",
		"base/charts/c/Chart.yaml":             "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"base/charts/c/values.yaml":            "",
		"base/charts/c/templates/a.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: NAMESPACE\n",
		"base/charts/c/templates/notyaml.tpl":  "ignored by the fake helm\n",
		"base/charts/c/templates/sub/.keep.md": "",
	})
	overlay := filepath.Join(dir, "overlay")
	opts := Options{Jobs: 2, EnableHelm: true, Helm: HelmOptions{Command: fakeHelmCommand(t)}}
	before := listFiles(t, dir)
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	if store == nil {
		t.Fatal("cache did not open")
	}
	defer store.Close()

	want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o-a\n  namespace: prod\n"
	if got := helmBuild(t, overlay, opts, store); got != want {
		t.Fatalf("first build:\n%s\nwant (the overlay's namespace reaches helm; the build annotation is gone)\n%s", got, want)
	}
	if got, st := helmBuildStats(t, overlay, opts, store); got != want || st.RootsCached != 1 {
		t.Fatalf("warm build (%d roots from the cache):\n%s\nwant\n%s", st.RootsCached, got, want)
	}
	if after := listFiles(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("the build wrote into the tree:\nbefore %v\nafter  %v", before, after)
	}

	// A template added to the chart (no file the node read before changed)
	// must not be answered from the cache.
	b := filepath.Join(dir, "base/charts/c/templates/b.yaml")
	if err := os.WriteFile(b, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want2 := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o-a\n  namespace: prod\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: o-b\n"
	if got := helmBuild(t, overlay, opts, store); got != want2 {
		t.Fatalf("after adding a template:\n%s\nwant\n%s", got, want2)
	}
	if cold := helmBuild(t, overlay, opts, nil); cold != want2 {
		t.Fatalf("cold build after adding a template:\n%s", cold)
	}
	// And one removed again.
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	if got := helmBuild(t, overlay, opts, store); got != want {
		t.Fatalf("after removing the template:\n%s\nwant\n%s", got, want)
	}
}

func TestHelmChartsNeedEnableHelmAndHelm(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"kustomization.yaml":        "helmCharts:\n- name: c\n  releaseName: r\n",
		"charts/c/Chart.yaml":       "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"charts/c/values.yaml":      "",
		"charts/c/templates/a.yaml": "",
	})
	kfile := filepath.Join(dir, "kustomization.yaml")
	got := helmBuild(t, dir, Options{}, nil)
	want := "error: " + kfile + ": helmCharts \"c\": trouble configuring builtin HelmChartInflationGenerator with config: `\nname: c\nreleaseName: r\n`: must specify --enable-helm"
	if got != want {
		t.Errorf("without --enable-helm:\n got %s\nwant %s", got, want)
	}
	got = helmBuild(t, dir, Options{EnableHelm: true, Helm: HelmOptions{Command: "kpipe-test-no-such-helm"}}, nil)
	for _, w := range []string{kfile + `: helmCharts "c": `, "is 'kpipe-test-no-such-helm' installed?"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing helm: %s\ndoes not contain %q", got, w)
		}
	}
	// --enable-alpha-plugins enables helm too, as in kustomize.
	if got := helmBuild(t, dir, Options{EnableAlphaPlugins: true, Helm: HelmOptions{Command: fakeHelmCommand(t)}}, nil); got != "" {
		t.Errorf("with --enable-alpha-plugins: %q", got)
	}
}
