// Command scaling measures how kpipe's time and memory grow with the size
// of one root, side by side with kustomize in one run (issue 49), and
// checks that kpipe's output is byte-identical to kustomize's at every
// size:
//
//	go run ./benchmarks/scaling -sizes 1000,2000,4000,8000 -results benchmarks/RESULTS.md
//
// Each size is the root genrepo.WriteBigRoot writes: that many resources
// referring to each other by name (ConfigMaps, Secrets, ServiceAccounts,
// PersistentVolumeClaims, Roles) under an overlay with a name prefix, a
// namespace, labels, images, generators, patches by target and
// replacements: the shape of kustomize's best-known performance complaint
// (kubernetes-sigs/kustomize#5084). kpipe, built with a plain `go build
// ./cmd/kpipe` unless -kpipe names a binary, runs `build --no-cache`
// -runs times a size, the sizes taking turns (and -baseline, another kpipe
// binary, after it when given); kustomize runs once a size, up to
// -kustomize-max resources (it is quadratic: minutes at 4,000, more at
// 8,000). Times are medians, with the fastest run beside; CPU is user and
// system time; peak RSS is the process's maximum resident set.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/genrepo"
	"github.com/kpipe/kpipe/internal/procstat"
)

func main() {
	var o options
	sizes := flag.String("sizes", "1000,2000,4000,8000", "root sizes, in resources")
	flag.IntVar(&o.runs, "runs", 5, "kpipe runs a size (the median is reported)")
	flag.StringVar(&o.kpipe, "kpipe", "", "the kpipe binary (default: built with `go build ./cmd/kpipe` into the work directory)")
	flag.StringVar(&o.baseline, "baseline", "", "another kpipe binary, run alternately with -kpipe (for example main's)")
	flag.StringVar(&o.kustomize, "kustomize", "", "the kustomize binary (default: $HOME/.cache/kpipe-ci/kustomize-v5.8.2/kustomize, else kustomize on PATH)")
	flag.IntVar(&o.kustomizeMax, "kustomize-max", 8000, "the largest size kustomize is run at")
	flag.StringVar(&o.work, "work", "", "work directory (default: a new temporary directory, removed at the end)")
	flag.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile of one more kpipe run at the largest size to this file")
	flag.StringVar(&o.results, "results", "", "append the results as Markdown to this file")
	flag.StringVar(&o.gogc, "gogc", "", "GOGC for the kpipe runs (default: kpipe's own heap settings)")
	flag.Parse()
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintf(os.Stderr, "scaling: -sizes: %v\n", err)
			os.Exit(2)
		}
		o.sizes = append(o.sizes, n)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "scaling:", err)
		os.Exit(1)
	}
}

type options struct {
	sizes                        []int
	runs                         int
	kpipe, baseline, kustomize   string
	kustomizeMax                 int
	work, profile, results, gogc string
}

// row is one size's measurements.
type row struct {
	size      int
	kpipe     []procstat.Stats
	baseline  []procstat.Stats
	kustomize *procstat.Stats // nil when not run
	same      bool            // kpipe's output is kustomize's
	baseSame  bool            // the baseline's output is kpipe's
}

