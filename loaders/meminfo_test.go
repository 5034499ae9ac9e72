package loaders

import "testing"

// A file held in memory is named by its bytes: the same bytes share the
// name, and a change that keeps the size and the file name does not.
func TestMemFileInfoNamesContent(t *testing.T) {
	id := func(name, data string) string {
		fi := MemFileInfo(name, []byte(data))
		if fi.Name() != name || fi.Size() != int64(len(data)) || !fi.Mode().IsRegular() || fi.IsDir() {
			t.Fatalf("stat of %q: name %q size %d mode %v", data, fi.Name(), fi.Size(), fi.Mode())
		}
		c, ok := fi.Sys().(interface{ ContentID() string })
		if !ok {
			t.Fatalf("stat of %q names no content", data)
		}
		return c.ContentID()
	}
	a := id("kustomization.yaml", "resources:\n- a.yaml\n")
	if b := id("kustomization.yaml", "resources:\n- a.yaml\n"); a != b {
		t.Errorf("the same bytes, two names: %s, %s", a, b)
	}
	if c := id("kustomization.yaml", "resources:\n- b.yaml\n"); a == c {
		t.Errorf("other bytes of the same size share the name %s", a)
	}
}
