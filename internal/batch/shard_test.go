package batch

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, s := range []string{"0/4", "5/4", "1/0", "1", "a/b", "-1/2", ""} {
		if _, err := ParseShard(s); err == nil {
			t.Errorf("ParseShard(%q) accepted", s)
		}
	}
	if s, err := ParseShard("3/8"); err != nil || s.Index != 3 || s.Count != 8 || s.String() != "3/8" {
		t.Errorf("ParseShard(3/8) = %+v, %v", s, err)
	}
}

// Every path lands in one shard of 1..n, each shard gets some of many
// paths, and the shard depends on the slash path only.
func TestShardOf(t *testing.T) {
	for n := 1; n <= 8; n++ {
		count := make([]int, n+1)
		for i := range 400 {
			s := ShardOf(fmt.Sprintf("apps/app%03d/prod", i), n)
			if s < 1 || s > n {
				t.Fatalf("ShardOf(.., %d) = %d", n, s)
			}
			count[s]++
		}
		for s := 1; s <= n; s++ {
			if count[s] == 0 {
				t.Errorf("n=%d: shard %d got none of 400 roots", n, s)
			}
		}
	}
}

func TestMergeReportsRefuses(t *testing.T) {
	rep := func(shard, version string, roots ...string) *Report {
		r := &Report{Version: version, Shard: shard}
		for _, p := range roots {
			r.Roots = append(r.Roots, RootReport{Path: p, Status: "ok"})
		}
		r.Summary.Roots = len(roots)
		return r
	}
	for _, tc := range []struct {
		reps []*Report
		want string
	}{
		{[]*Report{rep("1/2", "v1", "/a"), rep("2/2", "v1", "/a")}, "root /a is in report 1 and report 2"},
		{[]*Report{rep("1/2", "v1", "/a"), rep("2/2", "v2", "/b")}, "written by kpipe v2"},
		{[]*Report{rep("1/2", "v1", "/a"), rep("2/3", "v1", "/b")}, "shards of different runs"},
		{[]*Report{rep("1/2", "v1", "/a"), rep("1/2", "v1", "/b")}, "shard 1/2 is there twice"},
		{[]*Report{rep("1/3", "v1", "/a"), rep("3/3", "v1", "/b")}, "shards missing: 2/3"},
		{[]*Report{rep("", "v1", "/a"), rep("", "v1", "/b")}, "not shards"},
	} {
		if _, err := MergeReports(tc.reps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("merge: %v, want %q", err, tc.want)
		}
	}
	m, err := MergeReports([]*Report{rep("2/2", "v1", "/c", "/a"), rep("1/2", "v1", "/b")})
	if err != nil || len(m.Roots) != 3 || m.Roots[0].Path != "/a" || m.Roots[2].Path != "/c" || m.Summary.Roots != 3 || m.Shard != "" {
		t.Errorf("merged %+v, %v", m, err)
	}
}
