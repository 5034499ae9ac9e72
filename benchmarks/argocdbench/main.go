// Command argocdbench measures `kpipe argocd build-all` against Argo CD's
// own manifest generation, one Application at a time, on a generated
// repository shaped like the reference corpus's bench300 (300
// Applications over 45 kustomize roots sharing their bases; one in three
// with Kustomize options), and `kpipe diff --argocd` on a one-file change:
//
//	go build -o /tmp/kpipe ./cmd/kpipe
//	go run ./benchmarks/argocdbench -kpipe /tmp/kpipe [-oracle /work/ref/bin/argocd-oracle]
//
// The Argo CD side is the reference program argocd-oracle (Argo CD
// v3.6.1's GenerateManifests, the function `argocd app manifests --local`
// calls; -oracle, else $KPIPE_ARGOCD_ORACLE, else /work/ref/bin/argocd-oracle),
// run once per Application on the generated repository: its generation
// time (what GenerateManifests took, without the process start or the
// checkout copy) is the baseline, and its manifests are compared with
// kpipe's, object by object. Without the oracle, the baseline is the time
// Argo CD's generation took for the corpus's bench300, as recorded there
// (-recorded, default 28.8 s: a different repository of the same shape),
// and the run says so.
//
// The repository is written by internal/genrepo (nothing is copied from
// a fetched repository); -keep DIR keeps it there.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/argocd/manifest"
	"github.com/kpipe/kpipe/internal/genrepo"
)

const repoURL = "https://example.com/kpipe/argocd-bench.git"

func main() {
	kpipe := flag.String("kpipe", "", "the kpipe binary (required)")
	oracle := flag.String("oracle", "", "the argocd-oracle binary (default: $KPIPE_ARGOCD_ORACLE, else /work/ref/bin/argocd-oracle when present)")
	recorded := flag.Duration("recorded", 28817*time.Millisecond, "Argo CD's recorded generation time for bench300, used without the oracle")
	apps := flag.Int("apps", 300, "Applications")
	runs := flag.Int("runs", 5, "kpipe runs per scenario (medians)")
	keep := flag.String("keep", "", "write the repository here and keep it")
	results := flag.String("results", "", "append the results to this markdown file")
	genOnly := flag.String("gen-only", "", "only write the repository in this directory")
	corpus := flag.String("corpus", os.Getenv("KPIPE_ARGOCD_CORPUS"), "the Argo CD reference corpus, for its bench300 scenario (default $KPIPE_ARGOCD_CORPUS, else /work/ref/argocd-corpus when present)")
	flag.Parse()
	if *corpus == "" {
		if _, err := os.Stat("/work/ref/argocd-corpus/bench300"); err == nil {
			*corpus = "/work/ref/argocd-corpus"
		}
	}
	if *genOnly != "" {
		b := &bench{apps: *apps, repo: *genOnly}
		if err := b.generate(); err != nil {
			fmt.Fprintln(os.Stderr, "argocdbench:", err)
			os.Exit(1)
		}
		return
	}
	if *kpipe == "" {
		fmt.Fprintln(os.Stderr, "argocdbench: -kpipe is required")
		os.Exit(2)
	}
	if *oracle == "" {
		*oracle = os.Getenv("KPIPE_ARGOCD_ORACLE")
	}
	if *oracle == "" {
		if _, err := os.Stat("/work/ref/bin/argocd-oracle"); err == nil {
			*oracle = "/work/ref/bin/argocd-oracle"
		}
	}
	b := &bench{kpipe: *kpipe, oracle: *oracle, recorded: *recorded, apps: *apps, runs: *runs, corpus: *corpus}
	if err := b.run(*keep, *results); err != nil {
		fmt.Fprintln(os.Stderr, "argocdbench:", err)
		os.Exit(1)
	}
}

type bench struct {
	kpipe, oracle string
	recorded      time.Duration
	apps, runs    int
	corpus        string
	work, repo    string
	files         []string
	out           strings.Builder
}

func (b *bench) say(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	fmt.Println(s)
	b.out.WriteString(s + "\n")
}

// generate writes the repository: genrepo's monorepo (15 apps x 3
// environments over per-app bases and a common base and component, 4
// extra ConfigMaps an app) and the Applications, committed.
func (b *bench) generate() error {
	roots, err := genrepo.Write(b.repo, genrepo.Spec{Apps: 15, Envs: 3, ResourcesPerApp: 4})
	if err != nil {
		return err
	}
	if b.files, err = genrepo.WriteApplications(b.repo, roots, b.apps, repoURL); err != nil {
		return err
	}
	if err := genrepo.InitGit(b.repo); err != nil {
		return err
	}
	_, err = genrepo.Git(b.repo, "remote", "add", "origin", repoURL)
	return err
}

