package cache

import (
	"crypto/sha256"
	"reflect"
	"testing"
)

func TestRecordRoundTripAndDamage(t *testing.T) {
	in := []Input{{Path: "/repo/app/kustomization.yaml", Real: "/repo/app/kustomization.yaml", Digest: key("k")},
		{Path: "/repo/link/base", Real: "/repo/base", Digest: key("dir")}}
	for _, rec := range []*storedRecord{
		{Settings: key("s"), Name: "/repo/app", Root: &RootRecord{Inputs: in, Output: "out/app.yaml", OutputDigest: key("o"),
			Warnings: []string{"# Warning: 'commonLabels' is deprecated."}}},
		{Settings: key("s"), Name: "trees", Discovery: &DiscoveryRecord{Files: in, Dirs: in[1:], Roots: []string{"/repo/app", "/repo/ü"}}},
		{Settings: key("s"), Name: "empty root", Root: &RootRecord{}},
	} {
		data, err := encodeState(rec)
		if err != nil {
			t.Fatal(err)
		}
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
