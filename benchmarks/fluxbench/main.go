// Command fluxbench measures `kpipe flux` against the flux CLI, side by
// side in one run (issue 52's bars):
//
//	go run ./benchmarks/fluxbench -corpus /work/ref/flux-corpus -results benchmarks/RESULTS.md
//
// The inputs are the reference corpus's Flux repositories (checked out
// beside the corpus, never committed) and its cases: the argv of each
// `flux build kustomization --dry-run` run of a Flux Kustomization of a
// repository.
//
//   - per object: for each case of the -repos, flux and then kpipe (the
//     same argv after `kpipe flux`), one process each, taking turns case
//     by case; kpipe starts with an empty cache (XDG_CACHE_HOME in the
//     work directory) and runs every case again afterwards (warm). Every
//     kpipe output is compared with flux's, byte for byte. Bar: the sum
//     of kpipe's walls at least 10x below flux's.
//   - whole cluster: for each -clusters entry (REPO:CLUSTER_DIR), `kpipe
//     flux build-all --dry-run CLUSTER_DIR` with an empty cache (cold)
//     and again -warm-runs times (warm), against flux one process per Flux Kustomization
//     that build-all rendered (the corpus case of each), alternating
//     rounds (-rounds); medians. Bars: 50x cold, 500x warm.
//   - diff --flux (-diff REPO:CLUSTER_DIR:FILE, -diff-old, -diff-new): a one-file
//     change of a git copy of a repository, `kpipe diff --flux` with the
//     base revision's build-all in the cache, again, and with an empty
//     cache, the Kustomizations it names checked against build-all's
//     outputs at both revisions (diff.go). Bars: diff's (under 150 ms,
//     at least 30x below flux rendering the cluster at both revisions).
//
// The flux CLI is $KPIPE_FLUX_BIN or /work/ref/bin/flux; without one the
// program says how to build it and exits 0 having measured nothing.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/procstat"
)

type fluxCase struct {
	Argv      []string `json:"argv"`
	Cwd       string   `json:"cwd"`
	Repo      string   `json:"repo"`
	Status    string   `json:"status"`
	Variant   string   `json:"variant"`
	Name      string   `json:"name"`
	Namespace *string  `json:"namespace"`
	Network   bool     `json:"network_dependent"`
}

func main() {
	corpus := flag.String("corpus", os.Getenv("KPIPE_FLUX_CORPUS"), "the reference corpus directory (its repositories checked out beside it)")
	repos := flag.String("repos", "allenporter__flux-local,allenporter__k8s-gitops,billimek__k8s-gitops,bjw-s-labs__home-ops,bjw-s__home-ops,buroa__k8s-gitops,"+
		"fluxcd__flux2-hub-spoke-example,fluxcd__flux2-kustomize-helm-example,fluxcd__flux2-multi-tenancy,joryirving__home-ops,onedr0p__home-ops,xunholy__k8s-gitops",
		"repositories whose cases run one process per object (default: every real repository of the corpus)")
	clusters := flag.String("clusters", "onedr0p__home-ops:kubernetes/flux/cluster,bjw-s-labs__home-ops:kubernetes/flux/cluster,buroa__k8s-gitops:kubernetes/flux/cluster,"+
		"billimek__k8s-gitops:setup/flux/cluster,fluxcd__flux2-hub-spoke-example:hub",
		"REPO:CLUSTER_DIR whole clusters (default: the corpus's clusters that build-all renders whole without --local-sources)")
	rounds := flag.Int("rounds", 3, "alternating rounds of the whole-cluster scenario")
	warmRuns := flag.Int("warm-runs", 5, "warm build-all runs a round")
	diffSpec := flag.String("diff", "onedr0p__home-ops:kubernetes/flux/cluster:kubernetes/apps/default/atuin/app/helmrelease.yaml",
		"REPO:CLUSTER_DIR:FILE: diff --flux on a git copy of REPO where FILE's first -diff-old becomes -diff-new (empty: no diff scenario)")
	diffOld := flag.String("diff-old", "tag: 18.19.0@", "the text of -diff's FILE replaced")
	diffNew := flag.String("diff-new", "tag: 18.19.1@", "what replaces it")
	diffRuns := flag.Int("diff-runs", 7, "runs of each diff --flux measurement")
	kpipeBin := flag.String("kpipe", "", "the kpipe binary (default: plain `go build ./cmd/kpipe` into the work directory)")
	work := flag.String("work", "", "work directory (default: a new temporary directory)")
	results := flag.String("results", "", "append the results as Markdown to this file")
	flag.Parse()
	fluxBin := os.Getenv("KPIPE_FLUX_BIN")
	if fluxBin == "" {
		fluxBin = "/work/ref/bin/flux"
	}
	if _, err := os.Stat(fluxBin); err != nil {
		fmt.Println("fluxbench: no flux CLI: set KPIPE_FLUX_BIN (build it from a fluxcd/flux2 checkout: put any YAML file in cmd/flux/manifests/, then GOTOOLCHAIN=go1.27.3 go build ./cmd/flux)")
		return
	}
	if *corpus == "" {
		fmt.Println("fluxbench: set -corpus or KPIPE_FLUX_CORPUS to the reference corpus directory")
		return
	}
	b := &bench{flux: fluxBin, corpus: *corpus, work: *work}
	if err := b.run(*kpipeBin, list(*repos), list(*clusters), *rounds, *warmRuns, diffEdit{*diffSpec, *diffOld, *diffNew}, *diffRuns); err != nil {
		fmt.Fprintln(os.Stderr, "fluxbench:", err)
		os.Exit(1)
	}
	fmt.Print(b.out.String())
	if *results != "" {
		f, err := os.OpenFile(*results, os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fluxbench:", err)
			os.Exit(1)
		}
		defer f.Close()
		f.WriteString("\n" + b.out.String())
	}
}

