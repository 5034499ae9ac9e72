package helmrelease

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/helmtest"

	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/flux/helmrelease/internal/hroracle"
)

// The reference corpus (/work/ref/flux-corpus, README there): what the
// flux CLI rendered from real Flux repositories, and cases-hr/, the
// HelmReleases with in-repository charts, their values as helm-controller's
// code merges them and `helm template` of them (helm v3.10.2 and v4). It
// is read from $KPIPE_FLUX_CORPUS, never committed.
//
//	KPIPE_FLUX_CORPUS=/work/ref/flux-corpus go test ./internal/flux/helmrelease -run Corpus -v

func corpusDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("KPIPE_FLUX_CORPUS")
	if d == "" {
		t.Skip("KPIPE_FLUX_CORPUS is not set (the reference corpus, e.g. /work/ref/flux-corpus)")
	}
	return d
}

// hrCase is a cases-hr/<repo>/<ns>.<name>/case.json.
type hrCase struct {
	Repo             string `json:"repo"`
	Root             string `json:"root"`
	ChartDir         string `json:"chart_dir"`
	ReleaseName      string `json:"release_name"`
	ReleaseNamespace string `json:"release_namespace"`
	CRDsPolicy       string `json:"crds_policy"`
	Skipped          string `json:"skipped"`
	ValuesRC         int    `json:"values_rc"`
	ValuesError      string `json:"values_error"`
	Helm3            struct {
		Argv []string `json:"argv"`
		RC   int      `json:"rc"`
	} `json:"helm3"`
	Helm3EqualsHelm4 bool `json:"helm3_equals_helm4"`
}

