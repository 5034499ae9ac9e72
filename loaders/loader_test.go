package loaders

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadTreeReadsEveryFileAndReportsThem(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	for p, content := range map[string]string{
		"charts/c/Chart.yaml":          "name: c\n",
		"charts/c/templates/a.yaml":    "a\n",
		"charts/c/templates/sub/b.tpl": "b\n",
		"shared.tpl":                   "shared\n",
	} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "ext.yaml"), []byte("ext\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// helm follows symlinks in a chart, to files and to directories.
	if err := os.Symlink(filepath.Join(root, "shared.tpl"), filepath.Join(root, "charts/c/templates/shared.tpl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "charts/c/linked")); err != nil {
		t.Fatal(err)
	}
	l, err := New(Disk, root, RootOnly)
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	var trees []string
	l.OnRead(func(path, real string, data []byte, _ os.FileInfo) { read = append(read, path) })
	l.OnReadTree(func(path, real string, listing []byte) { trees = append(trees, path+"\n"+string(listing)) })
	files, real, err := l.ReadTree("charts/c")
	if err != nil {
		t.Fatal(err)
	}
	if real != filepath.Join(root, "charts/c") {
		t.Errorf("real path %s", real)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Rel+"="+strings.TrimSpace(string(f.Data)))
	}
	want := []string{"Chart.yaml=name: c", "linked/ext.yaml=ext", "templates/a.yaml=a", "templates/shared.tpl=shared", "templates/sub/b.tpl=b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("files:\n got %v\nwant %v", got, want)
	}
	if len(read) != len(want) || read[0] != filepath.Join("charts/c", "Chart.yaml") {
		t.Errorf("OnRead saw %v", read)
	}
	listing, err := TreeListing(Disk, real)
	if err != nil {
		t.Fatal(err)
	}
	wantListing := "Chart.yaml\nlinked/ext.yaml\ntemplates/a.yaml\ntemplates/shared.tpl\ntemplates/sub/b.tpl\n"
	if string(listing) != wantListing || !reflect.DeepEqual(trees, []string{"charts/c\n" + wantListing}) {
		t.Errorf("listing %q, OnReadTree saw %q", listing, trees)
	}
	if _, _, err := l.ReadTree("charts/c/Chart.yaml"); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("ReadTree of a file: %v", err)
	}
}

func TestDeprecatedHelmChartInflationGeneratorBecomesHelmCharts(t *testing.T) {
	k, _, err := parseKustomization([]byte(`
helmChartInflationGenerator:
- chartName: one
  chartHome: mycharts
  helmHome: /tmp/helmhome
  chartVersion: 1.0.0
  chartRepoUrl: https://example.com
  releaseName: r1
  releaseNamespace: ignored
  values: v.yaml
  valuesLocal: {a: 1}
  valuesMerge: merge
  extraArgs: [--ignored]
- chartName: two
  chartHome: other
`))
	if err != nil {
		t.Fatal(err)
	}
	if k.HelmChartInflationGenerator != nil {
		t.Error("helmChartInflationGenerator kept")
	}
	if !reflect.DeepEqual(k.HelmGlobals, &HelmGlobals{ChartHome: "mycharts", ConfigHome: "/tmp/helmhome"}) {
		t.Errorf("helmGlobals %+v", k.HelmGlobals)
	}
	want := []HelmChart{
		{Name: "one", Version: "1.0.0", Repo: "https://example.com", ReleaseName: "r1", ValuesFile: "v.yaml",
			ValuesInline: map[string]any{"a": 1.0}, ValuesMerge: "merge"},
		{Name: "two"},
	}
	if !reflect.DeepEqual(k.HelmCharts, want) {
		t.Errorf("helmCharts:\n got %+v\nwant %+v", k.HelmCharts, want)
	}
}
