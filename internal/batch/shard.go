package batch

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/cache"
)

// Shard selects one part of the roots, so that N runners each build one
// part (`build-all --shard i/n`). The zero Shard is the whole.
type Shard struct {
	// Index is the part, 1 to Count.
	Index, Count int
}

// String is "i/n", or "" for the whole.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// ParseShard reads "i/n" (1 <= i <= n).
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N, e.g. 1/4", s)
	}
	return Shard{Index: i, Count: n}, nil
}

// ShardOf returns the shard (1 to n) of a root, from the SHA-256 of its
// slash-separated path relative to the directory kpipe runs in (its output
// name without ".yaml"). A root's shard depends on its path alone: adding
// or removing a root moves no other root, and runners that check out the
// repository at different paths agree.
func ShardOf(rel string, n int) int {
	sum := sha256.Sum256([]byte(filepath.ToSlash(rel)))
	return int(binary.BigEndian.Uint64(sum[:8])%uint64(n)) + 1
}

// inShard reports whether root belongs to shard s (always, for the
// whole).
func (s Shard) has(cwd, root string) bool {
	if s.Count <= 1 {
		return true
	}
	rel := strings.TrimSuffix(OutputName(cwd, root), ".yaml")
	return ShardOf(rel, s.Count) == s.Index
}

// MergeReports joins the reports of the shards of one build-all (each
// written with --shard i/n, all with the same n) into the report one run
// over every root would have written: roots in path order, counts added,
// Seconds the slowest shard's (shards run at once). It fails when a root
// is in two reports, when shards differ in n or a shard is there twice,
// or when a shard is missing.
func MergeReports(reps []*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, errors.New("no reports to merge")
	}
	out := &Report{Version: reps[0].Version, Roots: []RootReport{}}
	seenShard := map[int]bool{}
	count := -1
	owner := map[string]int{}
	for i, r := range reps {
		if r.Version != out.Version {
			return nil, fmt.Errorf("report %d was written by kpipe %s, report 1 by %s: merge reports of one kpipe", i+1, r.Version, out.Version)
		}
		s := Shard{}
		if r.Shard != "" {
			var err error
			if s, err = ParseShard(r.Shard); err != nil {
				return nil, fmt.Errorf("report %d: %v", i+1, err)
			}
		}
		switch {
		case count == -1:
			count = s.Count
		case count != s.Count:
			return nil, fmt.Errorf("report %d is shard %q, report 1 shard %q: shards of different runs (or a whole run) do not merge", i+1, r.Shard, reps[0].Shard)
		}
		if s.Count > 0 {
			if seenShard[s.Index] {
				return nil, fmt.Errorf("report %d: shard %s is there twice", i+1, r.Shard)
			}
			seenShard[s.Index] = true
		}
		for _, rr := range r.Roots {
			if j, dup := owner[rr.Path]; dup {
				return nil, fmt.Errorf("root %s is in report %d and report %d", rr.Path, j+1, i+1)
			}
			owner[rr.Path] = i
			out.Roots = append(out.Roots, rr)
		}
		out.Pruned = append(out.Pruned, r.Pruned...)
		out.Kept = append(out.Kept, r.Kept...)
		addSummary(out, r)
	}
	if count > 0 {
		var missing []string
		for i := 1; i <= count; i++ {
			if !seenShard[i] {
				missing = append(missing, fmt.Sprintf("%d/%d", i, count))
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("shards missing: %s", strings.Join(missing, ", "))
		}
	} else if len(reps) > 1 {
		return nil, errors.New("the reports are not shards (written without --shard): nothing to merge")
	}
	sort.Slice(out.Roots, func(i, j int) bool { return out.Roots[i].Path < out.Roots[j].Path })
	sort.Strings(out.Pruned)
	sort.Strings(out.Kept)
	return out, nil
}

// addSummary adds r's summary to out's.
func addSummary(out, r *Report) {
	o, s := &out.Summary, &r.Summary
	o.Roots += s.Roots
	o.Failed += s.Failed
	o.Changed += s.Changed
	o.UpToDate += s.UpToDate
	o.Seconds = max(o.Seconds, s.Seconds)
	o.NodesBuilt += s.NodesBuilt
	o.NodesCached += s.NodesCached
	o.RootsCached += s.RootsCached
	o.FilesHashed += s.FilesHashed
	o.FilesStat += s.FilesStat
	addStages(&o.Stages, s.Stages)
	if rs := s.Remote; rs != nil {
		if o.Remote == nil {
			o.Remote = &cache.RemoteStats{URL: rs.URL}
		}
		t := o.Remote
		if t.URL != rs.URL {
			t.URL = "(several)"
		}
		t.Hits += rs.Hits
		t.Misses += rs.Misses
		t.Refused += rs.Refused
		t.Uploads += rs.Uploads
		t.BytesDown += rs.BytesDown
		t.BytesUp += rs.BytesUp
		t.Seconds += rs.Seconds
		t.Failed = t.Failed || rs.Failed
	}
}
