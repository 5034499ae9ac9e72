package output

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/resource"
)

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers never see a partial file. The file
// gets the permissions os.WriteFile would give it (0666 less the umask),
// as kustomize's own output files do.
func WriteFileAtomic(path string, data []byte) error {
	dir, base := filepath.Split(path)
	var tmp string
	var err error
	for try := 0; try < 100; try++ {
		tmp = filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		err = writeNew(tmp, data, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
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

// plainName fails unless name is a plain file name: no path separator
// (either slash, on every platform), no NUL, not absolute, no volume.
// Written straight into the directory, such a name cannot leave it nor pass
// through a symlinked directory inside it (and a rename replaces a
// symlinked file rather than writing through it).
func plainName(name string) error {
	if strings.ContainsAny(name, "/\\\x00") || filepath.IsAbs(name) || filepath.VolumeName(name) != "" || name == "." || name == ".." {
		return fmt.Errorf("is not a plain file name")
	}
	return nil
}

// WriteDir writes one file per resource into dir (which must exist). All
// files are rendered before the first is written, so an encoding error
// leaves the directory untouched. A resource whose file name would not be a
// plain name in dir (a name, kind or namespace with '/', '\\' or a NUL:
// `name: ../../etc/x`) is an error naming the resource, before anything is
// written; kustomize writes such a file outside the directory.
func WriteDir(dir string, list []*resource.Resource) error {
	names, files := IndividualFiles(list)
	for _, n := range names {
		if err := plainName(n); err != nil {
			return fmt.Errorf("-o %s: resource %s would be written to '%s', which %v: kpipe writes only directly into the directory it is given", dir, files[n].ID(), n, err)
		}
	}
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
