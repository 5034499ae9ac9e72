package argocdtest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kpipe/kpipe/internal/argocd/render"
)

// Helm returns kpipe's pinned helm v3.10.2, or skips t naming the
// install step.
func Helm(t testing.TB) string {
	home, _ := os.UserHomeDir()
	h := filepath.Join(home, ".cache/kpipe-ci/helm-v3.10.2/helm")
	if _, err := os.Stat(h); err != nil {
		t.Skipf("%s missing: run .ci/run once (it installs helm v3.10.2 under ~/.cache/kpipe-ci)", h)
	}
	return h
}

// trees are the repositories of the cases as render.Trees, one each (a
// Tree checks its symlinks once).
type trees struct {
	mu sync.Mutex
	m  map[string]*render.Tree
}

func (ts *trees) get(dir string) (*render.Tree, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.m[dir]; ok {
		return t, nil
	}
	t, err := render.DiskTree(dir)
	if err != nil {
		return nil, err
	}
	ts.m[dir] = t
	return t, nil
}
