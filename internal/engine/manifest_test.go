package engine

import (
	"reflect"
	"testing"

	"github.com/kpipe/kpipe/internal/cache"
)

func TestManifestRoundTripAndDamage(t *testing.T) {
	recs := []readRecord{
		{Path: "patch.yaml", Real: "/repo/app/patch.yaml", Digest: cache.Digest([]byte("p"))},
		{Path: "charts/web", Real: "/repo/charts/web", Digest: cache.Digest([]byte("listing")), Tree: true},
		{Path: "ü/../x", Real: "/x", Digest: cache.Digest(nil)},
	}
	for _, want := range [][]readRecord{recs, {}} {
		data := encodeManifest(want)
		got, ok := decodeManifest(data)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %+v, %v; want %+v", got, ok, want)
		}
		for n := 0; n < len(data); n++ {
			if _, ok := decodeManifest(data[:n]); ok {
				t.Errorf("a manifest cut to %d of %d bytes decoded", n, len(data))
			}
		}
		if _, ok := decodeManifest(append(data, 0)); ok {
			t.Error("a manifest with a trailing byte decoded")
		}
	}
}
