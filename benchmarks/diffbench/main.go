// Command diffbench measures `kpipe diff` against the common script that
// reviews a change by rendering every root with kustomize at both
// revisions and running diff -r, side by side in one run, on a synthetic
// monorepo in a git repository:
//
//	go build -o /tmp/kpipe ./cmd/kpipe
//	go run ./benchmarks/diffbench -kpipe /tmp/kpipe -apps 100 -envs 4
//
// Scenarios: one app's base edited (its overlays change) and the shared
// base edited (every root changes). kpipe diff runs with the base
// revision's output in the cache (a build-all of the base revision ran
// before, as CI on the main branch does) and with an empty cache. The roots
// kpipe reports are checked against the files diff -r reports.
//
// With -tree, a real repository instead (a snapshot of its files, fetched
// for the measurement and never committed; see realTree):
//
//	go run ./benchmarks/diffbench -kpipe /tmp/kpipe -tree ~/src/cluster-api \
//	    -edit core/config/manager/manager.yaml:--leader-elect:--leader-elect=true -pad 20000
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/genrepo"
)

func main() {
	kpipe := flag.String("kpipe", "", "the kpipe binary (required)")
	kustomize := flag.String("kustomize", "kustomize", "the kustomize binary")
	apps := flag.Int("apps", 100, "apps")
	envs := flag.Int("envs", 4, "environments per app")
	tree := flag.String("tree", "", "a real repository's files (the -tree scenario)")
	edit := flag.String("edit", "", "the -tree scenario's change: FILE:OLD:NEW (the first OLD in FILE becomes NEW)")
	pad := flag.Int("pad", 20000, "unrelated files added to the padded copy of -tree")
	rounds := flag.Int("rounds", 3, "rounds of the -tree scenario (each: the script once, kpipe diff -runs times on each repository)")
	runs := flag.Int("runs", 5, "kpipe diff runs a round, on each repository")
	flags := flag.String("flags", "", "extra kpipe and kustomize build flags, space-separated (for example --load-restrictor LoadRestrictionsNone)")
	baseline := flag.String("baseline", "", "another kpipe binary, measured in the same rounds (the -tree scenario)")
	baselineRuns := flag.Int("baseline-runs", 2, "runs of the baseline a round, on each repository")
	flag.Parse()
	var err error
	if *tree != "" {
		err = realTree(treeBench{kpipe: *kpipe, baseline: *baseline, kustomize: *kustomize, tree: *tree, edit: *edit, pad: *pad,
			rounds: *rounds, runs: *runs, baselineRuns: *baselineRuns, flags: strings.Fields(*flags)})
	} else {
		err = run(*kpipe, *kustomize, *apps, *envs)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "diffbench:", err)
		os.Exit(1)
	}
}

// script is the common review script: kustomize build of every root at
// the base revision (a git worktree) and in the working tree, then diff -r.
// It returns the roots whose output differs.
func script(kustomize, repo string, roots []string, work string) ([]string, error) {
	base := filepath.Join(work, "base-tree")
	os.RemoveAll(base)
	if _, err := genrepo.Git(repo, "worktree", "add", "-q", "--detach", base, "HEAD"); err != nil {
		return nil, err
	}
	defer genrepo.Git(repo, "worktree", "remove", "--force", base)
	outs := map[string]string{"base": filepath.Join(work, "out-base"), "head": filepath.Join(work, "out-head")}
	for side, tree := range map[string]string{"base": base, "head": repo} {
		os.RemoveAll(outs[side])
		for _, r := range roots {
			out, err := exec.Command(kustomize, "build", filepath.Join(tree, r)).Output()
			if err != nil {
				return nil, fmt.Errorf("kustomize build %s: %v", r, err)
			}
			p := filepath.Join(outs[side], r+".yaml")
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, out, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return changedOutputs(outs["base"], outs["head"]), nil
}

// kpipeDiff runs kpipe diff --name-only and returns the changed roots.
func kpipeDiff(kpipe, repo, cacheDir string) ([]string, error) {
	cmd := exec.Command(kpipe, "diff", "--name-only", "--base", "HEAD", "--cache-dir", cacheDir)
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return nil, fmt.Errorf("kpipe diff: %v: %s", err, ee.Stderr)
		}
	}
	var roots []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "changed" {
			roots = append(roots, f[1])
		}
	}
	sort.Strings(roots)
	return roots, nil
}

