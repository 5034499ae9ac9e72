package output

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kpipe/kpipe/internal/resource"
)

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers never see a partial file.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	return nil
}

// IndividualFiles maps each resource to the file name kustomize gives it
// when `-o` names a directory: "<group>_<version>_<kind>_<name>.yaml" in
// lower case, prefixed by "<namespace>_" when the resources span more than
// one namespace (cluster-scoped objects never get a prefix). When two
// resources map to the same name the later one wins, as in kustomize.
func IndividualFiles(list []*resource.Resource) (names []string, files map[string]*resource.Resource) {
	namespaces := map[string]bool{}
	for _, r := range list {
		if !r.GVK().IsClusterScoped() {
			namespaces[r.ID().EffectiveNamespace()] = true
		}
	}
	files = map[string]*resource.Resource{}
	add := func(name string, r *resource.Resource) {
		if _, ok := files[name]; !ok {
			names = append(names, name)
		}
		files[name] = r
	}
	// Namespaced objects first, then cluster-scoped ones, as kustomize
	// writes them.
	for _, r := range list {
		if r.GVK().IsClusterScoped() {
			continue
		}
		name := fileName(r)
		if len(namespaces) > 1 {
			name = strings.ToLower(r.ID().EffectiveNamespace()) + "_" + name
		}
		add(name, r)
	}
	for _, r := range list {
		if r.GVK().IsClusterScoped() {
			add(fileName(r), r)
		}
	}
	return names, files
}

func fileName(r *resource.Resource) string {
	g := r.GVK()
	var parts []string
	for _, p := range []string{g.Group, g.Version, g.Kind} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.ToLower(strings.Join(parts, "_")) + "_" + strings.ToLower(r.Name()) + ".yaml"
}

// WriteDir writes one file per resource into dir (which must exist). All
// files are rendered before the first is written, so an encoding error
// leaves the directory untouched.
func WriteDir(dir string, list []*resource.Resource) error {
	names, files := IndividualFiles(list)
	rendered := make(map[string][]byte, len(names))
	for _, n := range names {
		b, err := MarshalOne(files[n])
		if err != nil {
			return err
		}
		rendered[n] = b
	}
	for _, n := range names {
		if err := WriteFileAtomic(filepath.Join(dir, n), rendered[n]); err != nil {
			return err
		}
	}
	return nil
}
