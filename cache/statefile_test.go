package cache

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestRecordRoundTripAndDamage(t *testing.T) {
	in := []Input{{Path: "/repo/app/kustomization.yaml", Real: "/repo/app/kustomization.yaml", Digest: key("k")},
		{Path: "/repo/link/base", Real: "/repo/base", Digest: key("dir")},
		// A path that is a prefix of the one before, a real path that is a
		// prefix of its path, one that is longer, and shared prefixes
		// longer than what is left of the record after them.
		{Path: "/repo/link", Real: "/repo/li", Digest: key("a")},
		{Path: "/repo/link/" + strings.Repeat("ü", 200), Real: "/repo/link/" + strings.Repeat("ü", 200) + "/x", Digest: key("b")},
		{Path: "/repo/link/" + strings.Repeat("ü", 200), Real: "", Digest: key("c")},
		{Path: "", Real: "/r", Digest: key("d")},
		// Stamped with their stat: a file of today; one from before 1970
		// whose ctime is earlier than its mtime.
		{Path: "/repo/s", Real: "/repo/s", Digest: key("s"), stat: fileStat{Size: 10, ModNano: 1_764_000_000_123_456_789,
			CtimeNano: 1_764_000_000_123_456_789, Inode: 42, Dev: 2049, Recorded: 1_764_000_005_000_000_000}},
		{Path: "/repo/t", Real: "/repo/t", Digest: key("t"), stat: fileStat{Size: 1 << 40, ModNano: -86_400_000_000_000,
			CtimeNano: -86_400_000_000_001, Inode: 1 << 63, Dev: 0, Recorded: 5}}}
	for _, rec := range []*storedRecord{
		{Settings: key("s"), Name: "/repo/app", Root: &RootRecord{Inputs: in, Output: "out/app.yaml", OutputDigest: key("o"),
			Warnings: []string{"# Warning: 'commonLabels' is deprecated."}}},
		{Settings: key("s"), Name: "/repo/overlay", Root: &RootRecord{Inputs: in[:1], Sets: []Key{key("base"), key("component")}, OutputDigest: key("o")}},
		{Settings: key("s"), Name: "trees", Discovery: &DiscoveryRecord{Files: in, Dirs: in[1:], Roots: []string{"/repo/app", "/repo/ü"}}},
		{Settings: key("s"), Name: "empty root", Root: &RootRecord{}},
	} {
		data := encodeState(rec)
		var got storedRecord
		if err := decodeState(data, &got); err != nil || !reflect.DeepEqual(&got, rec) {
			t.Fatalf("decoded %+v, %v; want %+v", got, err, rec)
		}
		// Every cut is refused.
		for n := 0; n < len(data); n++ {
			var s storedRecord
			if decodeState(data[:n], &s) == nil {
				t.Errorf("%s: a record cut to %d of %d bytes decoded", rec.Name, n, len(data))
			}
		}
		// A body that lies about its lengths, with a digest that matches
		// (a writer's bug, not the disk's), is refused without a panic.
		body := data[:len(data)-sha256.Size]
		for i := 1; i < len(body); i++ {
			bad := append([]byte(nil), body...)
			bad[i] ^= 0xff
			sum := sha256.Sum256(bad)
			var s storedRecord
			_ = decodeState(append(bad, sum[:]...), &s)
		}
	}
}

// TestRecordWritesSharedPrefixesOnce: a root's inputs are mostly files of
// a few directories, and a record writes what a path shares with the one
// before it once.
func TestRecordWritesSharedPrefixesOnce(t *testing.T) {
	var in []Input
	paths := 0
	for i := 0; i < 40; i++ {
		p := fmt.Sprintf("/home/ci/work/platform/apps/app-%03d/overlays/production/resource-%02d.yaml", i/10, i)
		in = append(in, Input{Path: p, Real: p, Digest: key(p)})
		paths += 2 * len(p)
	}
	data := encodeState(&storedRecord{Settings: key("s"), Name: "/home/ci/work/platform/apps/app-000", Root: &RootRecord{Inputs: in}})
	// Each input's digest is 32 bytes; its paths (path and real path,
	// written whole) would be 160 more.
	if perInput := len(data) / len(in); perInput > 32+24 {
		t.Errorf("%d bytes per input (paths of %d bytes each): shared prefixes are written again", perInput, paths/len(in))
	}
}
