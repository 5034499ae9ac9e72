package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/genrepo"
	"github.com/kpipe/kpipe/internal/treecopy"
)

// treeBench is the -tree scenario: a real repository in git, one file
// changed and committed, `kpipe diff --all-kustomizations --base HEAD~1
// --head HEAD` with a warm cache against kustomize rendering every
// kustomization at both revisions (the review script: a git worktree of
// the old revision, kustomize build of each kustomization there and at
// HEAD, diff -r), and the same change in a copy of the repository padded
// with unrelated files. Each round runs the script once, then kpipe on
// the plain and the padded repository in turn (and the baseline binary,
// when given), so that every ratio is taken side by side.
type treeBench struct {
	kpipe, baseline, kustomize string
	tree, edit                 string
	pad, rounds, runs          int
	baselineRuns               int
	flags                      []string
}

// sample is one timed run: wall time and CPU (user and system).
type sample struct{ wall, cpu time.Duration }

func realTree(b treeBench) error {
	if b.kpipe == "" || b.edit == "" {
		return fmt.Errorf("-tree needs -kpipe and -edit")
	}
	file, rest, ok := strings.Cut(b.edit, ":")
	old, nw, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return fmt.Errorf("-edit %q: want FILE:OLD:NEW", b.edit)
	}
	work, err := os.MkdirTemp("", "kpipe-diffbench-tree-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	plain := filepath.Join(work, "plain")
	padded := filepath.Join(work, "padded")
	files := 0
	for _, repo := range []string{plain, padded} {
		n, err := treecopy.Copy(b.tree, repo)
		if err != nil {
			return err
		}
		files = n
		if repo == padded {
			// Unrelated files, 20 to a directory, in a directory of their
			// own (a vendored tree, generated docs).
			for i := 0; i < b.pad; i++ {
				p := filepath.Join(repo, "zz-padding", fmt.Sprintf("d%04d", i/20), fmt.Sprintf("f%05d.txt", i))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(p, []byte(fmt.Sprintf("padding %d\n", i)), 0o644); err != nil {
					return err
				}
			}
		}
		// Every file of the snapshot, those its .gitignore names included
		// (upstream tracks them: git archive gave them), packed as a clone
		// holds them; the change is a commit on top, its objects loose.
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "gc.auto", "0"}, {"add", "-A", "-f"}, {"commit", "-q", "-m", "snapshot"}, {"gc", "-q"}} {
			if _, err := genrepo.Git(repo, args...); err != nil {
				return err
			}
		}
		p := filepath.Join(repo, filepath.FromSlash(file))
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Contains(data, []byte(old)) {
			return fmt.Errorf("-edit: %s has no %q", file, old)
		}
		if err := os.WriteFile(p, bytes.Replace(data, []byte(old), []byte(nw), 1), 0o644); err != nil {
			return err
		}
		if _, err := genrepo.Git(repo, "commit", "-q", "-am", "one file changed"); err != nil {
			return err
		}
	}
	roots, err := b.kustomizations(plain)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d files (padded: %d more), %d kustomizations; %s changed; kpipe %s; kustomize %s\n\n",
		b.tree, files, b.pad, len(roots), file, b.kpipe, b.kustomize)

	type bin struct {
		name, path string
		cache      string
	}
	bins := []bin{{"kpipe", b.kpipe, filepath.Join(work, "cache")}}
	if b.baseline != "" {
		bins = append(bins, bin{"baseline", b.baseline, filepath.Join(work, "cache-baseline")})
	}
	times := map[string][]sample{}
	var want []string
	var script []time.Duration
	// The cache is warm from earlier runs: two of each first (the first
	// with an empty cache, reported too).
	cold := map[string]sample{}
	for _, bn := range bins {
		for _, repo := range []string{plain, padded} {
			for i := range 2 {
				_, s, err := b.diff(bn.path, repo, bn.cache)
				if err != nil {
					return err
				}
				if i == 0 {
					cold[bn.name+" "+filepath.Base(repo)] = s
				}
			}
		}
	}
	for round := 0; round < b.rounds; round++ {
		t0 := time.Now()
		changed, err := b.script(plain, roots, work)
		if err != nil {
			return err
		}
		script = append(script, time.Since(t0))
		if want == nil {
			want = changed
		}
		for run := range b.runs {
			for _, bn := range bins {
				if bn.name == "baseline" && run >= b.baselineRuns {
					continue
				}
				for _, repo := range []string{plain, padded} {
					got, s, err := b.diff(bn.path, repo, bn.cache)
					if err != nil {
						return err
					}
					if !slices.Equal(got, want) {
						return fmt.Errorf("%s on %s reports %v; kustomize's outputs differ for %v", bn.name, filepath.Base(repo), got, want)
					}
					times[bn.name+" "+filepath.Base(repo)] = append(times[bn.name+" "+filepath.Base(repo)], s)
				}
			}
		}
	}
	objects := map[string]int{}
	for _, repo := range []string{plain, padded} {
		out, err := b.kpipeOut(b.kpipe, repo, bins[0].cache, "--format", "json")
		if err != nil {
			return err
		}
		var res struct {
			ObjectsRead int `json:"objectsRead"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return err
		}
		objects[filepath.Base(repo)] = res.ObjectsRead
	}
	// The next commit: another change on top (the same line again), and
	// the first review of it, with the cache warm from the reviews above
	// (a pull request's next push).
	next := map[string][]sample{}
	for i := range 3 {
		for _, repo := range []string{plain, padded} {
			p := filepath.Join(repo, filepath.FromSlash(file))
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, bytes.Replace(data, []byte(nw), []byte(fmt.Sprintf("%s-%d", nw, i)), 1), 0o644); err != nil {
				return err
			}
			if _, err := genrepo.Git(repo, "commit", "-q", "-am", "next"); err != nil {
				return err
			}
			for _, bn := range bins {
				_, s, err := b.diff(bn.path, repo, bn.cache)
				if err != nil {
					return err
				}
				next[bn.name+" "+filepath.Base(repo)] = append(next[bn.name+" "+filepath.Base(repo)], s)
			}
		}
	}
	sm := median(script)
	fmt.Printf("roots whose output changed: %v (kpipe's report equals kustomize's diff -r in every run)\n\n", want)
	fmt.Println("| what | runs | median wall | min wall | median CPU | vs kustomize script | git objects read |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	fmt.Printf("| kustomize, %d kustomizations at both revisions + diff -r | %d | %.2f s | %.2f s | | 1x | |\n", len(roots), len(script), sm.Seconds(), slices.Min(script).Seconds())
	for _, bn := range bins {
		for _, repo := range []string{"plain", "padded"} {
			ts := times[bn.name+" "+repo]
			var walls, cpus []time.Duration
			for _, s := range ts {
				walls, cpus = append(walls, s.wall), append(cpus, s.cpu)
			}
			obj := ""
			if bn.name == "kpipe" {
				obj = fmt.Sprint(objects[repo])
			}
			fmt.Printf("| %s diff, %s | %d | %.0f ms | %.0f ms | %.0f ms | %.1fx | %s |\n", bn.name, repo, len(ts),
				ms(median(walls)), ms(slices.Min(walls)), ms(median(cpus)), sm.Seconds()/median(walls).Seconds(), obj)
		}
	}
	fmt.Println("\nThe first review (empty cache), and the first review of each of 3 next commits (cache warm from the reviews before): wall (CPU)")
	fmt.Println("\n| what | plain, empty cache | padded, empty cache | plain, next commits | padded, next commits |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, bn := range bins {
		cell := func(ss []sample) string {
			var parts []string
			for _, s := range ss {
				parts = append(parts, fmt.Sprintf("%.0f (%.0f)", ms(s.wall), ms(s.cpu)))
			}
			return strings.Join(parts, ", ") + " ms"
		}
		fmt.Printf("| %s diff | %s | %s | %s | %s |\n", bn.name, cell([]sample{cold[bn.name+" plain"]}), cell([]sample{cold[bn.name+" padded"]}),
			cell(next[bn.name+" plain"]), cell(next[bn.name+" padded"]))
	}
	for _, bn := range bins {
		var p, q []time.Duration
		for _, s := range times[bn.name+" plain"] {
			p = append(p, s.wall)
		}
		for _, s := range times[bn.name+" padded"] {
			q = append(q, s.wall)
		}
		fmt.Printf("\n%s: padded / plain, medians: %.2fx\n", bn.name, median(q).Seconds()/median(p).Seconds())
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// kustomizations lists what kpipe diff --all-kustomizations compares:
// every kustomization build-all --all-kustomizations finds (components
// left out), relative to repo.
func (b treeBench) kustomizations(repo string) ([]string, error) {
	report := filepath.Join(filepath.Dir(repo), "roots.json")
	cmd := exec.Command(b.kpipe, append([]string{"build-all", "--all-kustomizations", "--no-cache", "--progress=false", "--report", report}, b.flags...)...)
	cmd.Dir = repo
	_ = cmd.Run() // (failing roots are roots too)
	data, err := os.ReadFile(report)
	if err != nil {
		return nil, err
	}
	var rep struct {
		Roots []struct{ Path string } `json:"roots"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, err
	}
	var roots []string
	for _, r := range rep.Roots {
		rel, _ := filepath.Rel(repo, r.Path)
		roots = append(roots, rel)
	}
	sort.Strings(roots)
	return roots, nil
}

