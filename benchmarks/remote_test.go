package benchmarks

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kpipe/kpipe/cache/remote/remotetest"
	"github.com/kpipe/kpipe/internal/genrepo"
)

var remoteBench = flag.Bool("kpipe.remotebench", false, "run TestRemoteCacheRunnersBench (measures; prints a Markdown table)")

// TestRemoteCacheRunnersBench measures what a CI runner with an empty disk
// gains from a shared remote cache: `build-all` over a synthetic monorepo
// with an empty local cache and --remote-cache (filled by an earlier
// runner), against a cold local build (empty cache, no remote) and a warm
// local build (the same cache again, nothing changed), on nginx (HTTP) and
// MinIO (S3) started here. It only measures (no assertion on times):
//
// The second scenario gives each app's base a local helm chart (helm
// v3.10.2 from $HOME/.cache/kpipe-ci, skipped without it): an expensive
// stage, as helm charts, KRM functions and plugins are. Their output is
// sensitive, so the first runner writes with --remote-cache-sensitive.
//
//	go test ./benchmarks -run TestRemoteCacheRunnersBench -kpipe.remotebench -v
func TestRemoteCacheRunnersBench(t *testing.T) {
	if !*remoteBench {
		t.Skip("a measurement: run with -kpipe.remotebench")
	}
	work := t.TempDir()
	bin := filepath.Join(work, "kpipe")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/kpipe").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var sb strings.Builder
	spec := genrepo.Spec{Apps: 100, Envs: 4, ResourcesPerApp: 3}
	fmt.Fprintf(&sb, "### %d roots (genrepo %d apps x %d envs, %d extra resources per app)\n\n", spec.Apps*spec.Envs, spec.Apps, spec.Envs, spec.ResourcesPerApp)
	measureRemote(t, &sb, bin, spec, nil, nil, nil)
	home, _ := os.UserHomeDir()
	helm := filepath.Join(home, ".cache", "kpipe-ci", "helm-v3.10.2", "helm")
	if _, err := os.Stat(helm); err == nil {
		spec = genrepo.Spec{Apps: 25, Envs: 4, ResourcesPerApp: 3}
		fmt.Fprintf(&sb, "\n### %d roots (genrepo %d apps x %d envs), each app's base with a local helm chart\n\n", spec.Apps*spec.Envs, spec.Apps, spec.Envs)
		measureRemote(t, &sb, bin, spec, addCharts(t), []string{"--enable-helm", "--helm-command", helm}, []string{"--remote-cache-sensitive"})
	} else {
		fmt.Fprintf(&sb, "\n(helm scenario skipped: no %s)\n", helm)
	}
	fmt.Println(sb.String())
	if p := os.Getenv("KPIPE_REMOTEBENCH_OUT"); p != "" {
		_ = os.WriteFile(p, []byte(sb.String()), 0o644)
	}
}

