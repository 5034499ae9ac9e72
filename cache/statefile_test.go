package cache

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestInputsRoundTripAndDamage: inputs (with and without their stats),
// strings and keys read back as written; a cut or damaged encoding is
// refused.
func TestInputsRoundTripAndDamage(t *testing.T) {
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
	w := NewEncoder(9)
	w.Reserve(0, in)
	w.Inputs(in)
	w.Strings([]string{"/repo/app", "/repo/ü"})
	w.Uint(2)
	w.Key(key("base"))
	w.Key(key("component"))
	w.Inputs(nil)
	data := w.Bytes()
	r := NewDecoder(data, 9)
	if got, roots, keys, none := r.Inputs(), r.Strings(), r.Keys(), r.Inputs(); !r.Done() || !reflect.DeepEqual(got, in) ||
		!reflect.DeepEqual(roots, []string{"/repo/app", "/repo/ü"}) || !reflect.DeepEqual(keys, []Key{key("base"), key("component")}) || none != nil {
		t.Fatalf("decoded %+v %q %v %v (done %v); want %+v", got, roots, keys, none, r.Done(), in)
	}
	// Every cut is refused.
	for n := 0; n < len(data); n++ {
		r := NewDecoder(data[:n], 9)
		r.Inputs()
		r.Strings()
		r.Keys()
		r.Inputs()
		if r.Done() {
			t.Errorf("an encoding cut to %d of %d bytes decoded", n, len(data))
		}
	}
	// An encoding that lies about its lengths is refused without a panic.
	for i := 1; i < len(data); i++ {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0xff
		r := NewDecoder(bad, 9)
		r.Inputs()
		r.Strings()
		r.Keys()
	}
}

// TestInputsWriteSharedPrefixesOnce: a root's inputs are mostly files of
// a few directories, and Inputs writes what a path shares with the one
// before it once.
func TestInputsWriteSharedPrefixesOnce(t *testing.T) {
	var in []Input
	paths := 0
	for i := 0; i < 40; i++ {
		p := fmt.Sprintf("/home/ci/work/platform/apps/app-%03d/overlays/production/resource-%02d.yaml", i/10, i)
		in = append(in, Input{Path: p, Real: p, Digest: key(p)})
		paths += 2 * len(p)
	}
	w := NewEncoder(9)
	w.Inputs(in)
	data := w.Bytes()
	// Each input's digest is 32 bytes; its paths (path and real path,
	// written whole) would be 160 more.
	if perInput := len(data) / len(in); perInput > 32+24 {
		t.Errorf("%d bytes per input (paths of %d bytes each): shared prefixes are written again", perInput, paths/len(in))
	}
}
