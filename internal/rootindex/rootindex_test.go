package rootindex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache"
)

func key(s string) cache.Key { return cache.NewKey("v1", "test").String(s).Sum() }

// open opens a store in dir, failing the test on a warning.
func open(t *testing.T, dir string) *cache.Store {
	t.Helper()
	s := cache.Open(context.Background(), cache.Options{Dir: dir, Warn: func(msg string) { t.Errorf("warning: %s", msg) }})
	if s == nil {
		t.Fatal("no store")
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestRootRecords: root and discovery records read back from the store, by
// another index of the same settings (and of a store opened again), never
// by one of other settings; a forgotten root has none.
func TestRootRecords(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ri := Open(s, key("settings"))
	rec := &Record{Inputs: []cache.Input{{Path: "/a", Real: "/a", Digest: key("a")}}, OutputDigest: key("out")}
	ri.SetRoot("/root", rec)
	ri.SetDiscovery("trees", DiscoveryRecord{Roots: []string{"/root"}})
	same := Open(s, key("settings"))
	if r, ok := same.Root("/root"); !ok || r.OutputDigest != rec.OutputDigest || len(r.Inputs) != 1 {
		t.Errorf("root record not read back: %+v %v", r, ok)
	}
	if d, ok := same.Discovery("trees"); !ok || len(d.Roots) != 1 {
		t.Error("discovery record not read back")
	}
	if _, ok := Open(s, key("other settings")).Root("/root"); ok {
		t.Error("a record of other settings was used")
	}
	s.Close()
	s = open(t, dir)
	again := Open(s, key("settings"))
	if r, ok := again.Root("/root"); !ok || r.OutputDigest != rec.OutputDigest {
		t.Errorf("reopened: root record not read back: %+v %v", r, ok)
	}
	again.SetRoot("/root", nil)
	if _, ok := Open(s, key("settings")).Root("/root"); ok {
		t.Error("a forgotten root still has a record")
	}
	mem := Open(nil, key("settings"))
	mem.SetRoot("/m", rec)
	if r, ok := mem.Root("/m"); mem.Persistent() || !ok || r.OutputDigest != rec.OutputDigest {
		t.Errorf("in memory: persistent %v, %+v %v", mem.Persistent(), r, ok)
	}
}

// TestRootRecordSets checks that a root record's input sets are read back
// with it and checked as its own inputs are: an edited file in a set, or
// a set that is damaged, makes the root changed.
func TestRootRecordSets(t *testing.T) {
	dir := t.TempDir()
	s := open(t, filepath.Join(dir, "cache"))
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) string {
		p := filepath.Join(tree, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	input := func(p string) cache.Input {
		d, ok := s.FileIndex().Digest(p)
		if !ok {
			t.Fatal("no digest of", p)
		}
		return cache.Input{Path: p, Real: p, Digest: d}
	}
	own, shared := write("overlay.yaml", "overlay"), write("base.yaml", "base")

	ri := Open(s, key("settings"))
	set := &InputSet{Inputs: []cache.Input{input(shared)}}
	k := ri.SaveInputSet(set)
	if again := ri.SaveInputSet(set); again != k {
		t.Fatalf("SaveInputSet: %v, then %v", k, again)
	}
	ri.SetRoot("/root", &Record{Inputs: []cache.Input{input(own)}, Sets: []cache.Key{k}, OutputDigest: key("out")})

	check := func() (same bool, all []cache.Input, allOK bool) {
		again := Open(s, key("settings"))
		rec, ok := again.Root("/root")
		if !ok || len(rec.Sets) != 1 || rec.Sets[0] != k {
			t.Fatalf("the record was not read back with its set: %+v %v", rec, ok)
		}
		all, allOK = again.AllInputs(rec)
		return again.Unchanged(cache.NewInputChecker(s.FileIndex()), rec), all, allOK
	}
	if same, all, ok := check(); !same || !ok || len(all) != 2 || all[1].Path != shared {
		t.Errorf("unchanged tree: unchanged %v, inputs %v (%v), want the record's and the set's", same, all, ok)
	}
	write("base.yaml", "base, edited")
	if same, _, _ := check(); same {
		t.Error("an edited file of a set was not seen")
	}
	write("base.yaml", "base")
	if same, _, _ := check(); !same {
		t.Error("a file of a set edited back to its recorded content counts as changed")
	}
	if _, ok := Open(s, key("other settings")).inputSet(k); ok {
		t.Error("a set was read under other settings")
	}
	name := ri.recordName(inputSetKind, hex.EncodeToString(k[:]))
	data, ok := s.Record(name)
	if !ok {
		t.Fatal("no record of the set")
	}
	data = append([]byte(nil), data...)
	data[len(data)/2] ^= 1
	s.WriteRecord(name, data)
	if same, _, ok := check(); same || ok {
		t.Errorf("a damaged set: unchanged %v, its inputs read %v", same, ok)
	}
}

// TestRecordRoundTripAndDamage: records decode to what was encoded; a cut
// record, or one whose body lies about its lengths under a matching
// digest, is refused without a panic.
func TestRecordRoundTripAndDamage(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	in := []cache.Input{{Path: "/repo/app/kustomization.yaml", Real: "/repo/app/kustomization.yaml", Digest: key("k")},
		{Path: "/repo/link/base", Real: "/repo/base", Digest: key("dir")},
		{Path: "/repo/link/" + strings.Repeat("ü", 200), Real: "", Digest: key("c")},
		// Stamped with its stat.
		cache.StampRead(cache.Input{Path: f, Real: f, Digest: key("f")}, fi, 4, fi.ModTime())}
	for _, rec := range []*storedRecord{
		{Settings: key("s"), Name: "/repo/app", Root: &Record{Inputs: in, Output: "out/app.yaml", OutputDigest: key("o"),
			Warnings: []string{"# Warning: 'commonLabels' is deprecated."}}},
		{Settings: key("s"), Name: "/repo/overlay", Root: &Record{Inputs: in[:1], Sets: []cache.Key{key("base"), key("component")}, OutputDigest: key("o")}},
		{Settings: key("s"), Name: "trees", Discovery: &DiscoveryRecord{Files: in, Dirs: in[1:], Roots: []string{"/repo/app", "/repo/ü"}}},
		{Settings: key("s"), Name: "empty root", Root: &Record{}},
	} {
		data := encodeState(rec)
		var got storedRecord
		if err := decodeState(data, &got); err != nil || !reflect.DeepEqual(&got, rec) {
			t.Fatalf("decoded %+v, %v; want %+v", got, err, rec)
		}
		for n := 0; n < len(data); n++ {
			var s storedRecord
			if decodeState(data[:n], &s) == nil {
				t.Errorf("%s: a record cut to %d of %d bytes decoded", rec.Name, n, len(data))
			}
		}
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
