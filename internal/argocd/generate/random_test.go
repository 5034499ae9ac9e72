package generate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/argocdtest"
	"github.com/kpipe/kpipe/internal/argocd/generate"
	"github.com/kpipe/kpipe/internal/argocd/render"
	"github.com/kpipe/kpipe/internal/engine"
)

// oracle is Argo CD's reference program, when this machine has it.
func oracle(t *testing.T) string {
	p := os.Getenv("KPIPE_ARGOCD_ORACLE")
	if p == "" {
		p = "/work/ref/bin/argocd-oracle"
	}
	if _, err := os.Stat(p); err != nil {
		t.Skip("Argo CD's reference program not found (set KPIPE_ARGOCD_ORACLE; built from /work/ref/argocd-oracle)")
	}
	return p
}

// randomApplication writes an Application over one of the synthetic
// repository's directories with random Kustomize or Helm options, and
// random settings (the oracle's flags).
func randomApplication(r *rand.Rand, i int) (doc string, args []string) {
	pick := func(s ...string) string { return s[r.Intn(len(s))] }
	path := pick("kust-base", "kust-overlay", "nested-kust/inner", "source-override", "kust-and-chart", "components/c2", "helm-chart", "dir-basic")
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: rand-%d\n", i)
	if r.Intn(4) == 0 {
		b.WriteString("  namespace: team\n")
	}
	fmt.Fprintf(&b, "spec:\n  project: default\n  source:\n    repoURL: %s\n    path: %s\n", argocdtest.SyntheticURL, path)
	switch {
	case path == "helm-chart":
		b.WriteString("    helm:\n")
		if r.Intn(2) == 0 {
			fmt.Fprintf(&b, "      releaseName: %s\n", pick("rel", "my-release"))
		}
		if r.Intn(2) == 0 {
			fmt.Fprintf(&b, "      valueFiles: [%s]\n", pick("values-a.yaml", "env/values-prod.yaml", "values-a.yaml, values-b.yaml", "/helm-chart/values-b.yaml"))
		}
		if r.Intn(2) == 0 {
			fmt.Fprintf(&b, "      parameters:\n      - name: %s\n        value: %q\n", pick("replicas", "image.tag", "extra"), pick("3", "v1,v2", "$ARGOCD_APP_NAME"))
		}
		if r.Intn(3) == 0 {
			b.WriteString("      skipCrds: true\n")
		}
		if r.Intn(3) == 0 {
			b.WriteString("      values: |\n        extra: from-values\n")
		}
	case path != "dir-basic" && r.Intn(5) != 0:
		b.WriteString("    kustomize:\n")
		if r.Intn(2) == 0 {
			fmt.Fprintf(&b, "      namePrefix: %s\n", pick("p-", "team-", "x"))
		}
		if r.Intn(3) == 0 {
			fmt.Fprintf(&b, "      nameSuffix: %s\n", pick("-s", "-v2"))
		}
		if r.Intn(2) == 0 {
			fmt.Fprintf(&b, "      images: [%s]\n", pick("nginx=nginx:1.25", "nginx:1.26", "busybox=registry.example.com/busybox:$ARGOCD_APP_NAME"))
		}
		if r.Intn(3) == 0 {
			fmt.Fprintf(&b, "      replicas: [{name: %s, count: %d}]\n", pick("web", "api", "nginx"), r.Intn(5))
		}
		if r.Intn(2) == 0 {
			fmt.Fprintf(&b, "      commonLabels: {%s: %q}\n", pick("team", "app", "env"), pick("a", "${ARGOCD_APP_NAMESPACE}", "blue"))
			if r.Intn(2) == 0 {
				b.WriteString("      forceCommonLabels: true\n")
			}
			if r.Intn(2) == 0 {
				b.WriteString("      labelWithoutSelector: true\n")
			}
		}
		if r.Intn(2) == 0 {
			fmt.Fprintf(&b, "      commonAnnotations: {%s: %q}\n", pick("owner", "note"), pick("me", "$ARGOCD_APP_NAME", "42"))
			if r.Intn(2) == 0 {
				b.WriteString("      commonAnnotationsEnvsubst: true\n")
			}
		}
		if r.Intn(3) == 0 {
			fmt.Fprintf(&b, "      namespace: %s\n", pick("ns1", "kust-ns"))
		}
	}
	fmt.Fprintf(&b, "  destination:\n    server: https://kubernetes.default.svc\n    namespace: %s\n", pick("dest", "prod", "default"))
	args = []string{"-tracking-method", pick("annotation", "label", "annotation+label")}
	if r.Intn(3) == 0 {
		args = append(args, "-kube-version", pick("1.29.3", "v1.31.1+k3s1"))
	}
	if r.Intn(4) == 0 {
		args = append(args, "-build-options", pick("--load-restrictor LoadRestrictionsNone", "--enable-helm"))
	}
	return b.String(), args
}

