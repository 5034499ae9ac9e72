// Command startcost measures what a user times first: one `kpipe build`
// process per root, with the binary plain `go build ./cmd/kpipe` makes (no
// tags, no flags: what `go install` gives), against one `kustomize build`
// per root, the two taking turns root by root in one run; medians and
// ratios, every output compared byte for byte (issue 48):
//
//	go run ./benchmarks/startcost -real /path/to/tree,/path/to/other -results benchmarks/RESULTS.md
//
// Scenarios:
//
//   - small: -small distinct small roots (a ConfigMap and a namePrefix),
//     each built once by kustomize and once by kpipe with the default
//     cache (XDG_CACHE_HOME in the work directory, empty at the start, so
//     every root is new to it); then the same roots again, nothing
//     changed. The median of the last 50 new roots against the first 50
//     says whether a run's cost grows with the runs before it.
//   - start-up: `kpipe version` against a Go hello world built here the
//     same way, alternated.
//   - breakdown: where a tiny build's time goes. Process against process
//     (medians): the hello world (a Go process), `kpipe version` (kpipe's
//     start: runtime, package initialisation, the CLI), `kpipe build
//     --no-cache` of new roots (plus load, build, output), `kpipe build`
//     of new roots with the cache (plus the cache's lookups and writes),
//     the same again. Then -traced new roots, and the same again, with
//     --trace, whose phases split the process's time: before the command
//     (from the process's start to the command's first phase, from the
//     trace's otherData.start), open cache, lookup, load, build, output,
//     record, close cache.
//   - real: every kustomization directory of each -real tree (checkouts of
//     public repositories, never committed), one process per root:
//     kustomize, and kpipe with an empty cache, then both again with
//     nothing changed; timed over the roots both build (most that fail
//     need the network), outputs compared.
//
// The bars are checked and printed at the end: a new small root
// at most 8 ms median and 2x faster than kustomize, the same root again at
// most 3 ms and 5x, `kpipe version` within 1.5 ms of the hello world, the
// real trees' loop 5x cold and 20x again, no growth over the small loop.
// The machine (cores, CPU, load average before and after) goes with the
// results.
package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
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

func main() {
	small := flag.Int("small", 600, "distinct small roots, built one process each")
	traced := flag.Int("traced", 100, "new small roots built with --trace for the breakdown (and as many again)")
	real := flag.String("real", "", "comma-separated real trees for the per-root loop")
	kpipe := flag.String("kpipe", "", "the kpipe binary (default: plain `go build ./cmd/kpipe` into the work directory)")
	work := flag.String("work", "", "work directory (default: a new temporary directory)")
	results := flag.String("results", "", "append the results as Markdown to this file")
	flag.Parse()
	if err := run(*small, *traced, *real, *kpipe, *work, *results); err != nil {
		fmt.Fprintln(os.Stderr, "startcost:", err)
		os.Exit(1)
	}
}

type bench struct {
	work, kpipe, kustomize, hello string
	out                           strings.Builder // the Markdown results
	bars                          []string        // the bars, met or not
	failed                        int
	mismatch                      []string // roots of real trees whose output differs from kustomize's
}

