package cluster

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/flux/postbuild"
)

// encode prints objects as flux does.
func encode(objs []map[string]any) ([]byte, error) { return postbuild.Encode(objs) }

// sopsMask is what flux build puts in place of a SOPS-encrypted Secret's
// values (base64 of "**SOPS**").
const sopsMask = "KipTT1BTKio="

// provided reads a ConfigMap's or a Secret's data as substituteFrom does.
func provided(obj map[string]any) (Provided, bool) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion != "v1" || (kind != "ConfigMap" && kind != "Secret") {
		return Provided{}, false
	}
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	p := Provided{Kind: kind, Namespace: ns, Name: name, Data: map[string]string{}}
	data, _ := obj["data"].(map[string]any)
	for k, v := range data {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if kind == "ConfigMap" {
			p.Data[k] = s
			continue
		}
		if s == sopsMask {
			p.Encrypted = true
			continue
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			continue
		}
		p.Data[k] = string(b)
	}
	if kind == "Secret" {
		sd, _ := obj["stringData"].(map[string]any)
		for k, v := range sd {
			if s, ok := v.(string); ok {
				if s == "**SOPS**" || s == sopsMask {
					p.Encrypted = true
					continue
				}
				p.Data[k] = s
			}
		}
	}
	return p, true
}