func timed(f func() error) (time.Duration, error) {
	t0 := time.Now()
	err := f()
	return time.Since(t0), err
}

func run(kpipe, kustomize string, apps, envs int) error {
	if kpipe == "" {
		return fmt.Errorf("-kpipe is required")
	}
	work, err := os.MkdirTemp("", "kpipe-diffbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	repo := filepath.Join(work, "repo")
	roots, err := genrepo.Write(repo, genrepo.Spec{Apps: apps, Envs: envs, ResourcesPerApp: 3})
	if err != nil {
		return err
	}
	if err := genrepo.InitGit(repo); err != nil {
		return err
	}
	edits := []struct {
		name, file, old, new string
	}{
		{"one app edited", "apps/app001/base/deployment.yaml", "cpu: ", "cpu: 7"},
		{"shared base edited", "common/network-policy.yaml", "default-deny", "default-deny-all"},
	}
	fmt.Printf("%d roots; kustomize: %s\n\n", len(roots), kustomize)
	fmt.Println("| change | roots changed | kustomize x2 + diff -r | kpipe diff, base in cache | ratio | kpipe diff, empty cache | ratio |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, e := range edits {
		warmCache := filepath.Join(work, "cache-warm")
		os.RemoveAll(warmCache)
		// CI on main rendered the base revision: its output is in the cache.
		cmd := exec.Command(kpipe, "build-all", "--cache-dir", warmCache, "--progress=false")
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build-all: %v\n%s", err, out)
		}
		p := filepath.Join(repo, e.file)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, bytes.Replace(data, []byte(e.old), []byte(e.new), 1), 0o644); err != nil {
			return err
		}
		var want, warm, cold []string
		tScript, err := timed(func() (err error) { want, err = script(kustomize, repo, roots, work); return })
		if err != nil {
			return err
		}
		tWarm, err := timed(func() (err error) { warm, err = kpipeDiff(kpipe, repo, warmCache); return })
		if err != nil {
			return err
		}
		coldCache := filepath.Join(work, "cache-cold")
		os.RemoveAll(coldCache)
		tCold, err := timed(func() (err error) { cold, err = kpipeDiff(kpipe, repo, coldCache); return })
		if err != nil {
			return err
		}
		if strings.Join(warm, " ") != strings.Join(want, " ") || strings.Join(cold, " ") != strings.Join(want, " ") {
			return fmt.Errorf("%s: kpipe diff reports %d/%d roots, diff -r %d", e.name, len(warm), len(cold), len(want))
		}
		fmt.Printf("| %s | %d | %.2f s | %.3f s | %.0fx | %.2f s | %.1fx |\n", e.name, len(want), tScript.Seconds(),
			tWarm.Seconds(), tScript.Seconds()/tWarm.Seconds(), tCold.Seconds(), tScript.Seconds()/tCold.Seconds())
		if _, err := genrepo.Git(repo, "checkout", "-q", "--", "."); err != nil {
			return err
		}
	}
	return nil
}

// changedOutputs returns the roots whose output files differ between the
// directories base and head (as `diff -rq` says), sorted: the script's
// answer, which kpipe diff's must match.
func changedOutputs(base, head string) []string {
	out, _ := exec.Command("diff", "-rq", base, head).Output()
	var changed []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "Files" {
			rel, _ := filepath.Rel(base, f[1])
			changed = append(changed, strings.TrimSuffix(rel, ".yaml"))
		}
	}
	sort.Strings(changed)
	return changed
}
