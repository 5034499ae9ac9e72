// Package treecopy copies a checked-out repository's files to another
// directory, without its .git: what the benchmarks measure on is a copy
// of a fetched repository made into a git repository of their own.
//
// It imports only the standard library.
package treecopy

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Copy copies the regular files, directories and symlinks of src to dst
// (no .git) and returns the number of files (symlinks included).
func Copy(src, dst string) (int, error) {
	n := 0
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			n++
			return os.Symlink(l, target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n++
			return os.WriteFile(target, data, fi.Mode().Perm())
		}
		return nil
	})
	return n, err
}