// script is the review script: every kustomization rendered by kustomize
// at HEAD~1 (a git worktree) and at HEAD, then diff -r; it returns the
// roots whose output differs (a root that fails on one side only counts).
func (b treeBench) script(repo string, roots []string, work string) ([]string, error) {
	base := filepath.Join(work, "base-tree")
	os.RemoveAll(base)
	if _, err := genrepo.Git(repo, "worktree", "add", "-q", "--detach", base, "HEAD~1"); err != nil {
		return nil, err
	}
	defer genrepo.Git(repo, "worktree", "remove", "--force", base)
	outs := map[string]string{"base": filepath.Join(work, "out-base"), "head": filepath.Join(work, "out-head")}
	for side, tree := range map[string]string{"base": base, "head": repo} {
		os.RemoveAll(outs[side])
		for _, r := range roots {
			out, err := exec.Command(b.kustomize, append([]string{"build", filepath.Join(tree, r)}, b.flags...)...).Output()
			if err != nil {
				out = []byte("error\n") // a failing root: compared as failing
			}
			p := filepath.Join(outs[side], r+".yaml")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(p, out, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return changedOutputs(outs["base"], outs["head"]), nil
}

// diff runs kpipe diff --all-kustomizations --base HEAD~1 --head HEAD
// --name-only in repo and returns the roots it reports, with the run's
// wall and CPU time.
func (b treeBench) diff(kpipe, repo, cacheDir string) ([]string, sample, error) {
	cmd := exec.Command(kpipe, append([]string{"diff", "--all-kustomizations", "--base", "HEAD~1", "--head", "HEAD", "--name-only", "--cache-dir", cacheDir}, b.flags...)...)
	cmd.Dir = repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	out, err := cmd.Output()
	wall := time.Since(t0)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return nil, sample{}, fmt.Errorf("%s diff: %v: %s", kpipe, err, stderr.String())
		}
	}
	s := sample{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	var roots []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 && (f[0] == "changed" || f[0] == "added" || f[0] == "removed" || f[0] == "error") {
			roots = append(roots, f[1])
		}
	}
	sort.Strings(roots)
	return roots, s, nil
}

// kpipeOut runs the diff with more flags and returns its output.
func (b treeBench) kpipeOut(kpipe, repo, cacheDir string, more ...string) ([]byte, error) {
	cmd := exec.Command(kpipe, append(append([]string{"diff", "--all-kustomizations", "--base", "HEAD~1", "--head", "HEAD", "--cache-dir", cacheDir}, b.flags...), more...)...)
	cmd.Dir = repo
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil
	}
	return out, err
}
