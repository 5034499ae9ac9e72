package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/fleet"
	"github.com/kpipe/kpipe/internal/argocd/generate"
	"github.com/kpipe/kpipe/internal/argocd/render"
)

// bench300 renders the reference corpus's bench300 Applications (300
// over the kustomize roots of three real repositories, read where they
// are: nothing is copied) in process, one batch per repository, no cache,
// and compares with Argo CD's recorded generation time for each (the
// corpus's bench300.tsv) and its recorded manifests. It returns the
// markdown lines of the result.
func bench300(corpus string, runs int) ([]string, error) {
	type kase struct {
		id   string
		a    *app.Application
		url  string
		want []any
	}
	byRepo := map[string][]kase{}
	dirs, err := filepath.Glob(filepath.Join(corpus, "bench300", "*"))
	if err != nil || len(dirs) == 0 {
		return nil, fmt.Errorf("no bench300 cases under %s", corpus)
	}
	for _, d := range dirs {
		doc, err := os.ReadFile(filepath.Join(d, "app.yaml"))
		if err != nil {
			return nil, err
		}
		a, err := app.ParseApplication(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", d, err)
		}
		var c struct {
			Repos map[string]string `json:"repos"`
		}
		var r struct {
			Manifests []any `json:"manifests"`
		}
		if err := readJSON(filepath.Join(d, "case.json"), &c); err != nil {
			return nil, err
		}
		if err := readJSON(filepath.Join(d, "result.json"), &r); err != nil {
			return nil, err
		}
		for u, dir := range c.Repos {
			byRepo[dir] = append(byRepo[dir], kase{id: filepath.Base(d), a: a, url: u, want: r.Manifests})
		}
	}
	recorded := time.Duration(0)
	f, err := os.Open(filepath.Join(corpus, "bench300.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if ms, err := strconv.Atoi(cols[min(3, len(cols)-1)]); err == nil {
			recorded += time.Duration(ms) * time.Millisecond
		}
	}
	repos := make([]string, 0, len(byRepo))
	for d := range byRepo {
		repos = append(repos, d)
	}
	sort.Strings(repos)
	var times []time.Duration
	equal, total := 0, 0
	for run := 0; run < runs; run++ {
		var took time.Duration
		for _, dir := range repos {
			ks := byRepo[dir]
			tree, err := render.DiskTree(dir)
			if err != nil {
				return nil, err
			}
			src := fleet.Source{Tree: tree, Repos: app.NewRepos(ks[0].url), Renderer: render.New(render.Options{HelmSources: true}), Settings: generate.Settings{}}
			units := make([]*fleet.Unit, len(ks))
			for i, k := range ks {
				units[i] = &fleet.Unit{Name: k.id, App: k.a}
			}
			t0 := time.Now()
			outs := src.RenderAll(context.Background(), units)
			took += time.Since(t0)
			if run > 0 {
				continue
			}
			for i, k := range ks {
				total++
				if o := outs[i]; o != nil && o.Err == "" && reflect.DeepEqual(canon(o.Result.Manifests), canon(k.want)) {
					equal++
				}
			}
		}
		times = append(times, took)
	}
	m := median(times)
	return []string{
		fmt.Sprintf("| corpus bench300 (3 real repositories, read in place), in process, no cache | %s (recorded) | %s | %.0fx | >= 50x |", secs(recorded), secs(m), float64(recorded)/float64(m)),
		"",
		fmt.Sprintf("bench300: the corpus's 300 Applications rendered with kpipe's packages in one process (one batch per repository: what `kpipe argocd build-all` does after its discovery, without process start or output files), median of %d runs, against the generation times the corpus recorded for Argo CD (bench300.tsv); outputs against the recorded manifests: %d of %d equal.", runs, equal, total),
	}, nil
}

func readJSON(p string, v any) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", p, err)
	}
	return nil
}

// canon is v through JSON (numbers as float64), for comparison.
func canon(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	if out == nil {
		out = []any{}
	}
	return out
}
