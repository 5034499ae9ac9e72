package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// kpipe cache prune --max-size below what the cache's own directories and
// state files take removes every entry and says that the bound was not
// reached, and why; a bound it meets is quiet. cache stats says what its
// counts are.
func TestCachePruneSaysWhenTheBoundIsNotMet(t *testing.T) {
	tree := t.TempDir()
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("a%d/kustomization.yaml", i)] = fmt.Sprintf("resources:\n- cm.yaml\nnamePrefix: p%d-\n", i)
		files[fmt.Sprintf("a%d/cm.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n", i)
	}
	writeFiles(t, tree, files)
	cache := filepath.Join(t.TempDir(), "cache")
	if code, _, stderr := kpipe(t, "build-all", tree, "--cache-dir", cache); code != 0 {
		t.Fatalf("build-all: exit %d\n%s", code, stderr)
	}
	_, stats, _ := kpipe(t, "cache", "stats", "--cache-dir", cache)
	// (Each root: its manifest and its output.)
	if !strings.Contains(stats, "entries:   60 (values up to 16 KiB inline;") {
		t.Errorf("cache stats:\n%s", stats)
	}
	code, out, stderr := kpipe(t, "cache", "prune", "--max-size", "1KB", "--cache-dir", cache)
	if code != 0 || !strings.HasPrefix(out, "removed 60 entries; ") ||
		!strings.Contains(stderr, "still over the 1000 B asked for") || !strings.Contains(stderr, "directories and state files, which pruning keeps (0 entries left)") {
		t.Errorf("prune below the floor: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out, stderr = kpipe(t, "cache", "prune", "--max-size", "1GB", "--cache-dir", cache)
	if code != 0 || !strings.HasPrefix(out, "removed 0 entries; ") || stderr != "" {
		t.Errorf("prune within the bound: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}