func run(small, traced int, real, kpipe, work, results string) error {
	if small < 100 {
		return fmt.Errorf("-small %d: at least 100 (the growth check compares the first and last 50)", small)
	}
	b := &bench{kustomize: procstat.Kustomize()}
	if b.kustomize == "" {
		return fmt.Errorf("kustomize v5.8.2 not found (go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.2, or run .ci/run once)")
	}
	if work == "" {
		d, err := os.MkdirTemp("", "startcost")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		work = d
	}
	b.work = work
	var err error
	if b.kpipe, err = b.binary(kpipe); err != nil {
		return err
	}
	if b.hello, err = b.helloWorld(); err != nil {
		return err
	}
	load0 := loadAverage()
	started := time.Now().UTC()
	fmt.Fprintf(&b.out, "kpipe: %s; kustomize: %s\n\n", describe(b.kpipe), b.kustomize)
	if err := b.small(small); err != nil {
		return fmt.Errorf("small: %w", err)
	}
	if err := b.startup(small); err != nil {
		return fmt.Errorf("start-up: %w", err)
	}
	if err := b.breakdown(traced); err != nil {
		return fmt.Errorf("breakdown: %w", err)
	}
	if real != "" {
		if err := b.real(strings.Split(real, ",")); err != nil {
			return fmt.Errorf("real: %w", err)
		}
	}
	for _, m := range b.mismatch {
		fmt.Fprintf(&b.out, "\nFAILED: %s\n", m)
	}
	fmt.Fprintf(&b.out, "\n**Bars (issue 48):**\n\n")
	for _, l := range b.bars {
		fmt.Fprintf(&b.out, "- %s\n", l)
	}
	head := fmt.Sprintf("### startcost, %s-%s UTC, %s; load average %s before, %s after\n\n",
		started.Format("2006-01-02 15:04"), time.Now().UTC().Format("15:04"), machine(), load0, loadAverage())
	fmt.Print(head + b.out.String())
	if results != "" {
		f, err := os.OpenFile(results, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		fmt.Fprint(f, "\n"+head+b.out.String())
		if err := f.Close(); err != nil {
			return err
		}
	}
	if b.failed > 0 || len(b.mismatch) > 0 {
		return fmt.Errorf("%d bars not met, %d outputs differ from kustomize's", b.failed, len(b.mismatch))
	}
	return nil
}

// binary returns the kpipe to measure: the one given, or the one plain
// `go build ./cmd/kpipe` makes (run from the module's root).
func (b *bench) binary(given string) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	bin := filepath.Join(b.work, "kpipe")
	if out, err := exec.Command("go", "build", "-o", filepath.Dir(bin)+string(filepath.Separator), "./cmd/kpipe", "./cmd/kpipe-full").CombinedOutput(); err != nil { // kpipe-full beside kpipe, which hands runs over to it
		return "", fmt.Errorf("go build ./cmd/kpipe (run from the module's root): %v\n%s", err, out)
	}
	return bin, nil
}

// helloWorld builds a Go program that prints one line, as plainly.
func (b *bench) helloWorld() (string, error) {
	dir := filepath.Join(b.work, "hello")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello, world\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", "hello", ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the hello world: %v\n%s", err, out)
	}
	return filepath.Join(dir, "hello"), nil
}

