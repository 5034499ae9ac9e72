package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/procstat"
	"github.com/kpipe/kpipe/internal/treecopy"
)

// diffEdit is the diff scenario's change: in REPO:CLUSTER_DIR:FILE
// (spec), old replaced by new.
type diffEdit struct{ spec, old, new string }

// diffScenario measures `kpipe diff --flux` on a one-file change: a copy
// of a corpus repository (its files, not its history) committed to a new
// git repository, FILE edited in the working tree, and `kpipe diff --flux
// --base HEAD CLUSTER_DIR` timed three ways, alternating: with the cache
// of a `flux build-all` of the base revision (as CI on the main branch
// leaves it), the same diff again (both sides in the cache), and with an
// empty cache. Every run's list of changed Flux Kustomizations is checked
// against the outputs of `kpipe flux build-all --no-cache` at the two
// revisions, compared file by file. The reference is flux rendering every
// Kustomization of the cluster one at a time at both revisions: twice the
// cluster scenario's median for the same cluster (measured here when the
// cluster scenario did not run it). Bars (issue 39's for diff): under
// 150 ms with the base revision in the cache, and at least 30x faster
// than the reference.
func (b *bench) diffScenario(e diffEdit, runs int) error {
	parts := strings.Split(e.spec, ":")
	if len(parts) != 3 || e.old == "" {
		return fmt.Errorf("-diff %q: want REPO:CLUSTER_DIR:FILE, and -diff-old", e.spec)
	}
	repo, dir, file, old, new := parts[0], parts[1], parts[2], e.old, e.new
	src := filepath.Join(filepath.Dir(filepath.Clean(b.corpus)), repo)
	tree := filepath.Join(b.work, "diff-"+repo)
	files, err := treecopy.Copy(src, tree)
	if err != nil {
		return err
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-c", "user.name=fluxbench", "-c", "user.email=fluxbench@example.org", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = tree
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "base"}} {
		if err := git(args...); err != nil {
			return err
		}
	}
	path := filepath.Join(tree, file)
	orig, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	edited := bytes.Replace(orig, []byte(old), []byte(new), 1)
	if bytes.Equal(orig, edited) {
		return fmt.Errorf("-diff: %s has no %q", file, old)
	}

	// What changed: build-all at both revisions, outputs compared.
	// (A Kustomization that fails is no output: build-all's exit status
	// is not an error here.)
	buildAll := func(out, cache string, extra ...string) {
		runStatus(tree, b.env(cache), b.kpipe, append([]string{"flux", "build-all", dir, "--out-dir", out, "-q"}, extra...)...)
	}
	outOld, outNew := filepath.Join(b.work, "diff-out-old"), filepath.Join(b.work, "diff-out-new")
	buildAll(outOld, "", "--no-cache")
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		return err
	}
	buildAll(outNew, "", "--no-cache")
	want, err := differingOutputs(outOld, outNew)
	if err != nil {
		return err
	}
	if len(want) == 0 {
		return fmt.Errorf("-diff: the edit of %s changes no Kustomization's output", file)
	}

	diffArgs := []string{"diff", "--flux", "--base", "HEAD", "--format", "json", dir}
	var named []string
	check := func(out []byte) error {
		var res struct {
			Roots []struct {
				Path   string `json:"path"`
				Status string `json:"status"`
			} `json:"roots"`
			ObjectsRead int `json:"objectsRead"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return fmt.Errorf("diff --flux output: %v\n%s", err, out)
		}
		var got []string
		for _, r := range res.Roots {
			if r.Status != "failing" {
				got = append(got, r.Path)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("diff --flux named %v; build-all's outputs differ in %v", got, want)
		}
		named = got
		return nil
	}
	var warm, again, cold []time.Duration
	var warmCPU []time.Duration
	for r := 0; r < runs; r++ {
		// The base revision in the cache: a build-all of it first.
		cache := filepath.Join(b.work, fmt.Sprintf("diff-cache-%d", r))
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			return err
		}
		buildAll(filepath.Join(b.work, fmt.Sprintf("diff-base-%d", r)), cache)
		if err := os.WriteFile(path, edited, 0o644); err != nil {
			return err
		}
		out, st := runStatus(tree, b.env(cache), b.kpipe, diffArgs...)
		if err := check(out); err != nil {
			return err
		}
		warm, warmCPU = append(warm, st.Wall), append(warmCPU, st.CPU)
		out, st = runStatus(tree, b.env(cache), b.kpipe, diffArgs...)
		if err := check(out); err != nil {
			return err
		}
		again = append(again, st.Wall)
		out, st = runStatus(tree, b.env(filepath.Join(b.work, fmt.Sprintf("diff-empty-%d", r))), b.kpipe, diffArgs...)
		if err := check(out); err != nil {
			return err
		}
		cold = append(cold, st.Wall)
	}
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		return err
	}

	ref, ok := b.fluxCluster[repo+":"+dir]
	refNote := "the cluster scenario's median"
	if !ok {
		var total time.Duration
		for _, c := range b.cases[repo] {
			_, fs := b.runFlux(c)
			total += fs.Wall
		}
		ref, refNote = total, "every file case of the repository, once"
	}
	ref *= 2
	fmt.Fprintf(&b.out, "**`kpipe diff --flux` on a one-file change**: %s (%d files, its files committed to a new git repository), `%s` edited (%q to %q) in the working tree; `kpipe %s`, %d runs of each, alternating; the named Kustomizations checked against `flux build-all --no-cache` at both revisions, output by output, every run: %s. The reference: flux one process per Flux Kustomization at both revisions (twice %s).\n\n",
		repo, files, file, old, new, strings.Join(diffArgs, " "), runs, strings.Join(named, ", "), refNote)
	fmt.Fprintf(&b.out, "| what | median wall | min wall | vs flux at both revisions (%.2f s) |\n|---|---:|---:|---:|\n", ref.Seconds())
	for _, row := range []struct {
		what string
		d    []time.Duration
	}{{"base revision in the cache (a build-all of it before)", warm}, {"the same diff again (both sides in the cache)", again}, {"empty cache", cold}} {
		fmt.Fprintf(&b.out, "| %s | %.0f ms | %.0f ms | %.0fx |\n", row.what, ms(median(row.d)), ms(slices.Min(row.d)), ratio(ref, median(row.d)))
	}
	fmt.Fprintf(&b.out, "\n(CPU, user + system, of the diff with the base revision in the cache: median %.0f ms.)\n\n", ms(median(warmCPU)))
	b.bar(median(warm) < 150*time.Millisecond, "diff --flux on a one-file change under 150 ms with the base revision in the cache (diff's bound): %.0f ms", ms(median(warm)))
	b.bar(ratio(ref, median(warm)) >= 30, "and at least 30x faster than flux rendering the cluster at both revisions: %.0fx", ratio(ref, median(warm)))
	return nil
}

// differingOutputs lists NAMESPACE/NAME of the build-all outputs
// (OUT/NAMESPACE/NAME.yaml) that differ between two output directories,
// or are in one only.
func differingOutputs(a, b string) ([]string, error) {
	read := func(dir string) (map[string][]byte, error) {
		m := map[string][]byte{}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			data, err := os.ReadFile(p)
			m[strings.TrimSuffix(filepath.ToSlash(rel), ".yaml")] = data
			return err
		})
		return m, err
	}
	ma, err := read(a)
	if err != nil {
		return nil, err
	}
	mb, err := read(b)
	if err != nil {
		return nil, err
	}
	var out []string
	for k, v := range mb {
		if w, ok := ma[k]; !ok || !bytes.Equal(v, w) {
			out = append(out, k)
		}
	}
	for k := range ma {
		if _, ok := mb[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

// runStatus runs name in dir and returns its standard output whatever its
// exit status (diff's is 1 when something differs), and what it cost.
func runStatus(dir string, env []string, name string, args ...string) ([]byte, procstat.Stats) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var so bytes.Buffer
	cmd.Stdout = &so
	start := time.Now()
	_ = cmd.Run()
	st := procstat.Stats{Wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		st.CPU, st.MaxRSS = ps.UserTime()+ps.SystemTime(), procstat.MaxRSS(ps)
	}
	return so.Bytes(), st
}
