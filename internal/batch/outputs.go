package batch

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/internal/output"
)

// OutputName maps a root directory to its output file under the output
// directory: the root's path relative to cwd plus ".yaml" ("_root.yaml"
// for cwd itself), or, for a root outside cwd, its absolute path without
// the leading separator (and a volume's colon) plus ".yaml".
func OutputName(cwd, root string) string {
	rel, err := filepath.Rel(cwd, root)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = strings.TrimPrefix(root, filepath.VolumeName(root))
		rel = strings.TrimPrefix(rel, string(filepath.Separator))
		if v := filepath.VolumeName(root); v != "" {
			rel = filepath.Join(strings.TrimSuffix(v, ":"), rel)
		}
	}
	if rel == "." {
		return "_root.yaml"
	}
	return rel + ".yaml"
}

// checkOutputNames fails naming both roots when two roots would write
// the same output name (OutputName; ignoring case: a root named
// _root and the current directory; a root inside and one outside the
// current directory with the same path tail), so that no output is ever
// overwritten by another root's.
func checkOutputNames(cwd string, roots []string) error {
	owner := make(map[string]string, len(roots))
	for _, root := range roots {
		name := OutputName(cwd, root)
		key := strings.ToLower(filepath.Clean(name)) // case-insensitive file systems
		if other, ok := owner[key]; ok && other != root {
			return fmt.Errorf("roots %s and %s would both write %s: build them in separate runs or with separate --out-dir", other, root, name)
		}
		owner[key] = root
	}
	return nil
}

// orphans lists the .yaml files under outDir (relative, with slashes,
// sorted) that are no root's output: outputs of roots that are gone, for
// --check. kpipe's own state files and other files are not listed.
func orphans(outDir string, live []string, outputOf func(string) string) []string {
	want := make(map[string]bool, len(live))
	for _, r := range live {
		want[outputOf(r)] = true
	}
	var list []string
	_ = filepath.WalkDir(outDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(p, ".yaml") || want[p] {
			return nil
		}
		if rel, err := filepath.Rel(outDir, p); err == nil {
			list = append(list, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(list)
	return list
}

// writeIfChanged writes data to path atomically unless the file already
// holds exactly data, and says whether it wrote. The file there is read
// as kpipe's own (fsread.Own): a symlink, anything but a regular file and
// a file longer than data are not read, and are replaced.
func writeIfChanged(path string, data []byte) (bool, error) {
	if old, err := fsread.Own(path, int64(len(data))); err == nil && string(old) == string(data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, output.WriteFileAtomic(path, data)
}