// smallRoots writes n small roots under name: a ConfigMap and a
// namePrefix each, all different.
func (b *bench) smallRoots(name string, n int) ([]string, error) {
	var roots []string
	for i := range n {
		d := filepath.Join(b.work, name, fmt.Sprintf("r%04d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		k := fmt.Sprintf("namePrefix: %s%d-\nresources:\n- cm.yaml\n", name, i)
		cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  key: \"%d\"\n", i)
		if err := os.WriteFile(filepath.Join(d, "kustomization.yaml"), []byte(k), 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(d, "cm.yaml"), []byte(cm), 0o644); err != nil {
			return nil, err
		}
		roots = append(roots, d)
	}
	return roots, nil
}

// cacheEnv is the environment of kpipe runs whose default cache is
// XDG_CACHE_HOME=<work>/<name>, emptied first.
func (b *bench) cacheEnv(name string) []string {
	dir := filepath.Join(b.work, name)
	os.RemoveAll(dir)
	return append(os.Environ(), "XDG_CACHE_HOME="+dir)
}

// pair builds root with kustomize and with kpipe (args after "build
// ROOT"), the order given by first, and compares the outputs. ok is false
// when kustomize fails (then kpipe must fail too).
func (b *bench) pair(dir, root string, env []string, kzFirst bool, args ...string) (kz, kp procstat.Stats, ok bool, err error) {
	var kzOut, kpOut []byte
	var kzErr, kpErr error
	kustomize := func() { kzOut, kz, kzErr = procstat.Run(dir, nil, b.kustomize, "build", root) }
	kpipe := func() {
		kpOut, kp, kpErr = procstat.Run(dir, env, b.kpipe, append([]string{"build", root}, args...)...)
	}
	if kzFirst {
		kustomize()
		kpipe()
	} else {
		kpipe()
		kustomize()
	}
	switch {
	case kzErr != nil && kpErr == nil:
		return kz, kp, false, fmt.Errorf("%s: kpipe built what kustomize does not: %v", root, kzErr)
	case kzErr != nil:
		return kz, kp, false, nil
	case kpErr != nil:
		return kz, kp, false, fmt.Errorf("%s: kpipe failed where kustomize did not: %v", root, kpErr)
	case !bytes.Equal(kzOut, kpOut):
		return kz, kp, false, fmt.Errorf("%s: kpipe's output differs from kustomize's", root)
	}
	return kz, kp, true, nil
}

// small: new small roots with the default cache, then the same again.
func (b *bench) small(n int) error {
	roots, err := b.smallRoots("small", n)
	if err != nil {
		return err
	}
	env := b.cacheEnv("xdg-small")
	var kzNew, kpNew, kzAgain, kpAgain []procstat.Stats
	for pass := range 2 {
		for i, r := range roots {
			kz, kp, ok, err := b.pair(b.work, r, env, i%2 == 0)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%s: kustomize failed on a small root", r)
			}
			if pass == 0 {
				kzNew, kpNew = append(kzNew, kz), append(kpNew, kp)
			} else {
				kzAgain, kpAgain = append(kzAgain, kz), append(kpAgain, kp)
			}
		}
	}
	fmt.Fprintf(&b.out, "**%d small roots** (a ConfigMap and a namePrefix each), one process per root, the default cache, kustomize and kpipe taking turns root by root; medians (interquartile range):\n\n", n)
	fmt.Fprintf(&b.out, "| run | kustomize wall | kpipe wall | kustomize / kpipe | kustomize CPU | kpipe CPU |\n|---|---|---|---|---|---|\n")
	b.row("a new root (empty cache at the start)", kzNew, kpNew)
	b.row("the same root again, nothing changed", kzAgain, kpAgain)
	first, last := median(wall(kpNew[:50])), median(wall(kpNew[len(kpNew)-50:]))
	firstA, lastA := median(wall(kpAgain[:50])), median(wall(kpAgain[len(kpAgain)-50:]))
	fmt.Fprintf(&b.out, "\nGrowth over the %d new roots on one cache: median of the first 50 %s, of the last 50 %s (%.2fx); again: %s and %s (%.2fx).\n\n",
		n, ms(first), ms(last), last.Seconds()/first.Seconds(), ms(firstA), ms(lastA), lastA.Seconds()/firstA.Seconds())
	mNew, mAgain := median(wall(kpNew)), median(wall(kpAgain))
	rNew, rAgain := median(wall(kzNew)).Seconds()/mNew.Seconds(), median(wall(kzAgain)).Seconds()/mAgain.Seconds()
	b.bar(mNew <= 8*time.Millisecond && rNew >= 2, "a new small root: %s median (at most 8 ms), %.2fx faster than kustomize (at least 2x)", ms(mNew), rNew)
	b.bar(mAgain <= 3*time.Millisecond && rAgain >= 5, "the same root again: %s median (at most 3 ms), %.2fx (at least 5x)", ms(mAgain), rAgain)
	b.bar(last.Seconds() <= 1.25*first.Seconds() && lastA.Seconds() <= 1.25*firstA.Seconds(), "no growth over %d builds on one cache: last 50 / first 50 = %.2fx new, %.2fx again (at most 1.25x)",
		n, last.Seconds()/first.Seconds(), lastA.Seconds()/firstA.Seconds())
	return nil
}

// startup: `kpipe version` against the hello world.
func (b *bench) startup(n int) error {
	var hello, version []procstat.Stats
	for i := range n {
		h := func() error {
			_, st, err := procstat.Run(b.work, nil, b.hello)
			hello = append(hello, st)
			return err
		}
		v := func() error {
			_, st, err := procstat.Run(b.work, nil, b.kpipe, "version")
			version = append(version, st)
			return err
		}
		first, second := h, v
		if i%2 == 1 {
			first, second = v, h
		}
		if err := first(); err != nil {
			return err
		}
		if err := second(); err != nil {
			return err
		}
	}
	d := median(wall(version)) - median(wall(hello))
	fmt.Fprintf(&b.out, "**Start-up**, %d runs each, alternated: a Go hello world %s wall (%s CPU), `kpipe version` %s (%s CPU): %s more.\n\n",
		n, ms(median(wall(hello))), ms(median(cpu(hello))), ms(median(wall(version))), ms(median(cpu(version))), ms(d))
	b.bar(d <= 1500*time.Microsecond, "`kpipe version` within 1.5 ms of a Go hello world: %s more", ms(d))
	return nil
}

// phaseNames are kpipe build's phases in --trace, in order.
var phaseNames = []string{"open cache", "lookup", "listen for signals", "load", "build", "output", "record", "close cache"}