// list splits a comma-separated flag (empty: none).
func list(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

type bench struct {
	flux, kpipe, corpus, work string
	out                       strings.Builder
	bars                      []string
	cases                     map[string][]fluxCase // repo -> its file cases
	perObject                 map[string]time.Duration
	fluxCluster               map[string]time.Duration // REPO:CLUSTER_DIR -> flux one object at a time (median)
}

// env is the environment of every run: no kubeconfig, no namespace
// override (as the corpus ran), and kpipe's cache under cache.
func (b *bench) env(cache string) []string {
	var env []string
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, "FLUX_SYSTEM_NAMESPACE=") || strings.HasPrefix(e, "KUBECONFIG=") || strings.HasPrefix(e, "XDG_CACHE_HOME=") {
			continue
		}
		env = append(env, e)
	}
	env = append(env, "KUBECONFIG=/nonexistent-kubeconfig")
	if cache != "" {
		env = append(env, "XDG_CACHE_HOME="+cache)
	}
	return env
}

func (b *bench) run(kpipeBin string, repos, clusters []string, rounds, warmRuns int, diff diffEdit, diffRuns int) error {
	if b.work == "" {
		d, err := os.MkdirTemp("", "fluxbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		b.work = d
	}
	b.kpipe = kpipeBin
	if b.kpipe == "" {
		b.kpipe = filepath.Join(b.work, "kpipe")
		cmd := exec.Command("go", "build", "-o", filepath.Dir(b.kpipe)+string(filepath.Separator), "./cmd/kpipe", "./cmd/kpipe-full") // kpipe-full beside kpipe, which hands runs over to it
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	if err := b.readCases(); err != nil {
		return err
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b.out, "## kpipe flux against the flux CLI (issue 52), %s\n\n", time.Now().Format("2006-01-02"))
	fmt.Fprintf(&b.out, "`go run ./benchmarks/fluxbench`: %d cores (%s), load before: %s; flux %s; kpipe plain `go build`.\n\n",
		runtime.NumCPU(), procstat.CPUModel(), strings.TrimSpace(string(load)), b.flux)
	if len(repos) > 0 {
		if err := b.perObjectScenario(repos); err != nil {
			return err
		}
	}
	b.fluxCluster = map[string]time.Duration{}
	if len(clusters) > 0 {
		if err := b.clusterScenario(clusters, rounds, warmRuns); err != nil {
			return err
		}
	}
	if diff.spec != "" {
		if err := b.diffScenario(diff, diffRuns); err != nil {
			return err
		}
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b.out, "Load after: %s.\n\n**Bars**:\n\n", strings.TrimSpace(string(load)))
	for _, l := range b.bars {
		fmt.Fprintf(&b.out, "- %s\n", l)
	}
	return nil
}

// readCases reads every file case of the corpus (one Flux Kustomization,
// one process), by repository.
func (b *bench) readCases() error {
	b.cases = map[string][]fluxCase{}
	files, err := filepath.Glob(filepath.Join(b.corpus, "cases", "*", "*", "case.json"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var c fluxCase
		if err := json.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if c.Variant != "file" || c.Status == "skipped" || c.Network {
			continue
		}
		b.cases[c.Repo] = append(b.cases[c.Repo], c)
	}
	return nil
}

// runFlux and runKpipe run one case.
func (b *bench) runFlux(c fluxCase) ([]byte, procstat.Stats) {
	out, st, _ := procstat.Run(c.Cwd, b.env(""), b.flux, c.Argv...)
	return out, st
}

func (b *bench) runKpipe(c fluxCase, cache string) ([]byte, procstat.Stats) {
	out, st, _ := procstat.Run(c.Cwd, b.env(cache), b.kpipe, append([]string{"flux"}, c.Argv...)...)
	return out, st
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func medianInt(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}

func (b *bench) bar(ok bool, format string, args ...any) {
	mark := "**met**"
	if !ok {
		mark = "**not met**"
	}
	b.bars = append(b.bars, fmt.Sprintf(format, args...)+": "+mark)
}

// perObjectScenario runs every case of repos, flux and kpipe in turn.
func (b *bench) perObjectScenario(repos []string) error {
	fmt.Fprintf(&b.out, "**One process per Flux Kustomization** (`flux build kustomization NAME --path ... --kustomization-file ... --dry-run`, and the same after `kpipe flux`), the two taking turns case by case; kpipe's cache empty at the start, then every case again (warm):\n\n")
	fmt.Fprintf(&b.out, "| repository | cases | same bytes | flux: sum / median / peak RSS median | kpipe, empty cache: sum / median / peak RSS median | kpipe again | ratio (sums): cold, warm | CPU ratio (sums): cold, warm |\n|---|---|---|---|---|---|---|---|\n")
	b.perObject = map[string]time.Duration{}
	var allFlux, allCold, allWarm time.Duration
	var cpuFlux, cpuCold, cpuWarm time.Duration // user + system
	for _, repo := range repos {
		cases := b.cases[repo]
		if len(cases) == 0 {
			return fmt.Errorf("no cases for %s in %s", repo, b.corpus)
		}
		cache := filepath.Join(b.work, "cache-"+repo)
		var fw, kc, kw []time.Duration
		var fc, kcc, kwc []time.Duration // CPU
		var fr, kr []int64
		same := 0
		for _, c := range cases {
			fo, fs := b.runFlux(c)
			ko, ks := b.runKpipe(c, cache)
			fw, kc = append(fw, fs.Wall), append(kc, ks.Wall)
			fc, kcc = append(fc, fs.CPU), append(kcc, ks.CPU)
			fr, kr = append(fr, fs.MaxRSS), append(kr, ks.MaxRSS)
			if bytes.Equal(fo, ko) {
				same++
			}
			b.perObject[repo+"\x00"+c.Name] = fs.Wall
		}
		for _, c := range cases {
			_, ks := b.runKpipe(c, cache)
			kw, kwc = append(kw, ks.Wall), append(kwc, ks.CPU)
		}
		allFlux, allCold, allWarm = allFlux+sum(fw), allCold+sum(kc), allWarm+sum(kw)
		cpuFlux, cpuCold, cpuWarm = cpuFlux+sum(fc), cpuCold+sum(kcc), cpuWarm+sum(kwc)
		fmt.Fprintf(&b.out, "| %s | %d | %d | %.2f s / %.0f ms / %d MB | %.2f s / %.1f ms / %d MB | %.2f s / %.1f ms | %.1fx, %.1fx | %.1fx, %.1fx |\n",
			repo, len(cases), same, sum(fw).Seconds(), ms(median(fw)), medianInt(fr)>>20, sum(kc).Seconds(), ms(median(kc)), medianInt(kr)>>20,
			sum(kw).Seconds(), ms(median(kw)), ratio(sum(fw), sum(kc)), ratio(sum(fw), sum(kw)), ratio(sum(fc), sum(kcc)), ratio(sum(fc), sum(kwc)))
	}
	fmt.Fprintf(&b.out, "| all | | | %.1f s (CPU %.1f s) | %.2f s (CPU %.2f s) | %.2f s (CPU %.2f s) | %.1fx, %.1fx | %.1fx, %.1fx |\n",
		allFlux.Seconds(), cpuFlux.Seconds(), allCold.Seconds(), cpuCold.Seconds(), allWarm.Seconds(), cpuWarm.Seconds(),
		ratio(allFlux, allCold), ratio(allFlux, allWarm), ratio(cpuFlux, cpuCold), ratio(cpuFlux, cpuWarm))
	fmt.Fprintf(&b.out, "\n(Same bytes: kpipe's stdout equal to flux's, run now; a refused case prints nothing on stdout in both. CPU: user + system of each process, the steadier measure on a shared machine.)\n\n")
	b.bar(ratio(allFlux, allCold) >= 10, "one process per object, kpipe at least 10x faster than flux (empty cache at the start): %.1fx (%.1f s against %.1f s; warm %.1fx)",
		ratio(allFlux, allCold), allCold.Seconds(), allFlux.Seconds(), ratio(allFlux, allWarm))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// clusterScenario runs build-all over whole clusters against flux one
// object at a time.
func (b *bench) clusterScenario(clusters []string, rounds, warmRuns int) error {
	fmt.Fprintf(&b.out, "**A whole cluster**: `kpipe flux build-all --dry-run CLUSTER_DIR --out-dir OUT` with an empty cache (cold) and again %d times (warm), against flux one process per Flux Kustomization that build-all rendered (the corpus case of each); %d alternating rounds, medians (CPU: user + system):\n\n", warmRuns, rounds)
	fmt.Fprintf(&b.out, "| repository, cluster | Kustomizations (with a flux case) | flux, one at a time | kpipe cold | kpipe warm | ratio cold | ratio warm | CPU ratio cold, warm |\n|---|---|---|---|---|---|---|---|\n")
	minCold, minWarm := 0.0, 0.0
	var leastCold, leastWarm string
	for i, spec := range clusters {
		repo, dir, ok := strings.Cut(spec, ":")
		if !ok {
			return fmt.Errorf("-clusters %q: want REPO:CLUSTER_DIR", spec)
		}
		cwd := filepath.Join(filepath.Dir(filepath.Clean(b.corpus)), repo)
		// Which Kustomizations build-all renders: from a first run's report.
		report := filepath.Join(b.work, "report.json")
		if _, _, err := procstat.Run(cwd, b.env(filepath.Join(b.work, "probe")), b.kpipe, "flux", "build-all", "--dry-run", dir, "--report", report); err != nil && !strings.Contains(err.Error(), "failed") {
			return err
		}
		var rep struct {
			Kustomizations []struct{ Name, Namespace string } `json:"kustomizations"`
		}
		data, err := os.ReadFile(report)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			return err
		}
		names := map[string]bool{}
		for _, k := range rep.Kustomizations {
			names[k.Name] = true
		}
		var cases []fluxCase
		for _, c := range b.cases[repo] {
			if names[c.Name] {
				cases = append(cases, c)
			}
		}
		var fl, cold, warm, flCPU, coldCPU, warmCPU []time.Duration
		for r := 0; r < rounds; r++ {
			cache := filepath.Join(b.work, fmt.Sprintf("cluster-%d-%d", i, r))
			out := filepath.Join(b.work, fmt.Sprintf("out-%d-%d", i, r))
			args := []string{"flux", "build-all", "--dry-run", dir, "--out-dir", out}
			_, st, _ := procstat.Run(cwd, b.env(cache), b.kpipe, args...)
			cold, coldCPU = append(cold, st.Wall), append(coldCPU, st.CPU)
			for w := 0; w < warmRuns; w++ {
				_, st, _ = procstat.Run(cwd, b.env(cache), b.kpipe, args...)
				warm, warmCPU = append(warm, st.Wall), append(warmCPU, st.CPU)
			}
			var total, totalCPU time.Duration
			for _, c := range cases {
				_, fs := b.runFlux(c)
				total, totalCPU = total+fs.Wall, totalCPU+fs.CPU
			}
			fl, flCPU = append(fl, total), append(flCPU, totalCPU)
		}
		b.fluxCluster[spec] = median(fl)
		rc, rw := ratio(median(fl), median(cold)), ratio(median(fl), median(warm))
		if i == 0 || rc < minCold {
			minCold, leastCold = rc, fmt.Sprintf("%s, %d Kustomizations", repo, len(rep.Kustomizations))
		}
		if i == 0 || rw < minWarm {
			minWarm, leastWarm = rw, fmt.Sprintf("%s, %d Kustomizations", repo, len(rep.Kustomizations))
		}
		fmt.Fprintf(&b.out, "| %s, %s | %d (%d) | %.2f s (CPU %.2f s) | %.0f ms (CPU %.0f ms) | %.1f ms (CPU %.1f ms) | %.0fx | %.0fx | %.0fx, %.0fx |\n",
			repo, dir, len(rep.Kustomizations), len(cases), median(fl).Seconds(), median(flCPU).Seconds(), ms(median(cold)), ms(median(coldCPU)),
			ms(median(warm)), ms(median(warmCPU)), rc, rw, ratio(median(flCPU), median(coldCPU)), ratio(median(flCPU), median(warmCPU)))
	}
	fmt.Fprintln(&b.out)
	b.bar(minCold >= 50, "a whole cluster with build-all at least 50x faster cold than flux one object at a time: %.0fx (the least of the clusters: %s)", minCold, leastCold)
	b.bar(minWarm >= 500, "and at least 500x warm: %.0fx (the least of the clusters: %s)", minWarm, leastWarm)
	return nil
}
