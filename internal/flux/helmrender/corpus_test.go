package helmrender

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/helmtest"

	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/flux/cluster"
	"github.com/kpipe/kpipe/internal/flux/helmrelease"
)

// hrCase is what TestCorpusHelmReleases reads of a
// cases-hr/<repo>/<ns>.<name>/case.json of the reference corpus.
type hrCase struct {
	Root          string `json:"root"`
	Skipped       string `json:"skipped"`
	ValuesRC      int    `json:"values_rc"`
	PostRenderers int    `json:"postRenderers"`
	Helm3         struct {
		RC int `json:"rc"`
	} `json:"helm3"`
}

// TestCorpusHelmReleases renders the reference corpus' HelmReleases with
// in-repository charts (cases-hr/, /work/ref/flux-corpus's README) as
// build-all renders them (the HelmRelease, the objects its Flux
// Kustomization rendered, the repository's checkout as its GitRepository)
// and compares the output with `helm template` of the chart with the
// values helm-controller's own code merged (tools/hroracle's, recorded by
// the corpus: helm3.stdout), less its test hooks (helm-controller runs
// tests only with spec.test.enable), with the origin labels.
//
//	KPIPE_FLUX_CORPUS=/work/ref/flux-corpus go test ./internal/flux/helmrender -run Corpus -v
func TestCorpusHelmReleases(t *testing.T) {
	corpus := os.Getenv("KPIPE_FLUX_CORPUS")
	if corpus == "" {
		t.Skip("KPIPE_FLUX_CORPUS is not set (the reference corpus, e.g. /work/ref/flux-corpus)")
	}
	helm := helmtest.V3(t)
	root := filepath.Join(corpus, "cases-hr")
	cases, _ := filepath.Glob(filepath.Join(root, "*", "*", "case.json"))
	if len(cases) == 0 {
		t.Fatalf("no cases under %s", root)
	}
	e := newEnv(t, helm, t.TempDir(), true)
	// The corpus' repositories are of Flux v2.7's time: v2beta2 is served.
	r := New(Options{Engine: e.engine(), Remote: e.remote, AllowV2Beta2: true})
	compared := 0
	for _, p := range cases {
		dir := filepath.Dir(p)
		name, _ := filepath.Rel(root, dir)
		t.Run(name, func(t *testing.T) {
			var c hrCase
			if err := json.Unmarshal(readFile(t, p), &c); err != nil {
				t.Fatal(err)
			}
			switch {
			case c.Skipped != "":
				t.Skip(c.Skipped)
			case c.ValuesRC != 0 || c.Helm3.RC != 0:
				t.Skip("helm-controller's code does not render it (values or helm fail)")
			}
			if _, err := os.Stat(c.Root); err != nil {
				t.Skipf("the repository is not checked out: %v", err)
			}
			hrObj := map[string]any{}
			if err := yaml.Unmarshal(readFile(t, filepath.Join(dir, "hr.yaml")), &hrObj); err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(hrObj)
			objs, err := helmrelease.DecodeObjects(readFile(t, filepath.Join(dir, "objects.yaml")))
			if err != nil {
				t.Fatal(err)
			}
			in := cluster.HelmRelease{ID: name, Object: raw,
				Lookup:    func(kind, ns, n string) (cluster.Provided, bool) { return provided(t, objs, kind, ns, n) },
				Source:    func(kind, ns, n string) (json.RawMessage, bool) { return source(objs, kind, ns, n) },
				SourceDir: func(string, string, string) (string, error) { return c.Root, nil }}
			res := r.Render(context.Background(), in)
			if res.Err != "" {
				t.Fatal(res.Err)
			}
			if c.PostRenderers > 0 {
				t.Skipf("%d post-renderer(s): the reference is helm's output alone", c.PostRenderers)
			}
			meta := hrObj["metadata"].(map[string]any)
			ns, _ := meta["namespace"].(string)
			want := expected(t, dropTestHooks(t, readFile(t, filepath.Join(dir, "helm3.stdout"))), meta["name"].(string), ns, nil)
			if !bytes.Equal(res.YAML, want) {
				t.Fatalf("rendered\n%s\nhelm template with helm-controller's values\n%s", res.YAML, want)
			}
			compared++
		})
	}
	t.Logf("%d of %d in-repository chart HelmReleases render as helm template with helm-controller's values", compared, len(cases))
	if compared == 0 {
		t.Fatal("no case compared")
	}
}

// provided is a ConfigMap or Secret of objs as the cluster's Lookup gives
// it.
func provided(t *testing.T, objs []map[string]any, kind, ns, name string) (cluster.Provided, bool) {
	obj := find(objs, "v1", kind, ns, name)
	if obj == nil {
		return cluster.Provided{}, false
	}
	p := cluster.Provided{Kind: kind, Namespace: ns, Name: name, Data: map[string]string{}}
	data, _ := obj["data"].(map[string]any)
	for k, v := range data {
		s, _ := v.(string)
		if kind == "Secret" {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				t.Fatalf("%s %s/%s: %v", kind, ns, name, err)
			}
			s = string(b)
		}
		p.Data[k] = s
	}
	sd, _ := obj["stringData"].(map[string]any)
	for k, v := range sd {
		p.Data[k], _ = v.(string)
	}
	return p, true
}

// source is a Flux source of objs as the cluster's Source gives it.
func source(objs []map[string]any, kind, ns, name string) (json.RawMessage, bool) {
	obj := find(objs, "source.toolkit.fluxcd.io/", kind, ns, name)
	if obj == nil {
		return nil, false
	}
	raw, err := json.Marshal(obj)
	return raw, err == nil
}

func find(objs []map[string]any, apiPrefix, kind, ns, name string) map[string]any {
	for _, obj := range objs {
		api, _ := obj["apiVersion"].(string)
		md, _ := obj["metadata"].(map[string]any)
		if obj["kind"] == kind && strings.HasPrefix(api, apiPrefix) && md["namespace"] == ns && md["name"] == name {
			return obj
		}
	}
	return nil
}

// dropTestHooks removes the documents of helm's output that are test
// hooks.
func dropTestHooks(t *testing.T, out []byte) []byte {
	t.Helper()
	var kept [][]byte
	for _, doc := range bytes.SplitAfter(out, []byte("---\n")) {
		var obj struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(bytes.TrimSuffix(doc, []byte("---\n")), &obj); err == nil && strings.Contains(obj.Metadata.Annotations["helm.sh/hook"], "test") {
			continue
		}
		kept = append(kept, doc)
	}
	return bytes.Join(kept, nil)
}