// addCharts returns a function that gives every app base of a genrepo
// tree a local helm chart rendering a few ConfigMaps.
func addCharts(t *testing.T) func(dir string) {
	return func(dir string) {
		bases, _ := filepath.Glob(filepath.Join(dir, "apps", "*", "base"))
		for _, b := range bases {
			app := filepath.Base(filepath.Dir(b))
			files := map[string]string{
				"charts/c/Chart.yaml":        "apiVersion: v2\nname: c\nversion: 1.0.0\n",
				"charts/c/values.yaml":       "replicas: 2\nitems: [a, b, c, d]\n",
				"charts/c/templates/cm.yaml": "{{- range .Values.items }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ $.Release.Name }}-{{ . }}\ndata:\n  replicas: {{ $.Values.replicas | quote }}\n{{- end }}\n",
			}
			for p, c := range files {
				os.MkdirAll(filepath.Dir(filepath.Join(b, p)), 0o755)
				if err := os.WriteFile(filepath.Join(b, p), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			k := filepath.Join(b, "kustomization.yaml")
			old, _ := os.ReadFile(k)
			if err := os.WriteFile(k, append(old, []byte("helmCharts:\n- name: c\n  releaseName: "+app+"\n")...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// measureRemote times the scenarios over one tree shape and writes the
// tables to sb.
func measureRemote(t *testing.T, sb *strings.Builder, bin string, spec genrepo.Spec, mutate func(string), flags, writeFlags []string) {
	work := t.TempDir()
	checkout := func(name string) string {
		d := filepath.Join(work, name)
		if _, err := genrepo.Write(d, spec); err != nil {
			t.Fatal(err)
		}
		if mutate != nil {
			mutate(d)
		}
		return d
	}
	n := 0
	newCache := func() string { n++; return filepath.Join(work, fmt.Sprint("cache", n)) }
	// run times one build-all in tree, outputs to a fresh directory.
	run := func(tree, cacheDir string, extra ...string) time.Duration {
		n++
		args := append(append([]string{"build-all", ".", "--out-dir", filepath.Join(work, fmt.Sprint("out", n))}, flags...), extra...)
		if cacheDir == "" {
			args = append(args, "--no-cache")
		} else {
			args = append(args, "--cache-dir", cacheDir)
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = tree
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(t0)
		if err != nil || strings.Contains(string(out), "Warning: remote") {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return d
	}
	median := func(f func() time.Duration) time.Duration {
		var ds []time.Duration
		for range 3 {
			ds = append(ds, f())
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[1]
	}
	a := checkout("runner1")
	b := checkout("runner2")
	noCache := median(func() time.Duration { return run(a, "") })
	cold := median(func() time.Duration { return run(a, newCache()) })
	warmDir := newCache()
	run(a, warmDir)
	warmOut := filepath.Join(work, "warm-out")
	run(a, warmDir, "--out-dir", warmOut)
	warm := median(func() time.Duration { return run(a, warmDir, "--out-dir", warmOut) })
	// Warm cache, but a new out dir each time: every root loaded and its
	// nodes taken from the cache (no root skipped by the root index), as
	// for the second runner.
	warmNodes := median(func() time.Duration { return run(a, warmDir) })

	type row struct {
		server        string
		first, second time.Duration
	}
	var rows []row
	servers := []struct {
		name  string
		start func(t *testing.T) *remotetest.Server
	}{
		{"nginx (HTTP, /ac/ /cas/)", func(t *testing.T) *remotetest.Server {
			return remotetest.StartNginx(t, remotetest.NginxOptions{})
		}},
		{"MinIO (S3)", func(t *testing.T) *remotetest.Server { return remotetest.StartMinIO(t) }},
	}
	for _, s := range servers {
		srv := s.start(t)
		first := run(a, newCache(), append([]string{"--remote-cache", srv.URL, "--remote-cache-write"}, writeFlags...)...)
		second := median(func() time.Duration { return run(b, newCache(), "--remote-cache", srv.URL) })
		rows = append(rows, row{s.name, first, second})
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/1e6) }
	x := func(a, b time.Duration) string { return fmt.Sprintf("%.2fx", float64(a)/float64(b)) }
	fmt.Fprintf(sb, "| build-all | time |\n|---|---|\n")
	fmt.Fprintf(sb, "| --no-cache | %s |\n| cold local (empty cache, no remote) | %s |\n| warm local, nothing changed (roots skipped by the root index) | %s |\n| warm local, new out dir (every root loaded, nodes from the cache) | %s |\n",
		ms(noCache), ms(cold), ms(warm), ms(warmNodes))
	fmt.Fprintf(sb, "\n| remote | first runner (empty cache, --remote-cache-write) | second runner (empty cache, other checkout) | cold / second | second / warm local | second / warm local, new out dir |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(sb, "| %s | %s | %s | %s | %s | %s |\n", r.server, ms(r.first), ms(r.second), x(cold, r.second), x(r.second, warm), x(r.second, warmNodes))
	}
}
