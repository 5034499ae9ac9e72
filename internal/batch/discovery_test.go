package batch

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
)

// TestParallelDiscoveryMatchesSerial: the walk on several goroutines finds
// the kustomization files the walk on one finds, in the same order, walks
// the same directories, and records the same directory digests.
func TestParallelDiscoveryMatchesSerial(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		name := []string{"kustomization.yaml", "kustomization.yml", "Kustomization", "other.yaml"}[i%4]
		files[fmt.Sprintf("apps/a%d/%s", i, name)] = "resources: []\n"
		files[fmt.Sprintf("apps/a%d/deep/er/kustomization.yaml", i)] = "resources: []\n"
	}
	files["a/b/kustomization.yaml"] = "resources: []\n"
	files["a-c/kustomization.yaml"] = "resources: []\n"
	files["both/kustomization.yaml"] = "resources: []\n"
	files["both/kustomization.yml"] = "resources: []\n"
	files[".hidden/kustomization.yaml"] = "resources: []\n"
	files["out/x/kustomization.yaml"] = "resources: []\n"
	files["target/real.yaml"] = "resources: []\n"
	writeTree(t, dir, files)
	if runtime.GOOS != "windows" {
		if err := os.Symlink(filepath.Join(dir, "target", "real.yaml"), filepath.Join(dir, "apps", "a3", "kustomization.yaml")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(dir, "apps"), filepath.Join(dir, "linked")); err != nil {
			t.Fatal(err)
		}
	}
	for _, withIndex := range []bool{false, true} {
		var ixs [2]*cache.FileIndex
		if withIndex {
			ixs[0], _ = cache.LoadFileIndex("")
			ixs[1], _ = cache.LoadFileIndex("")
		}
		found, walked, listed, err := findKustomizations(loaders.Disk, dir, filepath.Join(dir, "out"), ixs[0])
		sFound, sWalked, sListed, sErr := walkKustomizations(loaders.Disk, dir, filepath.Join(dir, "out"), ixs[1], 1)
		if err != nil || sErr != nil {
			t.Fatal(err, sErr)
		}
		if !reflect.DeepEqual(found, sFound) {
			t.Errorf("found %v\nserially %v", found, sFound)
		}
		if !reflect.DeepEqual(walked, sWalked) {
			t.Errorf("walked %v\nserially %v", walked, sWalked)
		}
		if !reflect.DeepEqual(listed, sListed) {
			t.Errorf("listed %v\nserially %v", listed, sListed)
		}
		// A directory's kustomization file is listed as its only one
		// when it is a regular file and no other name is there: not in
		// both/, and not a3's symlink.
		for _, f := range found {
			d := filepath.Dir(f.Path)
			sole := filepath.Base(d) != "both" && f.Real == f.Path
			if name, ok := listed[d]; ok != sole || ok && name != filepath.Base(f.Path) {
				t.Errorf("%s: listed as %q (%v), want it listed: %v", f.Path, name, ok, sole)
			}
		}
		// 40 deep ones, 30 of the 40 apps (and a3 through its link), a/b,
		// a-c and both; not .hidden or out.
		if want := 40 + 31 + 3; len(found) != want && runtime.GOOS != "windows" {
			t.Errorf("%d kustomization files found, want %d", len(found), want)
		}
		if withIndex {
			for _, w := range walked {
				d0, ok0 := ixs[0].Known(w.Path, time.Now())
				d1, ok1 := ixs[1].Known(w.Path, time.Now())
				if d0 != d1 || ok0 != ok1 {
					t.Errorf("%s: digest %v, %v; serially %v, %v", w.Path, d0, ok0, d1, ok1)
				}
			}
		}
	}
}

// An unreadable directory gives the error the depth-first walk meets
// first (b/c, before d), whichever the goroutines met first.
func TestParallelDiscoveryErrorIsTheSerialOne(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs a directory this user cannot read (not as root, not on Windows)")
	}
	dir := t.TempDir()
	files := map[string]string{"a/kustomization.yaml": "resources: []\n", "b/c/kustomization.yaml": "resources: []\n"}
	locked := []string{"b/c"}
	for i := 0; i < 20; i++ {
		d := fmt.Sprintf("d%02d", i)
		files[d+"/kustomization.yaml"] = "resources: []\n"
		locked = append(locked, d)
	}
	writeTree(t, dir, files)
	for _, p := range locked {
		if err := os.Chmod(filepath.Join(dir, p), 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(filepath.Join(dir, p), 0o755)
	}
	for i := 0; i < 5; i++ {
		_, _, _, err := findKustomizations(loaders.Disk, dir, "", nil)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "b", "c")) {
			t.Fatalf("error %v; want the one about %s", err, filepath.Join(dir, "b", "c"))
		}
	}
}