func run(o options) error {
	if o.work == "" {
		d, err := os.MkdirTemp("", "kpipe-scaling-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		o.work = d
	}
	var err error
	if o.kpipe == "" {
		o.kpipe = filepath.Join(o.work, "kpipe")
		if out, err := exec.Command("go", "build", "-o", filepath.Dir(o.kpipe)+string(filepath.Separator), "./cmd/kpipe", "./cmd/kpipe-full").CombinedOutput(); err != nil { // kpipe-full beside kpipe, which hands runs over to it
			return fmt.Errorf("building kpipe: %v\n%s", err, out)
		}
	} else if o.kpipe, err = filepath.Abs(o.kpipe); err != nil {
		return err
	}
	if o.baseline != "" {
		if o.baseline, err = filepath.Abs(o.baseline); err != nil {
			return err
		}
	}
	if o.kustomize == "" {
		o.kustomize = procstat.Kustomize()
	}
	// --no-cache builds read and write no cache; a private one all the
	// same, so that nothing of the user's is touched.
	env := append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(o.work, "xdg"))

	if o.gogc != "" {
		env = append(env, "GOGC="+o.gogc)
	}

	rows := make([]row, len(o.sizes))
	roots := make([]string, len(o.sizes))
	for k, n := range o.sizes {
		dir := filepath.Join(o.work, fmt.Sprintf("root%d", n))
		if err := genrepo.WriteBigRoot(dir, n); err != nil {
			return err
		}
		rows[k] = row{size: n, baseSame: true}
		roots[k] = filepath.Join(dir, genrepo.BigRoot)
	}
	// Runs take turns, size after size (and kpipe after the baseline),
	// so that the machine's load, which drifts, weighs alike on all.
	outs := make([][]byte, len(o.sizes))
	for i := 0; i < o.runs; i++ {
		for k, root := range roots {
			r := &rows[k]
			out, u, err := procstat.Run(root, env, o.kpipe, "build", "--no-cache", ".")
			if err != nil {
				return err
			}
			r.kpipe = append(r.kpipe, u)
			if outs[k] == nil {
				outs[k] = out
			} else if !bytes.Equal(outs[k], out) {
				return fmt.Errorf("%d resources: kpipe's output differs from one run to the next", r.size)
			}
			if o.baseline != "" {
				base, u, err := procstat.Run(root, env, o.baseline, "build", "--no-cache", ".")
				if err != nil {
					return fmt.Errorf("baseline: %w", err)
				}
				r.baseline = append(r.baseline, u)
				r.baseSame = r.baseSame && bytes.Equal(base, outs[k])
			}
		}
	}
	for k, root := range roots {
		r := &rows[k]
		fmt.Printf("%d resources: kpipe %v (CPU %v, peak RSS %s)", r.size, median(r.kpipe).Wall, median(r.kpipe).CPU, mib(maxRSS(r.kpipe)))
		if o.baseline != "" {
			fmt.Printf(", baseline %v (same output: %t)", median(r.baseline).Wall, r.baseSame)
		}
		fmt.Println()
		if o.kustomize == "" || r.size > o.kustomizeMax {
			continue
		}
		kz, u, err := procstat.Run(root, env, o.kustomize, "build", ".")
		if err != nil {
			return err
		}
		r.kustomize, r.same = &u, bytes.Equal(kz, outs[k])
		fmt.Printf("%d resources: kustomize %v (peak RSS %s), %.0fx kpipe's time, output identical: %t\n",
			r.size, u.Wall, mib(u.MaxRSS), u.Wall.Seconds()/median(r.kpipe).Wall.Seconds(), r.same)
		if !r.same {
			_ = os.WriteFile(filepath.Join(o.work, fmt.Sprintf("kustomize-%d.yaml", r.size)), kz, 0o644)
			_ = os.WriteFile(filepath.Join(o.work, fmt.Sprintf("kpipe-%d.yaml", r.size)), outs[k], 0o644)
		}
	}
	if o.profile != "" && len(o.sizes) > 0 {
		n := slices.Max(o.sizes)
		prof, err := filepath.Abs(o.profile)
		if err != nil {
			return err
		}
		root := filepath.Join(o.work, fmt.Sprintf("root%d", n), genrepo.BigRoot)
		if _, _, err := procstat.Run(root, env, o.kpipe, "build", "--no-cache", "--cpuprofile", prof, "."); err != nil {
			return err
		}
	}
	md := report(o, rows)
	fmt.Print("\n" + md)
	if o.results != "" {
		f, err := os.OpenFile(o.results, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, err = f.WriteString("\n" + md)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	for _, r := range rows {
		if (r.kustomize != nil && !r.same) || !r.baseSame {
			return errors.New("outputs differ (see above)")
		}
	}
	return nil
}

// report formats the rows as Markdown: one line a size, then how time
// grows from size to size.
func report(o options, rows []row) string {
	b := &strings.Builder{}
	fmt.Fprintf(b, "## One root of %s resources (issue 49)\n\n", joinInts(o.sizes))
	flags := ""
	if o.gogc != "" {
		flags = " -gogc " + o.gogc
	}
	fmt.Fprintf(b, "- date: %s; %s, %d CPUs, %s/%s\n- kustomize: %s\n- command: `go run ./benchmarks/scaling -sizes %s -runs %d%s`\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), procstat.CPUModel(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH,
		procstat.KustomizeVersion(o.kustomize), joinInts(o.sizes), o.runs, flags)
	fmt.Fprintf(b, "`kpipe build --no-cache` of genrepo.WriteBigRoot's root, %d runs a size (median, fastest in brackets); kustomize once a size. ", o.runs)
	b.WriteString("Time is wall time, CPU user and system time, RSS the process's peak.")
	if o.baseline != "" {
		same := true
		for _, r := range rows {
			same = same && r.baseSame
		}
		fmt.Fprintf(b, " The baseline is another kpipe binary, run after kpipe each time; its output is the same bytes at every size: %s.", yesNo(same))
	}
	b.WriteString("\n\n")
	head := "| resources | kpipe | kpipe CPU | kpipe peak RSS |"
	sep := "|---|---|---|---|"
	if o.baseline != "" {
		head += " baseline | baseline peak RSS |"
		sep += "---|---|"
	}
	head += " kustomize | kustomize peak RSS | kustomize / kpipe | same bytes |"
	sep += "---|---|---|---|"
	b.WriteString(head + "\n" + sep + "\n")
	for _, r := range rows {
		m := median(r.kpipe)
		fmt.Fprintf(b, "| %d | %s (%s) | %s | %s |", r.size, secs(m.Wall), secs(fastest(r.kpipe)), secs(m.CPU), mib(maxRSS(r.kpipe)))
		if o.baseline != "" {
			fmt.Fprintf(b, " %s (%s) | %s |", secs(median(r.baseline).Wall), secs(fastest(r.baseline)), mib(maxRSS(r.baseline)))
		}
		if r.kustomize == nil {
			b.WriteString(" not run | | | |\n")
			continue
		}
		fmt.Fprintf(b, " %s | %s | %.0fx | %s |\n", secs(r.kustomize.Wall), mib(r.kustomize.MaxRSS),
			r.kustomize.Wall.Seconds()/m.Wall.Seconds(), yesNo(r.same))
	}
	b.WriteString("\nGrowth of kpipe's median time:")
	for i := 1; i < len(rows); i++ {
		fmt.Fprintf(b, " %d -> %d: %.2fx;", rows[i-1].size, rows[i].size, ratio(rows[i], rows[i-1]))
	}
	for i := range rows {
		for j := range rows {
			if rows[j].size == 4*rows[i].size && j != i+1 {
				fmt.Fprintf(b, " %d -> %d: %.2fx;", rows[i].size, rows[j].size, ratio(rows[j], rows[i]))
			}
		}
	}
	b.WriteString("\n")
	return b.String()
}

func ratio(a, b row) float64 { return median(a.kpipe).Wall.Seconds() / median(b.kpipe).Wall.Seconds() }

// median returns the run of median wall time (of the two middle ones, the
// faster).
func median(us []procstat.Stats) procstat.Stats {
	if len(us) == 0 {
		return procstat.Stats{}
	}
	s := slices.Clone(us)
	slices.SortFunc(s, func(a, b procstat.Stats) int { return int(a.Wall - b.Wall) })
	return s[(len(s)-1)/2]
}

func fastest(us []procstat.Stats) time.Duration {
	best := us[0].Wall
	for _, u := range us {
		best = min(best, u.Wall)
	}
	return best
}

func maxRSS(us []procstat.Stats) int64 {
	var m int64
	for _, u := range us {
		m = max(m, u.MaxRSS)
	}
	return m
}

func secs(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.3f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
