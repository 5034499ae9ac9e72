package helmrender

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kpipe/kpipe/internal/helmtest"

	"github.com/google/go-containerregistry/pkg/registry"
)

// ociCluster is a cluster rendering, from an OCI registry at host, a
// HelmRelease of a HelmRepository of type oci (a version range) and one
// of an OCIRepository (a tag).
func ociCluster(host, artifactRef string) map[string]string {
	return map[string]string{
		"clusters/prod/apps.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./apps\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
		"apps/sources.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: oci-charts, namespace: apps}\nspec: {interval: 1h, type: oci, url: \"oci://" + host + "/charts\"}\n" +
			"---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: hello, namespace: apps}\nspec: {interval: 1h, url: \"oci://" + host + "/charts/hello\"" + artifactRef + "}\n",
		"apps/hr.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: by-repo, namespace: apps}
spec:
  interval: 1h
  chart:
    spec:
      chart: hello
      version: "~1.0"
      sourceRef: {kind: HelmRepository, name: oci-charts}
  values: {greeting: by-repo}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: by-ref, namespace: apps}
spec:
  interval: 1h
  chartRef: {kind: OCIRepository, name: hello}
  values: {greeting: by-ref}
`,
	}
}

// TestOCICharts pushes charts with `helm push` to an OCI registry on
// 127.0.0.1 (go-containerregistry's, the distribution protocol) and
// renders a HelmRelease of a HelmRepository of type oci (the range ~1.0
// resolved over the tags: 1.0.3) and one of an OCIRepository (tag 1.1.0,
// whose chart version gets the manifest digest, as helm-controller
// gives it): each as `helm template` of the pushed archive with its
// values. Warm, the tag's chart is not asked for again and helm template
// does not run; an OCIRepository without a ref ('latest') fails saying
// why.
func TestOCICharts(t *testing.T) {
	helm := helmtest.V3(t)
	var requests atomic.Int64
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	src := t.TempDir()
	digests := map[string]string{}
	for _, v := range []string{"1.0.0", "1.0.3", "1.1.0"} {
		dir := filepath.Join(src, v)
		writeFiles(t, dir, helloChart(v))
		helmtest.Run(t, dir, helm, "package", filepath.Join(dir, "hello"), "--destination", src)
		helmtest.Run(t, dir, helm, "push", filepath.Join(src, "hello-"+v+".tgz"), "oci://"+host+"/charts")
		// The manifest's digest, as the registry gives it.
		req, _ := http.NewRequest(http.MethodHead, srv.URL+"/v2/charts/hello/manifests/"+v, nil)
		req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		d := resp.Header.Get("Docker-Content-Digest")
		if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(d) {
			t.Fatalf("the registry gives no digest for %s: %q", v, d)
		}
		digests[v] = strings.TrimPrefix(d, "sha256:")
	}

	root := t.TempDir()
	writeFiles(t, root, ociCluster(host, ", ref: {tag: 1.1.0}"))
	e := newEnv(t, helm, t.TempDir(), false)
	out := filepath.Join(t.TempDir(), "out")
	rep := e.run(t, root, out)
	for _, c := range []struct {
		hr, version, label, greeting string
	}{
		{"by-repo", "1.0.3", "hello-1.0.3", "by-repo"},
		{"by-ref", "1.1.0", "hello-1.1.0+" + digests["1.1.0"][:12], "by-ref"},
	} {
		rr := rep["HelmRelease apps/"+c.hr]
		if rr.Status != "ok" || rr.StageMisses != 1 {
			t.Fatalf("%s: %+v", c.hr, rr)
		}
		got := readFile(t, filepath.Join(out, "apps", c.hr+".helmrelease.yaml"))
		ref := t.TempDir()
		writeFiles(t, ref, map[string]string{"values.yaml": "greeting: " + c.greeting + "\n"})
		helmOut := helmtest.Run(t, ref, helm, "template", c.hr, filepath.Join(src, "hello-"+c.version+".tgz"), "--namespace", "apps",
			"-f", filepath.Join(ref, "values.yaml"), "--include-crds", "--skip-tests")
		helmOut = bytes.Replace(helmOut, []byte("hello-"+c.version+`"`), []byte(c.label+`"`), 1)
		if want := expected(t, helmOut, c.hr, "apps", nil); !bytes.Equal(got, want) {
			t.Fatalf("%s: rendered\n%s\nwant\n%s", c.hr, got, want)
		}
		if !bytes.Contains(got, []byte("helm.sh/chart: "+c.label+"\n")) {
			t.Errorf("%s: the chart's version is not %s:\n%s", c.hr, c.label, got)
		}
	}

	// Warm: helm template does not run; the tag's chart is kept (the
	// range is resolved again by helm pull, as helmCharts ranges are).
	rep = e.run(t, root, out)
	for _, hr := range []string{"by-repo", "by-ref"} {
		if rr := rep["HelmRelease apps/"+hr]; rr.Status != "ok" || !rr.Cached || rr.StageMisses != 0 {
			t.Fatalf("warm %s: %+v", hr, rr)
		}
	}
	// The tag alone, warm: no request at all.
	writeFiles(t, root, map[string]string{"apps/hr.yaml": strings.SplitN(ociCluster(host, "")["apps/hr.yaml"], "---\n", 2)[1]})
	requests.Store(0)
	if rr := e.run(t, root, out)["HelmRelease apps/by-ref"]; rr.Status != "ok" || !rr.Cached {
		t.Fatalf("warm by-ref alone: %+v", rr)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("a kept tag's chart asked the registry %d times", n)
	}

	// No ref: 'latest', which is no chart version.
	writeFiles(t, root, ociCluster(host, ""))
	if rr := e.run(t, root, out)["HelmRelease apps/by-ref"]; rr.Status != "error" || !strings.Contains(rr.Error, "'latest'") {
		t.Fatalf("no ref: %+v", rr)
	}
}
