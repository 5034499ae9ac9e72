package loaders

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"

// A kustomization.yaml that is a symlink to a file outside the root is
// refused under RootOnly, as kustomize refuses it, and read under None.
func TestKustomizationFileSymlinkedOutsideTheRootIsRefused(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "kustomization.yaml"), []byte("resources:\n- cm.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "kustomization.yaml"), filepath.Join(root, "kustomization.yaml")); err != nil {
		t.Skip("no symlinks:", err)
	}
	_, err := FindKustomization(Disk, root, RootOnly)
	if err == nil || !strings.Contains(err.Error(), "security; file '"+filepath.Join(outside, "kustomization.yaml")+"' is not in or below '"+root+"'") {
		t.Fatalf("FindKustomization = %v, want the restrictor's refusal naming the target and the root", err)
	}
	kf, err := FindKustomization(Disk, root, None)
	if err != nil || len(kf.K.Resources) != 1 {
		t.Fatalf("under LoadRestrictionsNone: %v, %v", kf, err)
	}
}

// A symlink to a kustomization file elsewhere under the root is fine.
func TestKustomizationFileSymlinkedInsideTheRootIsRead(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "k"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "k", "real.yaml"), []byte("resources:\n- cm.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.yaml", filepath.Join(root, "k", "kustomization.yaml")); err != nil {
		t.Skip("no symlinks:", err)
	}
	if _, err := FindKustomization(Disk, filepath.Join(root, "k"), RootOnly); err != nil {
		t.Fatal(err)
	}
}

// A resource file larger than the cap is refused, naming the file and the
// cap, without being read.
func TestResourceOverTheSizeCapIsRefused(t *testing.T) {
	root := t.TempDir()
	f, err := os.Create(filepath.Join(root, "big.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(300 << 20); err != nil { // sparse: nothing on disk
		t.Fatal(err)
	}
	f.Close()
	l, err := New(Disk, root, RootOnly)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = l.ReadFile("big.yaml")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "big.yaml")) || !strings.Contains(err.Error(), "256 MiB") {
		t.Fatalf("ReadFile = %v, want the file and the 256 MiB cap named", err)
	}
}

// dagTree makes a chart whose directories d0..d<depth> each hold a file and
// two symlinks to the next: 2^depth paths to the deepest file.
func dagTree(t *testing.T, depth int) string {
	t.Helper()
	root := t.TempDir()
	for i := 0; i <= depth; i++ {
		d := filepath.Join(root, "d"+strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f.yaml"), []byte("level: "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			prev := filepath.Join(root, "d"+strconv.Itoa(i-1))
			for _, l := range []string{"a", "b"} {
				if err := os.Symlink(d, filepath.Join(prev, l)); err != nil {
					t.Skip("no symlinks:", err)
				}
			}
		}
	}
	return root
}

// A chart whose symlinks form a DAG is read by every path, as helm reads
// it, up to MaxTreeEntries; past that, an error naming the tree instead of
// exponential time.
func TestReadTreeOfASymlinkDAG(t *testing.T) {
	root := dagTree(t, 3)
	l, err := New(Disk, root, RootOnly)
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := l.ReadTree("d0")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1+2+4+8 || files[len(files)-1].Rel != "f.yaml" || string(files[0].Data) != "level: 3\n" {
		t.Errorf("got %d files, first %q %q", len(files), files[0].Rel, files[0].Data)
	}

	root = dagTree(t, 16)
	if l, err = New(Disk, root, RootOnly); err != nil {
		t.Fatal(err)
	}
	_, _, err = l.ReadTree("d0")
	if err == nil || !strings.Contains(err.Error(), "more than 20000 files and directories") || !strings.Contains(err.Error(), filepath.Join(root, "d0")) {
		t.Fatalf("ReadTree = %v, want the entry cap named with the tree", err)
	}
}
