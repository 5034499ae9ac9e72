package fnrun

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	gitignore "github.com/monochromegane/go-gitignore"
	"go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/loaders"
)

// ignoreFile lists files and directories of a package fn run leaves alone
// (gitignore syntax), as kustomize's `.krmignore`.
const ignoreFile = ".krmignore"

// matchGlobs are the file names fn run reads.
var matchGlobs = []string{"*.yaml", "*.yml", "*.json"}

// readPackage reads every object of the package at abs (an absolute
// directory, or a file: a package of that file alone) as kyaml's
// LocalPackageReader does: files matching
// matchGlobs, in lexical walk order (hidden ones included), except what
// .krmignore excludes; each document an object annotated with its file
// (relative to the directory) and index. files are the files that held an
// object.
func readPackage(abs string) (nodes []*yaml.Node, files map[string]bool, err error) {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, nil, fmt.Errorf("evalsymlink failure on '%s' : %w", filepath.ToSlash(abs), err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, nil, err
	}
	// A file names a package of that file alone, in its directory.
	root := real
	var ignore gitignore.IgnoreMatcher = gitignore.DummyIgnoreMatcher(false)
	if st.IsDir() {
		if ignore, err = readIgnoreFile(real); err != nil {
			return nil, nil, err
		}
	} else {
		root = filepath.Dir(real)
	}
	set := map[string]string{}
	err = filepath.Walk(real, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == real && info.IsDir() {
			return nil
		}
		if info.IsDir() {
			if ignore.Match(p, true) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return fmt.Errorf("%s: %w", root, err)
		}
		if ignore.Match(p, false) || !matches(filepath.Base(p)) {
			return nil
		}
		set[PathAnnotation] = rel
		set[LegacyPathAnnotation] = rel
		data, err := fsread.File(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		got, err := (&reader{set: set}).read(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		nodes = append(nodes, got...)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	files = map[string]bool{}
	for _, n := range nodes {
		files[pathOf(n)] = true
	}
	return nodes, files, nil
}

// readIgnoreFile reads the package's .krmignore (a matcher of nothing when
// there is none).
func readIgnoreFile(dir string) (gitignore.IgnoreMatcher, error) {
	f, err := os.Open(filepath.Join(dir, ignoreFile))
	if errors.Is(err, fs.ErrNotExist) {
		return gitignore.DummyIgnoreMatcher(false), nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return gitignore.NewGitIgnoreFromReader(dir, f), nil
}

func matches(base string) bool {
	for _, g := range matchGlobs {
		if ok, _ := filepath.Match(g, base); ok {
			return true
		}
	}
	return false
}

// writePackage writes the objects back to the package at abs as kyaml's
// LocalPackageReadWriter does (each file its objects in index order, the
// runner's annotations removed; objects without a path get
// [namespace/]kind_name.yaml, without an index the next of their file) and
// removes the files read (files) that hold no object any more. Everything is
// checked and rendered before the first write: a path that is absolute or
// holds "..", names a directory, or leads out of the package through a
// symlink is an error and nothing is written. A file is written whole
// (temporary file and rename, keeping its permissions; new files get 0666
// less the umask) and only when its bytes change; a symlinked file inside
// the package is written at its target.
func writePackage(abs string, files map[string]bool, nodes []*yaml.Node, res *Result) error {
	newFiles := map[string]bool{}
	for _, n := range nodes {
		newFiles[pathOf(n)] = true
	}
	if err := defaultPathAndIndexAnnotation(nodes); err != nil {
		return err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("could not write to %q: %w", abs, fs.ErrNotExist)
	}
	if !st.IsDir() {
		// A file's objects go back to its directory. kpipe removes no file
		// then: kustomize tries to remove the emptied file at FILE/FILE and
		// fails ("not a directory") after writing the others.
		abs, files = filepath.Dir(abs), nil
	}
	for _, n := range nodes {
		for _, a := range []string{IndexAnnotation, PathAnnotation} {
			v, err := annotationNode(n, a)
			if err != nil {
				return err
			}
			if v == nil || v.Value == "" {
				return fmt.Errorf("resources must be annotated with %s to be written to files", a)
			}
		}
	}
	byFile := map[string][]*yaml.Node{}
	for _, n := range nodes {
		v, _ := annotationNode(n, PathAnnotation)
		p := v.Value
		byFile[p] = append(byFile[p], n)
		if filepath.IsAbs(p) {
			return errors.New("package paths may not be absolute paths")
		}
		if strings.Contains(filepath.Clean(p), "..") {
			return fmt.Errorf("resource must be written under package %s: %s", abs, filepath.Clean(p))
		}
	}
	var realRoot string
	paths := make([]string, 0, len(byFile))
	for p := range byFile {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	realRoot, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	rendered := map[string][]byte{}
	targets := map[string]string{}
	for _, p := range paths {
		if err := sortNodes(byFile[p]); err != nil {
			return err
		}
		full := filepath.Join(abs, p)
		if st, err := os.Stat(full); err == nil && st.IsDir() {
			return fmt.Errorf("config.kubernetes.io/path cannot be a directory: %s", p)
		}
		target, err := writeTarget(realRoot, filepath.Join(realRoot, p))
		if err != nil {
			return &loaders.Hinted{
				Hint: fmt.Sprintf("the path annotation %q of an object leads out of %s through a symlink (to %s); kpipe does not write there", p, abs, target),
				Err:  fmt.Errorf("resource must be written under package %s: %s", abs, filepath.Clean(p)),
			}
		}
		targets[p] = target
		var buf bytes.Buffer
		if err := (writer{clear: []string{PathAnnotation, LegacyPathAnnotation}}).write(&buf, byFile[p]); err != nil {
			return err
		}
		rendered[p] = buf.Bytes()
	}
	for _, p := range paths {
		target := targets[p]
		if old, err := os.ReadFile(target); err == nil && bytes.Equal(old, rendered[p]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o777); err != nil {
			return err
		}
		if err := writeKeepingMode(target, rendered[p]); err != nil {
			return err
		}
		res.Written = append(res.Written, filepath.ToSlash(p))
	}
	var gone []string
	for f := range files {
		if !newFiles[f] {
			gone = append(gone, f)
		}
	}
	sort.Strings(gone)
	for _, f := range gone {
		if err := os.Remove(filepath.Join(abs, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		res.Removed = append(res.Removed, filepath.ToSlash(f))
	}
	return nil
}

// writeTarget is where the file full is written: itself, or, for a
// symlink, what it points to; full's directories, symlinks resolved, and
// the target must lie inside realRoot (absolute, symlink-free). On error
// it returns where the path led.
func writeTarget(realRoot, full string) (string, error) {
	dir, rest := filepath.Dir(full), filepath.Base(full)
	for {
		if _, err := os.Lstat(dir); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir, errors.New("no existing directory")
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return dir, err
	}
	target := filepath.Join(real, rest)
	if st, err := os.Lstat(target); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		if t, err := filepath.EvalSymlinks(target); err == nil {
			target = t
		}
	}
	if !loaders.Within(realRoot, target) {
		return target, errors.New("outside")
	}
	return target, nil
}

// writeKeepingMode writes data to path whole (a temporary file renamed
// over it); an existing file keeps its permission bits, a new one gets
// 0666 less the umask, as os.WriteFile (kustomize's write) leaves them.
func writeKeepingMode(path string, data []byte) error {
	st, err := os.Stat(path)
	if err != nil {
		return output.WriteFileAtomic(path, data)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, st.Mode().Perm())
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