// report writes the outputs and makes the report, in ID order.
func (r *run) report(ctx context.Context, order []*Node, nodes map[string]*Node, hrs []*hrNode, start time.Time) (*Report, error) {
	slices.SortFunc(order, func(a, b *Node) int { return strings.Compare(a.ID, b.ID) })
	rep := &Report{Report: &batch.Report{Version: r.o.Version, Shard: r.o.Shard.String()}}
	var out *batch.OutDir
	if r.o.OutDir != "" {
		dir, err := filepath.Abs(r.o.OutDir)
		if err != nil {
			return nil, err
		}
		if out, err = batch.OpenOutDir(ctx, dir, r.o.Check, r.o.Engine.Warn); err != nil {
			return nil, err
		}
	}
	var live, outputs []string
	for _, n := range order {
		name := OutputName(n.K.Namespace, n.K.Name)
		if out != nil {
			live = append(live, ownerPrefix+n.ID)
			outputs = append(outputs, out.Path(name))
		}
		if r.o.Shard.Count > 1 && batch.ShardOf(n.ID, r.o.Shard.Count) != r.o.Shard.Index {
			continue
		}
		res := n.res
		rr := batch.RootReport{Path: n.ID, Cached: res.cached, UpToDate: res.cached, NodesBuilt: res.nodesBuilt, NodesCached: res.nodesCached,
			StageHits: res.stageHits, StageMisses: res.stageRuns}
		for _, w := range res.Warnings {
			rr.Warnings = append(rr.Warnings, batch.Warning{File: n.ID, Message: strings.TrimPrefix(w, "# Warning: ")})
		}
		k := Kustomization{Name: n.K.Name, Namespace: n.K.Namespace, Path: relTo(r.o.Cwd, n.Dir), RenderedBy: n.RenderedBy}
		for _, raw := range res.HelmReleases {
			var obj struct {
				Metadata struct{ Name, Namespace string }
			}
			if json.Unmarshal(raw, &obj) == nil {
				k.HelmReleases = append(k.HelmReleases, obj.Metadata.Namespace+"/"+obj.Metadata.Name)
			}
		}
		for _, d := range n.K.Spec.DependsOn {
			ns := d.Namespace
			if ns == "" {
				ns = n.K.Namespace
			}
			id := ns + "/" + d.Name
			k.DependsOn = append(k.DependsOn, id)
			if nodes[id] == nil {
				rr.Warnings = append(rr.Warnings, batch.Warning{File: n.ID, Message: "dependsOn " + id + ": the cluster renders no such Kustomization"})
			}
		}
		t0 := time.Now()
		if res.Err != "" {
			rr.Status, rr.Error = "error", res.Err
			if out != nil {
				rr.RemovedOutput = out.Drop(out.Path(name))
			}
		} else {
			rr.Status = "ok"
			if out != nil {
				rr.Output = out.Path(name)
				changed, digest, err := out.Put(ownerPrefix+n.ID, rr.Output, res.YAML) // (the output's digest: not taken twice)
				if err != nil {
					rr.Status, rr.Error, rr.Output = "error", err.Error(), ""
				}
				rr.Digest = digest
				rr.Changed = changed
				rr.OutOfDate = r.o.Check && changed
			} else {
				sum := cache.Digest(res.YAML)
				rr.Digest = hex.EncodeToString(sum[:])
				rr.Changed = !res.cached
			}
		}
		rr.Seconds = time.Since(t0).Seconds()
		rep.Roots = append(rep.Roots, rr)
		rep.Kustomizations = append(rep.Kustomizations, k)
		rep.results = append(rep.results, res)
		rep.keys = append(rep.keys, n.Key)
	}
	for _, h := range hrs {
		ns, name, _ := strings.Cut(h.hr.ID, "/")
		file := ns + "/" + name + ".helmrelease.yaml"
		if ns == "" {
			file = "_/" + name + ".helmrelease.yaml"
		}
		owner := ownerPrefix + "HelmRelease/" + h.hr.ID
		if out != nil {
			live = append(live, owner)
			outputs = append(outputs, out.Path(file))
		}
		if r.o.Shard.Count > 1 && batch.ShardOf("HelmRelease/"+h.hr.ID, r.o.Shard.Count) != r.o.Shard.Index {
			continue
		}
		rr := batch.RootReport{Path: "HelmRelease " + h.hr.ID, Cached: h.res.cached, UpToDate: h.res.cached, StageMisses: h.res.HelmRuns}
		if h.res.cached {
			rr.StageHits = 1
		}
		for _, w := range h.res.Warnings {
			rr.Warnings = append(rr.Warnings, batch.Warning{File: rr.Path, Message: w})
		}
		if h.res.Err != "" {
			rr.Status, rr.Error = "error", h.res.Err
			if out != nil {
				rr.RemovedOutput = out.Drop(out.Path(file))
			}
		} else {
			rr.Status = "ok"
			sum := cache.Digest(h.res.YAML)
			rr.Digest = hex.EncodeToString(sum[:])
			if out != nil {
				rr.Output = out.Path(file)
				changed, _, err := out.Put(owner, rr.Output, h.res.YAML)
				if err != nil {
					rr.Status, rr.Error, rr.Output = "error", err.Error(), ""
				}
				rr.Changed, rr.OutOfDate = changed, r.o.Check && changed
			}
		}
		rep.Roots = append(rep.Roots, rr)
		rep.Kustomizations = append(rep.Kustomizations, Kustomization{Name: name, Namespace: ns, RenderedBy: h.hr.RenderedBy, Kind: "HelmRelease"})
		rep.results = append(rep.results, h.res)
		rep.keys = append(rep.keys, cache.Key{})
	}
	if out != nil {
		if r.o.Check {
			rep.Orphans = out.Orphans(outputs)
		}
		var err error
		if rep.Pruned, rep.Kept, err = out.Close(live, r.o.Prune); err != nil {
			return rep, err
		}
	}
	_ = r.files.Save("")
	rep.Summary.Roots = len(rep.Roots)
	for _, rr := range rep.Roots {
		rep.Summary.NodesBuilt += rr.NodesBuilt
		rep.Summary.NodesCached += rr.NodesCached
		switch {
		case rr.Status == "error":
			rep.Summary.Failed++
		case rr.OutOfDate:
			rep.Summary.OutOfDate++
		case rr.UpToDate:
			rep.Summary.UpToDate++
			if rr.Changed {
				rep.Summary.Changed++
			}
		case rr.Changed:
			rep.Summary.Changed++
		}
	}
	rep.Summary.FilesHashed, rep.Summary.FilesStat = r.files.Counts()
	if rs := r.store.RemoteStats(); rs.URL != "" {
		r.store.Flush()
		rs = r.store.RemoteStats()
		rep.Summary.Remote = &rs
	}
	rep.Summary.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// relTo is p relative to cwd when it lies under it.
func relTo(cwd, p string) string {
	if rel, err := filepath.Rel(cwd, p); err == nil && (filepath.IsLocal(rel) || rel == ".") {
		return rel
	}
	return p
}
