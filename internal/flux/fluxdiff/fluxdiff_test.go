package fluxdiff

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/diff"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/flux/cluster"
)

var (
	fluxSeed  = flag.Int64("flux-review-seed", 1, "seed of TestReviewMatchesFullRenders' random edits")
	fluxEdits = flag.Int("flux-review-edits", 25, "rounds of random edits in TestReviewMatchesFullRenders")
)

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, dir, p, content string) {
	t.Helper()
	full := filepath.Join(dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fluxKS(name, path, extra string) string {
	return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name + "\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: " + path +
		"\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n" + extra
}

func deploy(name, image string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\nspec:\n  template:\n    spec:\n      containers:\n      - name: " + name + "\n        image: " + image + "\n"
}

// fluxRepo is a git repository shaped as a Flux repository: a cluster
// directory with a cluster-settings ConfigMap, an infra and an apps
// Kustomization; apps renders one Flux Kustomization per app, each a path
// with a generated kustomization (or a kustomization with a shared
// component), substituted from the settings.
type fluxRepo struct {
	dir  string
	apps map[string]bool
	next int
}

func newFluxRepo(t *testing.T, apps int) *fluxRepo {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed (apt-get install git)")
	}
	r := &fluxRepo{dir: t.TempDir(), apps: map[string]bool{}}
	gitRun(t, r.dir, "init", "-q", "-b", "main")
	write(t, r.dir, "clusters/prod/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\ndata:\n  DOMAIN: example.org\n  TIER: gold\n")
	write(t, r.dir, "clusters/prod/infra.yaml", fluxKS("infra", "./infra", ""))
	write(t, r.dir, "clusters/prod/apps.yaml", fluxKS("apps", "./apps/prod", "  postBuild:\n    substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n"))
	write(t, r.dir, "infra/ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: infra\n")
	write(t, r.dir, "components/common/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nlabels:\n- pairs:\n    tier: ${TIER}\n")
	write(t, r.dir, "README.md", "docs\n")
	for i := 0; i < apps; i++ {
		r.addApp(t)
	}
	gitRun(t, r.dir, "add", "-A")
	gitRun(t, r.dir, "commit", "-q", "-m", "init")
	return r
}

func (r *fluxRepo) appsKustomization(t *testing.T) {
	var names []string
	for a := range r.apps {
		names = append(names, a)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("resources:\n")
	for _, a := range names {
		fmt.Fprintf(&b, "- %s.yaml\n", a)
	}
	if len(names) == 0 {
		b.WriteString("- ../empty.yaml\n")
		write(t, r.dir, "apps/empty.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: empty\n  namespace: flux-system\n")
	}
	write(t, r.dir, "apps/prod/kustomization.yaml", b.String())
}

func (r *fluxRepo) addApp(t *testing.T) string {
	name := fmt.Sprintf("app%d", r.next)
	r.next++
	r.apps[name] = true
	extra := "  targetNamespace: " + name + "\n  postBuild:\n    substitute:\n      APP: " + name + "\n    substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n"
	if r.next%2 == 0 {
		extra += "  components:\n  - ../../components/common\n"
		write(t, r.dir, "apps/"+name+"/kustomization.yaml", "resources:\n- deploy.yaml\n")
	}
	write(t, r.dir, "apps/prod/"+name+".yaml", fluxKS(name, "./apps/"+name, extra))
	write(t, r.dir, "apps/"+name+"/deploy.yaml", deploy("${APP}", "nginx:1"))
	write(t, r.dir, "apps/"+name+"/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  url: https://${APP}.${DOMAIN}\n")
	r.appsKustomization(t)
	return name
}

// pick is a random app, or "".
func (r *fluxRepo) pick(rng *rand.Rand) string {
	var names []string
	for a := range r.apps {
		names = append(names, a)
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return names[rng.Intn(len(names))]
}

// edit makes one random change and says what it did.
func (r *fluxRepo) edit(t *testing.T, rng *rand.Rand) string {
	app := r.pick(rng)
	switch n := rng.Intn(12); {
	case n == 0:
		v := fmt.Sprintf("example%d.org", rng.Intn(3))
		write(t, r.dir, "clusters/prod/settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\ndata:\n  DOMAIN: "+v+"\n  TIER: gold\n")
		return "settings DOMAIN=" + v
	case n == 1 && app != "":
		img := fmt.Sprintf("nginx:%d", rng.Intn(3))
		write(t, r.dir, "apps/"+app+"/deploy.yaml", deploy("${APP}", img))
		return app + " image " + img
	case n == 2 && app != "":
		f := fmt.Sprintf("apps/%s/extra%d.yaml", app, rng.Intn(2))
		write(t, r.dir, f, "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n  - port: 80\n")
		return "add " + f
	case n == 3 && app != "":
		f := fmt.Sprintf("apps/%s/extra%d.yaml", app, rng.Intn(2))
		os.Remove(filepath.Join(r.dir, f))
		return "remove " + f
	case n == 4:
		return "add " + r.addApp(t)
	case n == 5 && app != "":
		delete(r.apps, app)
		os.Remove(filepath.Join(r.dir, "apps/prod", app+".yaml"))
		r.appsKustomization(t)
		return "remove " + app
	case n == 6 && app != "":
		p := filepath.Join(r.dir, "apps/prod", app+".yaml")
		data, _ := os.ReadFile(p)
		s := string(data)
		if strings.Contains(s, "namePrefix") {
			s = strings.Replace(s, "  namePrefix: x-\n", "", 1)
		} else {
			s += "  namePrefix: x-\n"
		}
		write(t, r.dir, "apps/prod/"+app+".yaml", s)
		return app + " namePrefix"
	case n == 7:
		l := fmt.Sprintf("tier%d", rng.Intn(3))
		write(t, r.dir, "components/common/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nlabels:\n- pairs:\n    tier: ${TIER}\n    "+l+": \"y\"\n")
		return "component " + l
	case n == 8 && app != "":
		if rng.Intn(2) == 0 {
			write(t, r.dir, "apps/"+app+"/broken.yaml", "apiVersion: v1\nkind: [\n")
			return "break " + app
		}
		os.Remove(filepath.Join(r.dir, "apps", app, "broken.yaml"))
		return "fix " + app
	case n == 9:
		write(t, r.dir, "infra/ns.yaml", fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: infra%d\n", rng.Intn(3)))
		return "infra"
	case n == 10 && app != "":
		if rng.Intn(2) == 0 {
			write(t, r.dir, "apps/"+app+"/.sourceignore", "cm.yaml\n")
			return "ignore " + app + "/cm.yaml"
		}
		os.Remove(filepath.Join(r.dir, "apps", app, ".sourceignore"))
		return "unignore " + app
	default:
		write(t, r.dir, "README.md", fmt.Sprintf("docs %d\n", rng.Intn(100)))
		return "README"
	}
}

// renderAll renders the working tree's cluster from scratch (no cache,
// no records): the oracle.
func renderAll(t *testing.T, dir string) map[string]*cluster.Result {
	root, err := cluster.ClusterRoot(dir, filepath.Join(dir, "clusters/prod"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cluster.Run(context.Background(), []cluster.Root{root}, cluster.Options{Cwd: dir, SourceRoot: dir, NoRecords: true, Engine: engine.Options{Jobs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*cluster.Result{}
	for i, rr := range rep.Roots {
		out[rr.Path] = rep.Result(i)
	}
	return out
}

// resources lists Kustomization/resource pairs whose rendering differs
// between two full renders.
func oracle(t *testing.T, before, after map[string]*cluster.Result) []string {
	var out []string
	for id, a := range after {
		b := before[id]
		if (b != nil && b.Err != "") || a.Err != "" {
			// A failure on either side is reported with its error, not
			// resource by resource.
			if b == nil || b.Err != a.Err {
				out = append(out, id+" (error)")
			}
			continue
		}
		var old []byte
		if b != nil {
			old = b.YAML
		}
		changes, _, err := diff.Compare(old, a.YAML, diff.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range changes {
			out = append(out, id+" "+c.ID.String())
		}
	}
	for id, b := range before {
		if after[id] == nil && b.Err != "" {
			out = append(out, id+" (error)")
		} else if after[id] == nil {
			changes, _, _ := diff.Compare(b.YAML, nil, diff.Options{})
			for _, c := range changes {
				out = append(out, id+" "+c.ID.String())
			}
		}
	}
	slices.Sort(out)
	return out
}

func reported(res *diff.Result) []string {
	var out []string
	for _, rd := range res.Roots {
		if rd.OldError != "" || rd.NewError != "" {
			if rd.Status != diff.RootFailing {
				out = append(out, rd.Path+" (error)")
			}
			continue
		}
		for _, c := range rd.Changes {
			out = append(out, rd.Path+" "+c.ID.String())
		}
	}
	slices.Sort(out)
	return out
}

// TestReviewMatchesFullRenders: over rounds of random edits of a Flux
// repository (cluster settings, apps added and removed, files added to
// generated paths, a shared component, .sourceignore files, broken
// files, Kustomization specs), the Flux Kustomizations diff --flux names
// are exactly those whose rendering differs between full renders of the
// two revisions, and so are their resources; and only the
// Kustomizations the change reaches are rendered at the old revision.
func TestReviewMatchesFullRenders(t *testing.T) {
	r := newFluxRepo(t, 4)
	store := cache.Open(context.Background(), cache.Options{Dir: t.TempDir()})
	defer store.Close()
	rng := rand.New(rand.NewSource(*fluxSeed))
	before := renderAll(t, r.dir)
	changedRounds, partialRounds := 0, 0
	for round := 0; round < *fluxEdits; round++ {
		var did []string
		for i := 0; i < 1+rng.Intn(3); i++ {
			did = append(did, r.edit(t, rng))
		}
		o := Options{Dir: r.dir, ClusterDirs: []string{"clusters/prod"}, Base: "HEAD",
			Cluster: cluster.Options{Engine: engine.Options{Jobs: 2, Cache: engine.Cache{Store: store, Files: store.FileIndex(), Version: "test"}}},
			Diff:    diff.Options{OrderMatters: true}}
		res, err := Review(context.Background(), o)
		if err != nil {
			t.Fatalf("round %d (%v): %v", round, did, err)
		}
		after := renderAll(t, r.dir)
		var got, want []string
		for _, rd := range res.Roots {
			if rd.Status == diff.RootFailing {
				if before[rd.Path] == nil || after[rd.Path] == nil || before[rd.Path].Err == "" || after[rd.Path].Err == "" {
					t.Fatalf("round %d (%v): %s reported failing on both sides, but full renders do not say so", round, did, rd.Path)
				}
				continue
			}
			got = append(got, rd.Path)
		}
		for id, a := range after {
			if b := before[id]; b == nil || string(a.YAML) != string(b.YAML) || a.Err != b.Err {
				want = append(want, id)
			}
		}
		for id := range before {
			if after[id] == nil {
				want = append(want, id)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d (%v): diff --flux named %v; full renders differ in %v", round, did, got, want)
		}
		if w, g := oracle(t, before, after), reported(res.Result); !slices.Equal(w, g) {
			t.Fatalf("round %d (%v): reported resources\n%v\nfull renders differ in\n%v", round, did, g, w)
		}
		// Cost follows the change: the old side renders what the change
		// reaches, never the whole cluster when a README changed.
		if len(did) == 1 && did[0] == "README" && res.Rendered != 0 {
			t.Fatalf("round %d: a README edit rendered %d Kustomizations at the old revision", round, res.Rendered)
		}
		if len(got) > 0 {
			changedRounds++
		}
		if res.Rendered < len(after) {
			partialRounds++
		}
		gitRun(t, r.dir, "add", "-A")
		gitRun(t, r.dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprint(round))
		before = after
	}
	// The edits must have changed renderings, and the old side must have
	// taken most Kustomizations from the new one.
	if changedRounds < *fluxEdits/3 || partialRounds < *fluxEdits/3 {
		t.Fatalf("%d rounds changed a rendering, %d rendered part of the old side only: the test does not test", changedRounds, partialRounds)
	}
}