// breakdown: where a tiny build's time goes.
func (b *bench) breakdown(n int) error {
	roots, err := b.smallRoots("tiny", 3*n)
	if err != nil {
		return err
	}
	noCache, withCache, traced := roots[:n], roots[n:2*n], roots[2*n:]
	env := b.cacheEnv("xdg-tiny")
	type sample struct{ hello, version, noCache, cold, again procstat.Stats }
	var ss []sample
	// Process against process, in rounds: each round runs one of each
	// (a new root for --no-cache and for the cache), in turn.
	for i := range n {
		var s sample
		steps := []func() error{
			func() (err error) { _, s.hello, err = procstat.Run(b.work, nil, b.hello); return },
			func() (err error) { _, s.version, err = procstat.Run(b.work, nil, b.kpipe, "version"); return },
			func() (err error) {
				_, s.noCache, err = procstat.Run(b.work, env, b.kpipe, "build", noCache[i], "--no-cache")
				return
			},
			func() (err error) { _, s.cold, err = procstat.Run(b.work, env, b.kpipe, "build", withCache[i]); return },
		}
		if i%2 == 1 {
			for l, r := 0, len(steps)-1; l < r; l, r = l+1, r-1 {
				steps[l], steps[r] = steps[r], steps[l]
			}
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		ss = append(ss, s)
	}
	for i := range n {
		_, st, err := procstat.Run(b.work, env, b.kpipe, "build", withCache[i])
		if err != nil {
			return err
		}
		ss[i].again = st
	}
	col := func(f func(sample) procstat.Stats) []procstat.Stats {
		var out []procstat.Stats
		for _, s := range ss {
			out = append(out, f(s))
		}
		return out
	}
	hello, version := median(wall(col(func(s sample) procstat.Stats { return s.hello }))), median(wall(col(func(s sample) procstat.Stats { return s.version })))
	nc, cold := median(wall(col(func(s sample) procstat.Stats { return s.noCache }))), median(wall(col(func(s sample) procstat.Stats { return s.cold })))
	again := median(wall(col(func(s sample) procstat.Stats { return s.again })))
	fmt.Fprintf(&b.out, "**Where a tiny build's time goes**, process against process (%d of each, medians of wall time):\n\n", n)
	fmt.Fprintf(&b.out, "| process | wall | more than the line above | what the difference is |\n|---|---|---|---|\n")
	fmt.Fprintf(&b.out, "| a Go hello world | %s | | a Go process |\n", ms(hello))
	fmt.Fprintf(&b.out, "| `kpipe version` | %s | %s | kpipe's start-up: a larger binary, package initialisation, the CLI |\n", ms(version), ms(version-hello))
	fmt.Fprintf(&b.out, "| `kpipe build --no-cache`, a new root | %s | %s | load, build, output |\n", ms(nc), ms(nc-version))
	fmt.Fprintf(&b.out, "| `kpipe build`, a new root | %s | %s | the cache: its key's identity, lookups that miss, writes |\n", ms(cold), ms(cold-nc))
	fmt.Fprintf(&b.out, "| `kpipe build`, the same root again | %s | %s than a new root | the root's record and output read from the cache |\n\n", ms(again), ms(cold-again))

	// In the process: --trace's phases.
	tenv := b.cacheEnv("xdg-traced")
	phases := func() (map[string][]time.Duration, []time.Duration, error) {
		per := map[string][]time.Duration{}
		var before []time.Duration
		for i, r := range traced {
			tr := filepath.Join(b.work, "trace.json")
			start := time.Now()
			if _, _, err := procstat.Run(b.work, tenv, b.kpipe, "build", r, "--trace", tr); err != nil {
				return nil, nil, err
			}
			t0, evs, err := readPhases(tr)
			if err != nil {
				return nil, nil, fmt.Errorf("%s, run %d: %w", tr, i, err)
			}
			before = append(before, t0.Sub(start))
			for name, d := range evs {
				per[name] = append(per[name], d)
			}
		}
		return per, before, nil
	}
	coldPh, coldBefore, err := phases()
	if errors.Is(err, errNoPhases) {
		// An earlier kpipe, measured for comparison.
		fmt.Fprintf(&b.out, "(This kpipe's --trace has no phases: no split in the process.)\n\n")
		return nil
	}
	if err != nil {
		return err
	}
	againPh, againBefore, err := phases()
	if err != nil {
		return err
	}
	fmt.Fprintf(&b.out, "In the process, from `--trace` (%d new roots, then the same again; medians; the trace's own writing, after the last phase, is left out; a traced build listens for stop signals from the start, which an untraced one does not):\n\n", n)
	fmt.Fprintf(&b.out, "| phase | a new root | the same root again |\n|---|---|---|\n")
	fmt.Fprintf(&b.out, "| before the command (process start, runtime, package initialisation, CLI) | %s | %s |\n", ms(median(coldBefore)), ms(median(againBefore)))
	for _, name := range phaseNames {
		c, a := "-", "-"
		if d := coldPh[name]; len(d) > 0 {
			c = us(median(d))
		}
		if d := againPh[name]; len(d) > 0 {
			a = us(median(d))
		}
		fmt.Fprintf(&b.out, "| %s | %s | %s |\n", name, c, a)
	}
	fmt.Fprintln(&b.out)
	return nil
}

// errNoPhases is readPhases's error for a trace without a start time: a
// kpipe from before --trace had phases.
var errNoPhases = errors.New("the trace has no start time (a kpipe whose --trace has no phases)")

// readPhases reads a --trace file: its time 0 and the duration of each
// phase.
func readPhases(path string) (time.Time, map[string]time.Duration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, nil, err
	}
	var tf struct {
		TraceEvents []struct {
			Name string  `json:"name"`
			Cat  string  `json:"cat"`
			Dur  float64 `json:"dur"`
		} `json:"traceEvents"`
		OtherData struct {
			Start string `json:"start"`
		} `json:"otherData"`
	}
	if err := json.Unmarshal(data, &tf); err != nil {
		return time.Time{}, nil, err
	}
	if tf.OtherData.Start == "" {
		return time.Time{}, nil, errNoPhases
	}
	t0, err := time.Parse(time.RFC3339Nano, tf.OtherData.Start)
	if err != nil {
		return time.Time{}, nil, err
	}
	out := map[string]time.Duration{}
	for _, e := range tf.TraceEvents {
		if e.Cat == "phase" {
			out[e.Name] += time.Duration(e.Dur * 1e3)
		}
	}
	return t0, out, nil
}