// TestCorpusHRCases renders the corpus' HelmReleases with in-repository
// charts: values equal to helm-controller's (byte for byte as the oracle
// printed them), release name and namespace, the chart directory, and
// `helm template` (v3.10.2) with the command Template builds: without
// --skip-tests it must print exactly the recorded output, with it the
// recorded output less the test hooks.
func TestCorpusHRCases(t *testing.T) {
	root := filepath.Join(corpusDir(t), "cases-hr")
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "*", "case.json"))
	if len(dirs) == 0 {
		t.Fatalf("no cases under %s", root)
	}
	helm := helmtest.V3(t)
	for _, p := range dirs {
		dir := filepath.Dir(p)
		name, _ := filepath.Rel(root, dir)
		t.Run(name, func(t *testing.T) {
			var c hrCase
			readJSON(t, p, &c)
			if c.Skipped != "" {
				t.Skip(c.Skipped)
			}
			hrText := readFile(t, filepath.Join(dir, "hr.yaml"))
			hr, err := Parse(hrText, Options{AllowV2Beta2: true})
			if err != nil {
				t.Fatal(err)
			}
			decoded, err := DecodeObjects(readFile(t, filepath.Join(dir, "objects.yaml")))
			if err != nil {
				t.Fatal(err)
			}
			objs := NewObjects()
			objs.Add(decoded...)
			vals, _, err := Values(hr, objs)
			if c.ValuesRC != 0 {
				if err == nil || err.Error() != strings.TrimPrefix(c.ValuesError, "ERROR: ") {
					t.Fatalf("values: %v, helm-controller's code says %s", err, c.ValuesError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			printed, err := yaml.Marshal(vals)
			if err != nil {
				t.Fatal(err)
			}
			if want := readFile(t, filepath.Join(dir, "values.yaml")); !bytes.Equal(printed, want) {
				t.Fatalf("values\n%s\nhelm-controller's code merges\n%s", printed, want)
			}
			if hr.ReleaseName() != c.ReleaseName || hr.ReleaseNamespace() != c.ReleaseNamespace {
				t.Fatalf("release %s/%s, want %s/%s", hr.ReleaseNamespace(), hr.ReleaseName(), c.ReleaseNamespace, c.ReleaseName)
			}
			if _, err := os.Stat(c.Root); err != nil {
				t.Skipf("the repository is not checked out: %v", err)
			}
			cs, err := ResolveChart(hr, objs, ResolveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			src, ok := cs.LocalSource(map[string]string{cs.Kind + "/" + cs.Namespace + "/" + cs.Name: c.Root})
			if !ok || cs.Type != TypeGit {
				t.Fatalf("not a git source: %+v", cs)
			}
			chart, err := LocalChart(LocalChartOptions{Root: src, Chart: cs.Chart, ValuesFiles: cs.ValuesFiles})
			if err != nil {
				t.Fatal(err)
			}
			if chart != c.ChartDir {
				t.Fatalf("chart %s, want %s", chart, c.ChartDir)
			}
			work := t.TempDir()
			cmd, err := Template(hr, vals, TemplateOptions{Helm: helm, Chart: chart, Dir: work})
			if err != nil {
				t.Fatal(err)
			}
			for p, data := range cmd.Files {
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := readFile(t, filepath.Join(dir, "helm3.stdout"))
			var all []string
			for _, a := range cmd.Args {
				if a != "--skip-tests" {
					all = append(all, a)
				}
			}
			if got := helmtest.Run(t, work, all...); !bytes.Equal(got, want) {
				t.Fatalf("helm template %q printed\n%s\nthe corpus recorded\n%s", all[1:], got, want)
			}
			got := helmtest.Run(t, work, cmd.Args...)
			if wantNoTests := dropTestHooks(t, want); !bytes.Equal(got, wantNoTests) {
				t.Fatalf("helm template %q printed\n%s\nthe corpus recorded, less its test hooks\n%s", cmd.Args[1:], got, wantNoTests)
			}
			if cs.ReconcileStrategy == "Revision" {
				t.Logf("reconcileStrategy Revision: helm-controller renders the chart's version with +<the commit's first 12 hex digits> (VersionMetadata); the corpus' output, like this one, has none")
			}
			if !c.Helm3EqualsHelm4 {
				h4 := readFile(t, filepath.Join(dir, "helm4.stdout"))
				if !sameDocuments(t, want, h4) {
					t.Errorf("helm v4 renders other objects than helm v3.10.2")
				}
				t.Logf("helm v4's bytes differ from v3.10.2's, its objects do not")
			}
		})
	}
}

// dropTestHooks removes the documents of helm's output that are test
// hooks.
func dropTestHooks(t *testing.T, out []byte) []byte {
	t.Helper()
	var kept [][]byte
	for _, doc := range bytes.SplitAfter(out, []byte("---\n")) {
		body := bytes.TrimSuffix(doc, []byte("---\n"))
		var obj struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(body, &obj); err == nil && strings.Contains(obj.Metadata.Annotations["helm.sh/hook"], "test") {
			// The separator before it goes with it.
			if n := len(kept); n > 0 {
				kept[n-1] = bytes.TrimSuffix(kept[n-1], []byte("---\n"))
			}
			if bytes.HasSuffix(doc, []byte("---\n")) {
				kept = append(kept, []byte("---\n"))
			}
			continue
		}
		kept = append(kept, doc)
	}
	return bytes.Join(kept, nil)
}

// sameDocuments reports whether two helm outputs hold the same objects in
// the same order.
func sameDocuments(t *testing.T, a, b []byte) bool {
	t.Helper()
	da, err := DecodeObjects(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := DecodeObjects(b)
	if err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(da, db)
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readJSON(t *testing.T, p string, v any) {
	t.Helper()
	if err := json.Unmarshal(readFile(t, p), v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
}

// keptKinds picks, before decoding, the documents of flux's output worth
// reading (flux prints the top-level keys sorted: "kind:" starts a line).
var keptKinds = regexp.MustCompile(`(?m)^kind: (HelmRelease|ConfigMap|Secret|HelmRepository|OCIRepository|GitRepository|HelmChart|ExternalArtifact|Bucket)\s*$`)

// corpusRepo is what one repository's Flux Kustomizations render, as
// hr_collect.py gathers it: every case's output, the first object of each
// kind/namespace/name kept.
type corpusRepo struct {
	name  string
	local map[[2]string]bool // kind, name of the sources that are the repository
	hrs   []map[string]any   // sorted by namespace/name
	objs  *Objects
	docs  map[string]map[string]any // kind/ns/name -> object (ConfigMaps, Secrets)
}

func loadCorpusRepo(t *testing.T, dir string) *corpusRepo {
	t.Helper()
	var index struct {
		LocalSources []string `json:"local_sources"`
	}
	readJSON(t, filepath.Join(dir, "index.json"), &index)
	r := &corpusRepo{name: filepath.Base(dir), local: map[[2]string]bool{}, objs: NewObjects(), docs: map[string]map[string]any{}}
	for _, ls := range index.LocalSources {
		kind, name, _ := strings.Cut(ls, "/")
		r.local[[2]string{kind, name}] = true
	}
	outs, _ := filepath.Glob(filepath.Join(dir, "*", "stdout"))
	sort.Strings(outs)
	hrs := map[string]map[string]any{}
	for _, out := range outs {
		data := readFile(t, out)
		if !keptKinds.Match(data) {
			continue
		}
		for _, doc := range splitDocuments(data) {
			if !keptKinds.Match(doc) {
				continue
			}
			objs, err := DecodeObjects(doc)
			if err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			for _, obj := range objs {
				kind, _ := obj["kind"].(string)
				meta, _ := obj["metadata"].(map[string]any)
				key := fmt.Sprintf("%s/%v/%v", kind, meta["namespace"], meta["name"])
				if IsHelmRelease(obj) {
					if _, ok := hrs[key]; !ok {
						hrs[key] = obj
					}
					continue
				}
				r.objs.Add(obj)
				if _, ok := r.docs[key]; !ok && (kind == "ConfigMap" || kind == "Secret") {
					r.docs[key] = obj
				}
			}
		}
	}
	keys := make([]string, 0, len(hrs))
	for k := range hrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r.hrs = append(r.hrs, hrs[k])
	}
	return r
}

// objectsStream is the ConfigMaps and Secrets of a namespace as a JSON
// stream, for the oracle.
func (r *corpusRepo) objectsStream(t *testing.T, ns string) string {
	var b strings.Builder
	keys := make([]string, 0, len(r.docs))
	for k := range r.docs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		obj := r.docs[k]
		meta, _ := obj["metadata"].(map[string]any)
		if objNS, _ := meta["namespace"].(string); objNS != ns {
			continue
		}
		j, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteString("\n")
	}
	return b.String()
}

// TestCorpusHelmReleases reads every HelmRelease the corpus' Flux
// Kustomizations render (hr_collect.py's census: 651), resolves its chart
// source and merges its values from the ConfigMaps and Secrets the same
// repository renders; with the oracle (tools/hroracle) it checks every
// values merge against helm-controller's code, errors included. It fails
// on a HelmRelease it cannot parse, a source census that is not the
// corpus' (SUMMARY.md), or any values difference.
func TestCorpusHelmReleases(t *testing.T) {
	root := filepath.Join(corpusDir(t), "cases")
	var o *hroracle.Oracle
	if os.Getenv("KPIPE_HR_NO_ORACLE") == "" {
		o = hroracle.Start(t)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "index.json"))
	census := map[string]int{}
	var total, refused, valuesOK, valuesErr, valuesSame, valuesErrSame, masked int
	errKinds := map[string]int{}
	for _, p := range dirs {
		r := loadCorpusRepo(t, filepath.Dir(p))
		for _, obj := range r.hrs {
			total++
			hr, err := FromObject(obj, Options{AllowV2Beta2: true})
			switch {
			case err == nil:
			case obj["apiVersion"] == Group+"/v2beta1" || strings.HasPrefix(err.Error(), "HelmRelease."+Group+" \""):
				// Refused (v2beta1 is not served since helm-controller
				// v1.4; the CRD's schema refuses the other), and read
				// unchecked to classify it.
				t.Logf("%s: refused: %v", r.name, err)
				refused++
				if hr, err = decode(mustJSON(t, obj)); err != nil {
					t.Fatal(err)
				}
			default:
				t.Errorf("%s: %v", r.name, err)
				continue
			}
			kind := "chart:"
			if hr.Spec.ChartRef != nil {
				kind = "chartRef:" + hr.Spec.ChartRef.Kind
			} else {
				kind += hr.Spec.Chart.Spec.SourceRef.Kind
			}
			cs, err := ResolveChart(hr, r.objs, ResolveOptions{AllowExternalArtifact: true})
			switch {
			case errors.Is(err, ErrSourceNotFound):
				kind += " (source not rendered)"
			case err != nil:
				t.Errorf("%s %s: %v", r.name, hr.ID(), err)
				continue
			case cs.Type == TypeGit:
				if r.local[[2]string{"GitRepository", cs.Name}] {
					kind += ":local"
				} else {
					kind += ":external"
				}
			default:
				kind += " " + cs.Type
			}
			census[kind]++

			vals, _, err := Values(hr, r.objs)
			if err != nil {
				valuesErr++
				e := err.Error()
				if i := strings.LastIndex(e, ": "); i >= 0 {
					e = e[i+2:]
				}
				t.Logf("%s %s: values refused: %v", r.name, hr.ID(), err)
				errKinds[regexp.MustCompile(`"[^"]*"`).ReplaceAllString(e, `"…"`)]++
			} else {
				valuesOK++
				if bytes.Contains(mustJSON(t, vals), []byte("**SOPS**")) {
					masked++
				}
			}
			if o == nil {
				continue
			}
			hrJSON := string(mustJSON(t, obj))
			ns, _ := obj["metadata"].(map[string]any)["namespace"].(string)
			want := o.Values(t, hrJSON, r.objectsStream(t, ns))
			if want.Panic != nil {
				t.Fatalf("%s %s: the library panicked: %s", r.name, hr.ID(), *want.Panic)
			}
			switch {
			case err != nil && want.Err != nil && err.Error() == *want.Err:
				valuesErrSame++
			case err == nil && want.Err == nil && hroracle.Canonical(hroracle.Typed(vals)) == hroracle.Canonical(want.Values):
				valuesSame++
			default:
				t.Errorf("%s %s: values differ from helm-controller's:\nkpipe: %v %v\nlibrary: %v %v", r.name, hr.ID(), vals, err, want.Values, deref(want.Err))
			}
		}
	}
	keys := make([]string, 0, len(census))
	for k := range census {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%4d %s", census[k], k)
	}
	t.Logf("%d HelmReleases; values merged: %d (%d with SOPS-masked Secret data), refused: %d", total, valuesOK, masked, valuesErr)
	for k, n := range errKinds {
		t.Logf("  %4d refused: ...%s", n, k)
	}
	if o != nil {
		t.Logf("against helm-controller's code: %d values equal, %d errors equal", valuesSame, valuesErrSame)
	}
	t.Logf("%d of them refused by Parse (v2beta1, or invalid for the CRD)", refused)
	// cases-hr/SUMMARY.md counts 651: chartRef:OCIRepository 504,
	// chart:HelmRepository 139, chart:GitRepository:local 6,
	// chartRef:HelmChart 1, chart:GitRepository:external 1. hr_collect.py
	// reads the outputs with PyYAML, which cannot read 10 of them (a `=`
	// scalar: "could not determine a constructor for the tag
	// 'tag:yaml.org,2002:value'"); 5 kube-prometheus-stack HelmReleases
	// (chartRef OCIRepository) appear only there.
	sum := func(prefix string) int {
		n := 0
		for k, v := range census {
			if strings.HasPrefix(k, prefix) {
				n += v
			}
		}
		return n
	}
	for prefix, want := range map[string]int{"chartRef:OCIRepository": 504 + 5, "chart:HelmRepository": 139,
		"chart:GitRepository:local": 6, "chart:GitRepository:external": 1, "chartRef:HelmChart": 1} {
		if got := sum(prefix); got != want {
			t.Errorf("%s: %d HelmReleases, want %d", prefix, got, want)
		}
	}
	if total != 651+5 {
		t.Errorf("%d HelmReleases, want 656", total)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