func (b *bench) run(keep, results string) error {
	var err error
	if b.work, err = os.MkdirTemp("", "argocdbench-"); err != nil {
		return err
	}
	defer os.RemoveAll(b.work)
	b.repo = filepath.Join(b.work, "repo")
	if keep != "" {
		b.repo = keep
		if err := os.MkdirAll(keep, 0o755); err != nil {
			return err
		}
	}
	if err := b.generate(); err != nil {
		return err
	}
	b.say("## Argo CD Applications: `kpipe argocd build-all` vs Argo CD's generation, one Application at a time (issue 53), %s", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	b.say("")
	b.say("`go run ./benchmarks/argocdbench -kpipe <kpipe> -runs %d`: a generated repository (internal/genrepo: 15 apps x 3 environments = 45 kustomize roots over per-app bases, a common base and a component; %d Applications cycling over the roots, one in three with Kustomize options namePrefix and commonLabels, destination namespaces cycling over 17: the shape of the reference corpus's bench300). kpipe is the plain `go build ./cmd/kpipe` binary.", b.runs, b.apps)
	b.say("")

	// Argo CD, one Application at a time.
	var argo time.Duration
	var oracleOut map[string][]any
	source := ""
	if b.oracle != "" {
		if argo, oracleOut, err = b.oracleRun(); err != nil {
			return err
		}
		source = fmt.Sprintf("argocd-oracle (%s), run on this repository: the sum of GenerateManifests' times", b.oracle)
	} else {
		argo = b.recorded
		source = "the time recorded for the corpus's bench300 (no oracle here: a different repository of the same shape)"
	}

	cold := func(extra ...string) (time.Duration, error) {
		var ds []time.Duration
		for i := 0; i < b.runs; i++ {
			cacheDir := filepath.Join(b.work, fmt.Sprintf("cache-cold-%d", i))
			out := filepath.Join(b.work, "out")
			os.RemoveAll(out)
			args := append([]string{"argocd", "build-all", "argocd", "--cache-dir", cacheDir, "--out-dir", out}, extra...)
			d, err := b.time(args...)
			os.RemoveAll(cacheDir)
			if err != nil {
				return 0, err
			}
			ds = append(ds, d)
		}
		return median(ds), nil
	}
	coldCache, err := cold()
	if err != nil {
		return err
	}
	coldNoCache, err := cold("--no-cache")
	if err != nil {
		return err
	}
	// The outputs, object by object, against the oracle's.
	equal, compared := 0, 0
	if oracleOut != nil {
		for name, want := range oracleOut {
			data, err := os.ReadFile(filepath.Join(b.work, "out", name+".yaml"))
			if err != nil {
				continue
			}
			compared++
			got, err := b.jsonOf(data)
			if err == nil && reflect.DeepEqual(got, want) {
				equal++
			}
		}
	}
	// Warm: a cache from a build-all, nothing changed.
	cacheDir := filepath.Join(b.work, "cache")
	out := filepath.Join(b.work, "out-warm")
	if _, err := b.time("argocd", "build-all", "argocd", "--cache-dir", cacheDir, "--out-dir", out); err != nil {
		return err
	}
	time.Sleep(2100 * time.Millisecond) // past the stat index's racy window
	var warm []time.Duration
	for i := 0; i < b.runs; i++ {
		d, err := b.time("argocd", "build-all", "argocd", "--cache-dir", cacheDir, "--out-dir", out)
		if err != nil {
			return err
		}
		warm = append(warm, d)
	}
	// A one-file change, diffed: one app's base deployment (its 3
	// environments' roots, 21 Applications).
	f := filepath.Join(b.repo, "apps/app003/base/deployment.yaml")
	data, err := os.ReadFile(f)
	if err != nil {
		return err
	}
	// (The environments patch the memory request: the port is theirs.)
	if err := os.WriteFile(f, bytes.Replace(data, []byte("containerPort: 8080"), []byte("containerPort: 8081"), 1), 0o644); err != nil {
		return err
	}
	time.Sleep(2100 * time.Millisecond)
	var diffWarm, diffCold []time.Duration
	var diffOut []byte
	for i := 0; i < b.runs; i++ {
		t0 := time.Now()
		o, err := b.kpipeOut("diff", "--argocd", "--base", "HEAD", "--format", "json", "--cache-dir", cacheDir)
		diffWarm = append(diffWarm, time.Since(t0))
		if err != nil {
			return err
		}
		diffOut = o
		coldDir := filepath.Join(b.work, fmt.Sprintf("cache-diff-%d", i))
		t0 = time.Now()
		if _, err := b.kpipeOut("diff", "--argocd", "--base", "HEAD", "--format", "json", "--cache-dir", coldDir); err != nil {
			return err
		}
		diffCold = append(diffCold, time.Since(t0))
		os.RemoveAll(coldDir)
	}
	var dr struct {
		Compared int `json:"compared"`
		Roots    []struct {
			Path      string `json:"path"`
			Status    string `json:"status"`
			Resources []any  `json:"resources"`
		} `json:"roots"`
		ObjectsRead int `json:"objectsRead"`
	}
	if err := json.Unmarshal(diffOut, &dr); err != nil {
		return fmt.Errorf("diff --argocd's JSON: %v", err)
	}
	want := 0
	for i := 0; i < b.apps; i++ {
		if strings.HasPrefix(rootOf(i), "apps/app003/") {
			want++
		}
	}

	corpusNote := ""
	b.say("| scenario | Argo CD | kpipe | ratio | bar |")
	b.say("|---|---|---|---|---|")
	b.say("| cold build-all, %d Applications (empty cache) | %s | %s | %.0fx | >= 50x |", b.apps, secs(argo), secs(coldCache), float64(argo)/float64(coldCache))
	b.say("| cold build-all, --no-cache | %s | %s | %.0fx | |", secs(argo), secs(coldNoCache), float64(argo)/float64(coldNoCache))
	b.say("| warm build-all, nothing changed | %s | %s | %.0fx | |", secs(argo), secs(median(warm)), float64(argo)/float64(median(warm)))
	b.say("| `diff --argocd`, one base file changed (cache of a build-all) | | %s | | < 1 s |", secs(median(diffWarm)))
	b.say("| `diff --argocd`, one base file changed, empty cache | | %s | | |", secs(median(diffCold)))
	if b.corpus != "" {
		lines, err := bench300(b.corpus, b.runs)
		if err != nil {
			return err
		}
		b.say("%s", lines[0])
		corpusNote = lines[2]
	}
	b.say("")
	b.say("Argo CD's side: %s.", source)
	if oracleOut != nil {
		b.say("Outputs: kpipe's %d Applications against the oracle's GenerateManifests, objects parsed and in order: %d of %d equal.", len(oracleOut), equal, compared)
	}
	b.say("The diff reported %d Applications changed (%d expected: those over apps/app003), %d compared; %d git objects read.", len(dr.Roots), want, dr.Compared, dr.ObjectsRead)
	if corpusNote != "" {
		b.say("")
		b.say("%s", corpusNote)
	}
	b.say("")
	if results != "" {
		fh, err := os.OpenFile(results, os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer fh.Close()
		if _, err := fh.WriteString("\n" + b.out.String()); err != nil {
			return err
		}
	}
	return nil
}

// rootOf is the root of Application i (as WriteApplications cycles them).
func rootOf(i int) string {
	app, env := (i%45)/3, []string{"dev", "staging", "prod"}[(i%45)%3]
	return fmt.Sprintf("apps/app%03d/%s", app, env)
}

// oracleRun runs the oracle once per Application and returns the sum of
// its generation times and its manifests, by Application name.
func (b *bench) oracleRun() (time.Duration, map[string][]any, error) {
	var total time.Duration
	outs := map[string][]any{}
	for _, f := range b.files {
		cmd := exec.Command(b.oracle, "app", "-app", filepath.Join(b.repo, f), "-repo-root", b.repo, "-repo", repoURL+"="+b.repo)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return 0, nil, fmt.Errorf("oracle %s: %v: %s", f, err, stderr.String())
		}
		var r struct {
			App     string `json:"app"`
			Sources []struct {
				Millis float64 `json:"millis"`
			} `json:"sources"`
			Manifests []any `json:"manifests"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			return 0, nil, fmt.Errorf("oracle %s: %v", f, err)
		}
		for _, s := range r.Sources {
			total += time.Duration(s.Millis * float64(time.Millisecond))
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "app-"), ".yaml")
		outs["bench-"+name] = r.Manifests
	}
	return total, outs, nil
}

// jsonOf reads a YAML stream as JSON objects (YAML 1.1 scalars, as Argo
// CD reads them).
func (b *bench) jsonOf(data []byte) ([]any, error) {
	docs, err := manifest.SplitDocuments(data)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, d := range docs {
		j, err := manifest.YAMLToJSON(d)
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(j, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (b *bench) kpipeOut(args ...string) ([]byte, error) {
	cmd := exec.Command(b.kpipe, args...)
	cmd.Dir = b.repo
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && args[0] == "diff" {
		err = nil // differences
	}
	if err != nil {
		return nil, fmt.Errorf("kpipe %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

func (b *bench) time(args ...string) (time.Duration, error) {
	t0 := time.Now()
	_, err := b.kpipeOut(args...)
	return time.Since(t0), err
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func secs(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