// real: the per-root loop over real trees.
func (b *bench) real(trees []string) error {
	fmt.Fprintf(&b.out, "**Real trees**, every kustomization directory one process each, kustomize and kpipe taking turns root by root; kpipe's default cache empty at the start of each tree; timed over the roots both build, outputs compared:\n\n")
	fmt.Fprintf(&b.out, "| tree | roots (built by both) | kustomize, sum of wall (CPU) | kpipe, empty cache | ratio | kustomize again | kpipe again | ratio | median root: kustomize, kpipe cold, kpipe again |\n|---|---|---|---|---|---|---|---|---|\n")
	var kzCold, kpCold, kzAgain, kpAgain time.Duration
	for _, tree := range trees {
		tree, err := filepath.Abs(tree)
		if err != nil {
			return err
		}
		roots, err := kustomizations(tree)
		if err != nil {
			return err
		}
		env := b.cacheEnv("xdg-real")
		var kz0, kp0, kz1, kp1 []procstat.Stats
		built := map[string]bool{}
		for pass := range 2 {
			for i, r := range roots {
				if pass == 1 && !built[r] {
					continue
				}
				kz, kp, ok, err := b.pair(tree, r, env, (i+pass)%2 == 0)
				if err != nil {
					// A difference from kustomize: said, counted, and
					// left out of the times.
					b.mismatch = append(b.mismatch, err.Error())
					continue
				}
				if !ok {
					continue
				}
				built[r] = true
				if pass == 0 {
					kz0, kp0 = append(kz0, kz), append(kp0, kp)
				} else {
					kz1, kp1 = append(kz1, kz), append(kp1, kp)
				}
			}
		}
		s := func(x []procstat.Stats) time.Duration { return sum(wall(x)) }
		c := func(x []procstat.Stats) string { return round(sum(cpu(x))).String() }
		kzCold, kpCold, kzAgain, kpAgain = kzCold+s(kz0), kpCold+s(kp0), kzAgain+s(kz1), kpAgain+s(kp1)
		fmt.Fprintf(&b.out, "| %s | %d (%d) | %s (%s) | %s (%s) | %.2fx | %s (%s) | %s (%s) | %.2fx | %s, %s, %s |\n", filepath.Base(tree), len(roots), len(kz0),
			round(s(kz0)), c(kz0), round(s(kp0)), c(kp0), s(kz0).Seconds()/s(kp0).Seconds(), round(s(kz1)), c(kz1), round(s(kp1)), c(kp1), s(kz1).Seconds()/s(kp1).Seconds(),
			ms(median(wall(kz0))), ms(median(wall(kp0))), ms(median(wall(kp1))))
	}
	if len(trees) > 1 {
		fmt.Fprintf(&b.out, "| all | | %s | %s | %.2fx | %s | %s | %.2fx | |\n", round(kzCold), round(kpCold), kzCold.Seconds()/kpCold.Seconds(),
			round(kzAgain), round(kpAgain), kzAgain.Seconds()/kpAgain.Seconds())
	}
	fmt.Fprintln(&b.out)
	rc, ra := kzCold.Seconds()/kpCold.Seconds(), kzAgain.Seconds()/kpAgain.Seconds()
	b.bar(rc >= 5, "real trees, one process per root, empty cache: %.2fx faster than kustomize (at least 5x)", rc)
	b.bar(ra >= 20, "real trees, the same again: %.2fx (at least 20x)", ra)
	return nil
}

