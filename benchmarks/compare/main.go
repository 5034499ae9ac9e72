// Command compare measures kpipe against kustomize on the same synthetic
// monorepo in one run, checks that kpipe's output is byte-identical to
// kustomize's for every root, and prints (and optionally writes) a table of
// ratios:
//
//	go run ./benchmarks/compare -apps 100 -envs 4 -results benchmarks/RESULTS.md
//
// Scenarios: kustomize run once per root (sequentially, as a CI loop runs
// it) against kpipe build-all with an empty cache (cold), again with
// nothing changed (warm), and after one shared base file changed (the
// Deployment of the first app, used by that app's overlays); and a single
// large root. Without kustomize (not on PATH nor in ~/go/bin) only kpipe's
// times are printed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/genrepo"
	"github.com/kpipe/kpipe/internal/procstat"
)

func main() {
	apps := flag.Int("apps", 100, "number of apps")
	envs := flag.Int("envs", 4, "environments per app (roots = apps x envs)")
	extra := flag.Int("extra", 3, "extra ConfigMaps per app base")
	large := flag.Int("large", 1500, "resources in the single large root")
	work := flag.String("work", "", "work directory (default: a new temporary directory)")
	results := flag.String("results", "", "write the results as Markdown to this file")
	kpipeBin := flag.String("kpipe", "", "a kpipe binary to measure (default: built from ./cmd/kpipe into the work directory)")
	flag.Parse()
	if err := run(*apps, *envs, *extra, *large, *work, *results, *kpipeBin); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// measurement is one timed command.
type measurement struct {
	wall   time.Duration
	maxRSS int64 // bytes
}

func run(apps, envs, extra, large int, work, results, kpipe string) error {
	if work == "" {
		d, err := os.MkdirTemp("", "kpipe-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		work = d
	}
	repo := filepath.Join(work, "repo")
	os.RemoveAll(repo)
	roots, err := genrepo.Write(repo, genrepo.Spec{Apps: apps, Envs: envs, ResourcesPerApp: extra})
	if err != nil {
		return err
	}
	if kpipe == "" {
		kpipe = filepath.Join(work, "kpipe")
		cmd := exec.Command("go", "build", "-o", filepath.Dir(kpipe)+string(filepath.Separator), "./cmd/kpipe", "./cmd/kpipe-full") // kpipe-full beside kpipe, which hands runs over to it
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building kpipe: %v\n%s", err, out)
		}
	} else if kpipe, err = filepath.Abs(kpipe); err != nil {
		return err // (the runs start in the tree's directory)
	}
	kustomize := findKustomize()
	cacheDir := filepath.Join(work, "cache")
	outDir := filepath.Join(work, "out")
	os.RemoveAll(cacheDir)
	os.RemoveAll(outDir)

	fmt.Printf("monorepo: %d roots (%d apps x %d envs) in %s\n", len(roots), apps, envs, repo)
	buildAll := func(extra ...string) (measurement, error) {
		return timed(repo, kpipe, append([]string{"build-all", ".", "--out-dir", outDir, "--cache-dir", cacheDir, "--report", filepath.Join(work, "report.json")}, extra...)...)
	}
	// settle waits out the stat index's racy window (2 s, as git's), so
	// that files written just before a run are not taken as changed by it:
	// in CI, runs are minutes apart.
	settle := func() { time.Sleep(2100 * time.Millisecond) }

	// kustomize first: it also puts the generated files well outside the
	// racy window before kpipe's first run.
	var kz measurement
	kzOut := map[string][]byte{}
	mismatches := 0
	if kustomize != "" {
		start := time.Now()
		for _, r := range roots {
			out, m, err := capture(repo, kustomize, "build", r)
			if err != nil {
				return fmt.Errorf("kustomize build %s: %v", r, err)
			}
			kzOut[r] = out
			if m.maxRSS > kz.maxRSS {
				kz.maxRSS = m.maxRSS
			}
		}
		kz.wall = time.Since(start)
		fmt.Printf("kustomize, once per root: %v (%v per root)\n", kz.wall, kz.wall/time.Duration(len(roots)))
	} else {
		settle()
	}

	// Each cold run writes into new directories, after a sync, as
	// cachebench's do; they are deleted at the end. Deleting the last
	// run's output and cache just before a run made it slower, and the
	// cache's run most (it creates more files): ext4 without a journal
	// (this project's VMs) checks the inodes deleted within the last
	// minute before it creates one, and the write-back of the deletions
	// alone moved a 300 ms run by 20-30%.
	syncDisk := func() { _ = exec.Command("sync").Run() }
	var coldDirs []string
	fresh := func() error {
		n := len(coldDirs) / 2
		outDir = filepath.Join(work, fmt.Sprintf("out-cold%d", n))
		cacheDir = filepath.Join(work, fmt.Sprintf("cache-cold%d", n))
		coldDirs = append(coldDirs, outDir, cacheDir)
		syncDisk()
		return nil
	}
	defer func() {
		for _, d := range coldDirs {
			os.RemoveAll(d)
		}
	}()
	noCache, err := median(3, fresh, func() (measurement, error) {
		return timed(repo, kpipe, "build-all", ".", "--out-dir", outDir, "--no-cache")
	})
	if err != nil {
		return err
	}
	fmt.Printf("kpipe cold, --no-cache: %v\n", noCache.wall)
	// (The warm runs below use the last cold run's cache and output.)
	cold, err := median(3, fresh, func() (measurement, error) { return buildAll() })
	if err != nil {
		return err
	}
	fmt.Printf("kpipe cold:  %v\n", cold.wall)
	if kustomize != "" {
		mismatches += compareOutputs(outDir, roots, kzOut)
	}
	warm, err := median(3, func() error { settle(); return nil }, func() (measurement, error) { return buildAll() })
	if err != nil {
		return err
	}
	fmt.Printf("kpipe warm:  %v\n", warm.wall)

	// One shared base file changes (a new value each time).
	base := filepath.Join(repo, genrepo.SharedBaseFile)
	data, err := os.ReadFile(base)
	if err != nil {
		return err
	}
	edit := 0
	changed, err := median(3, func() error {
		settle()
		edit++
		return os.WriteFile(base, bytes.Replace(data, []byte("cpu: 100m"), []byte(fmt.Sprintf("cpu: %dm", 100+edit)), 1), 0o644)
	}, func() (measurement, error) { return buildAll() })
	if err != nil {
		return err
	}
	fmt.Printf("kpipe after one base file changed: %v\n", changed.wall)
	if kustomize != "" {
		// kustomize has no cache: after a change it costs what it cost
		// before. Only the affected roots are re-run, to check the output.
		affected := roots[:envs]
		for _, r := range affected {
			out, _, err := capture(repo, kustomize, "build", r)
			if err != nil {
				return fmt.Errorf("kustomize build %s: %v", r, err)
			}
			kzOut[r] = out
		}
		mismatches += compareOutputs(outDir, affected, kzOut)
	}

	// A single large root.
	largeRepo := filepath.Join(work, "large")
	os.RemoveAll(largeRepo)
	lroots, err := genrepo.Write(largeRepo, genrepo.Spec{Apps: 1, Envs: 1, ResourcesPerApp: large})
	if err != nil {
		return err
	}
	kpLarge, m, err := capture(largeRepo, kpipe, "build", lroots[0], "--no-cache")
	if err != nil {
		return fmt.Errorf("kpipe build (large): %v", err)
	}
	fmt.Printf("kpipe single large root (%d resources, no cache): %v\n", large, m.wall)
	var kzLarge measurement
	if kustomize != "" {
		out, km, err := capture(largeRepo, kustomize, "build", lroots[0])
		if err != nil {
			return fmt.Errorf("kustomize build (large): %v", err)
		}
		kzLarge = km
		if !bytes.Equal(out, kpLarge) {
			fmt.Println("MISMATCH: single large root output differs from kustomize's")
			mismatches++
		}
		fmt.Printf("kustomize single large root: %v\n", km.wall)
	}

	table := &strings.Builder{}
	fmt.Fprintf(table, "| scenario | kustomize | kpipe | speedup | kpipe peak RSS |\n|---|---|---|---|---|\n")
	row := func(name string, k, p measurement) {
		ratio := "n/a"
		ks := "not installed"
		if kustomize != "" {
			ratio = fmt.Sprintf("%.0fx", k.wall.Seconds()/p.wall.Seconds())
			ks = round(k.wall).String()
		}
		fmt.Fprintf(table, "| %s | %s | %s | %s | %d MiB |\n", name, ks, round(p.wall), ratio, p.maxRSS>>20)
	}
	row(fmt.Sprintf("cold build-all, %d roots, --no-cache", len(roots)), kz, noCache)
	row(fmt.Sprintf("cold build-all, %d roots (empty cache)", len(roots)), kz, cold)
	row("warm, nothing changed", kz, warm)
	row("warm, one shared base file changed", kz, changed)
	row(fmt.Sprintf("single large root (%d resources)", large), kzLarge, m)
	fmt.Print("\n" + table.String())
	if kustomize == "" {
		fmt.Println("\nkustomize not found (install: go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.2): comparison skipped")
	} else if mismatches == 0 {
		fmt.Printf("\nall %d roots (and the large root) byte-identical to kustomize's output\n", len(roots))
	} else {
		fmt.Printf("\n%d outputs differ from kustomize's\n", mismatches)
	}
	if results != "" {
		md := &strings.Builder{}
		fmt.Fprintf(md, "# kpipe vs kustomize\n\n")
		fmt.Fprintf(md, "- date: %s\n- machine: %s, %d CPUs, %s/%s\n- kustomize: %s\n- command: `go run ./benchmarks/compare -apps %d -envs %d -extra %d -large %d -results %s`\n\n",
			time.Now().UTC().Format("2006-01-02 15:04 MST"), procstat.CPUModel(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, procstat.KustomizeVersion(kustomize),
			apps, envs, extra, large, results)
		md.WriteString("kustomize is run once per root, one after another (what a CI loop does); kpipe runs `build-all` over the whole tree in one process. ")
		md.WriteString("Each kpipe figure is the median of 3 runs; warm runs start 2 s after the previous run wrote its files (the stat index's racy window, as git's: in CI, runs are minutes apart). ")
		md.WriteString("\"One shared base file changed\" edits `" + genrepo.SharedBaseFile + "`, used by that app's overlays; kustomize, which has no cache, costs the same as in the cold row. Peak RSS is the kpipe process's maximum resident set.\n\n")
		md.WriteString(table.String())
		if kustomize != "" {
			fmt.Fprintf(md, "\nOutputs compared byte for byte with kustomize's for all %d roots (and the changed roots again after the edit, and the large root): %d differences.\n", len(roots), mismatches)
		}
		if err := os.WriteFile(results, []byte(md.String()), 0o644); err != nil {
			return err
		}
	}
	if mismatches > 0 {
		return fmt.Errorf("%d outputs differ from kustomize's", mismatches)
	}
	return nil
}

// median runs prepare then run n times and returns the run with the median
// wall time (and the highest peak RSS seen).
func median(n int, prepare func() error, run func() (measurement, error)) (measurement, error) {
	var ms []measurement
	var rss int64
	for i := 0; i < n; i++ {
		if err := prepare(); err != nil {
			return measurement{}, err
		}
		m, err := run()
		if err != nil {
			return measurement{}, err
		}
		ms = append(ms, m)
		rss = max(rss, m.maxRSS)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].wall < ms[j].wall })
	m := ms[len(ms)/2]
	m.maxRSS = rss
	return m, nil
}

func round(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// compareOutputs counts the roots whose kpipe output file differs from
// kustomize's output.
func compareOutputs(outDir string, roots []string, kz map[string][]byte) int {
	bad := 0
	for _, r := range roots {
		got, err := os.ReadFile(filepath.Join(outDir, r+".yaml"))
		if err != nil || !bytes.Equal(got, kz[r]) {
			if bad < 5 {
				fmt.Printf("MISMATCH: %s (kpipe output %s)\n", r, filepath.Join(outDir, r+".yaml"))
			}
			bad++
		}
	}
	return bad
}

func timed(dir, name string, args ...string) (measurement, error) {
	_, m, err := capture(dir, name, args...)
	return m, err
}

// capture runs a command in dir and returns its stdout, wall time and peak
// RSS.
func capture(dir, name string, args ...string) ([]byte, measurement, error) {
	out, st, err := procstat.Run(dir, nil, name, args...)
	return out, measurement{wall: st.Wall, maxRSS: st.MaxRSS}, err
}

func findKustomize() string {
	if p, err := exec.LookPath("kustomize"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, "go", "bin", "kustomize")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}