// TestRandomizedAgainstArgoCD renders Applications with random options
// and settings over the synthetic repository with kpipe and with Argo
// CD's own code (the reference program, run live), and compares: the
// objects the repo-server returns (parsed, in order) and the controller's
// normalized set, or the error word for word. The seed is logged
// (KPIPE_ARGOCD_SEED replays it, =random draws one;
// KPIPE_ARGOCD_RANDOM_CASES sets how many).
//
// Known divergence, in kpipe's engine against kustomize, not Argo CD's: a
// label key that a `labels` entry with includeSelectors adds to an object
// where it was missing, then a later entry without selectors sets again
// (Argo CD's labelWithoutSelector over such a kustomization), ends up
// changing the selectors too in kustomize, whose labels filter shares one
// YAML node among the fields it creates; kpipe changes only the labels.
// Other seeds find it (the default one does not).
func TestRandomizedAgainstArgoCD(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Argo CD's reference program")
	}
	bin := oracle(t)
	helm := argocdtest.Helm(t)
	// A fixed seed by default, so that `go test` is repeatable;
	// KPIPE_ARGOCD_SEED=random draws one (and logs it).
	seed := int64(53)
	switch s := os.Getenv("KPIPE_ARGOCD_SEED"); s {
	case "":
	case "random":
		seed = time.Now().UnixNano()
	default:
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	n := 24
	if s := os.Getenv("KPIPE_ARGOCD_RANDOM_CASES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	t.Logf("seed %d (KPIPE_ARGOCD_SEED=%d replays it), %d cases", seed, seed, n)
	r := rand.New(rand.NewSource(seed))
	repo := filepath.Join(argocdtest.Testdata(), "synthetic")
	tree, err := render.DiskTree(repo)
	if err != nil {
		t.Fatal(err)
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	co := func(u string) (app.Checkout, bool) {
		if app.NormalizeGitURL(u) != app.NormalizeGitURL(argocdtest.SyntheticURL) {
			return app.Checkout{}, false
		}
		return app.Checkout{FS: tree, Root: "<path to cached source>"}, true
	}
	rd := render.New(render.Options{Engine: engine.Options{Helm: engine.HelmOptions{Command: helm}}, HelmSources: true})
	dir := t.TempDir()
	for i := 0; i < n; i++ {
		doc, args := randomApplication(r, i)
		p := filepath.Join(dir, fmt.Sprintf("app-%d.yaml", i))
		os.WriteFile(p, []byte(doc), 0o644)
		cmd := exec.Command(bin, append([]string{"app", "-app", p, "-repo-root", repo, "-repo", argocdtest.SyntheticURL + "=" + repo, "-revision", rev}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(helm)+string(os.PathListSeparator)+os.Getenv("PATH"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		runErr := cmd.Run()
		var want argocdtest.Result
		if err := json.Unmarshal(stdout.Bytes(), &want); err != nil {
			t.Fatalf("oracle: %v %v: %s", runErr, err, stderr.String())
		}
		a, err := app.ParseApplication([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		c := &argocdtest.Case{Args: args, Result: want}
		s := settings(c)
		s.Revision = rev
		got := generate.Application(context.Background(), a, co, s, rd)
		switch {
		case want.Error != "":
			if got.Err == nil || got.Err.Error() != want.Error {
				t.Errorf("case %d (%v):\n%s\n got: %v\nwant: %s", i, args, doc, got.Err, want.Error)
			}
		case got.Err != nil:
			t.Errorf("case %d (%v): Argo CD rendered, kpipe failed: %v\n%s", i, args, got.Err, doc)
		default:
			if g, w := canon(t, got.Manifests), raws(want.Manifests); !reflect.DeepEqual(g, w) {
				gj, _ := json.Marshal(g)
				wj, _ := json.Marshal(w)
				t.Errorf("case %d (%v): manifests differ\n%s\n got: %.2000s\nwant: %.2000s", i, args, doc, gj, wj)
			} else if g, w := canon(t, got.Normalized), raws(want.Normalized); !reflect.DeepEqual(g, w) {
				t.Errorf("case %d (%v): normalized objects differ\n%s", i, args, doc)
			}
		}
	}
}