// kustomizations lists the directories under tree that hold a
// kustomization file, skipping hidden directories.
func kustomizations(tree string) ([]string, error) {
	var roots []string
	err := filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != tree {
			return filepath.SkipDir
		}
		switch d.Name() {
		case "kustomization.yaml", "kustomization.yml", "Kustomization":
			roots = append(roots, filepath.Dir(p))
		}
		return nil
	})
	sort.Strings(roots)
	return roots, err
}

// row writes a table row of medians for kustomize and kpipe runs.
func (b *bench) row(name string, kz, kp []procstat.Stats) {
	kw, pw := wall(kz), wall(kp)
	fmt.Fprintf(&b.out, "| %s | %s (%s) | %s (%s) | %.2fx | %s | %s |\n", name, ms(median(kw)), iqr(kw), ms(median(pw)), iqr(pw),
		median(kw).Seconds()/median(pw).Seconds(), ms(median(cpu(kz))), ms(median(cpu(kp))))
}

// bar records one of the bars, met or not.
func (b *bench) bar(met bool, format string, args ...any) {
	verdict := "**met**"
	if !met {
		verdict = "**not met**"
		b.failed++
	}
	b.bars = append(b.bars, verdict+": "+fmt.Sprintf(format, args...))
}

func wall(s []procstat.Stats) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, st := range s {
		out[i] = st.Wall
	}
	return out
}

func cpu(s []procstat.Stats) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, st := range s {
		out[i] = st.CPU
	}
	return out
}

func sum(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}

func sorted(ds []time.Duration) []time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return sorted(ds)[len(ds)/2]
}

// iqr is the interquartile range, "a-b ms".
func iqr(ds []time.Duration) string {
	s := sorted(ds)
	return fmt.Sprintf("%.2f-%.2f", s[len(s)/4].Seconds()*1e3, s[len(s)*3/4].Seconds()*1e3)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", d.Seconds()*1e3) }
func us(d time.Duration) string { return fmt.Sprintf("%.0f us", d.Seconds()*1e6) }

func round(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Microsecond)
}

// describe says how a binary was built: its size, the go command's build
// settings that matter here, and whether it is linked dynamically.
func describe(bin string) string {
	var parts []string
	if st, err := os.Stat(bin); err == nil {
		parts = append(parts, fmt.Sprintf("%.1f MB", float64(st.Size())/1e6))
	}
	if out, err := exec.Command("go", "version", "-m", bin).Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 && f[0] == "build" && (strings.HasPrefix(f[1], "-tags=") || strings.HasPrefix(f[1], "CGO_ENABLED=")) {
				parts = append(parts, f[1])
			}
		}
		if !strings.Contains(string(out), "-tags=") {
			parts = append(parts, "no tags")
		}
	}
	if f, err := elf.Open(bin); err == nil {
		dynamic := false
		for _, p := range f.Progs {
			dynamic = dynamic || p.Type == elf.PT_INTERP
		}
		f.Close()
		if dynamic {
			parts = append(parts, "dynamically linked (libc, for net and os/user's cgo)")
		} else {
			parts = append(parts, "static")
		}
	}
	return bin + " (" + strings.Join(parts, ", ") + ")"
}

// machine names the machine: cores, CPU model, OS and architecture.
func machine() string {
	model := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v) + ", "
				break
			}
		}
	}
	return fmt.Sprintf("%d cores (%s%s/%s, %s)", runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// loadAverage is the 1-minute load average, where the system says.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(data))[0]
}
