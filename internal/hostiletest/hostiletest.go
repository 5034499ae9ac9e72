// Package hostiletest reads the hostile trees of testdata/hostile (see its
// README.md) for the tests that build them: the CLI's catalogue
// (cmd/kpipe) and the engine's build of each through every read seam
// (internal/engine). It is for tests only, and imports nothing of kpipe.
package hostiletest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/tools/txtar"
)

// A Case is one tree: the header lines of its txtar file and its files.
type Case struct {
	// Name is the file's name without .txtar.
	Name string
	// Desc is the header's "# " line: what the tree does.
	Desc string
	// Want is "ok" or a part of the error kpipe must give.
	Want string
	// Kustomize is what kustomize v5.8.2 does: "fails", "same" or
	// "stricter: WHY".
	Kustomize string
	// Args are the build's extra arguments (ABS stands for the tree's
	// directory, OUTDIR for its out/ directory).
	Args []string
	// Setup are the steps Write takes after writing the files: "rm P",
	// "symlink P TARGET", "fifo P".
	Setup []string
	// Files are the tree's files by slash path (ABS in them stands for
	// the tree's directory).
	Files map[string][]byte

	outside map[string][]byte
}

// ErrUnsupported wraps what a setup step cannot make on this system (a
// symlink, a FIFO or a device on Windows): the case is to be skipped.
var ErrUnsupported = errors.ErrUnsupported

// Load reads every case of dir (testdata/hostile), each with dir/outside's
// files to write beside it.
func Load(dir string) ([]Case, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no cases in %s", dir)
	}
	outside := map[string][]byte{}
	shared, err := filepath.Glob(filepath.Join(dir, "outside", "*"))
	if err != nil {
		return nil, err
	}
	for _, p := range shared {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		outside["outside/"+filepath.Base(p)] = b
	}
	var cases []Case
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			return nil, err
		}
		c := Case{Name: strings.TrimSuffix(filepath.Base(p), ".txtar"), Files: map[string][]byte{}, outside: outside}
		for _, f := range a.Files {
			c.Files[f.Name] = f.Data
		}
		for _, line := range strings.Split(string(a.Comment), "\n") {
			k, v, _ := strings.Cut(line, ": ")
			switch {
			case strings.HasPrefix(line, "# "):
				c.Desc = line[2:]
			case k == "want":
				c.Want = v
			case k == "kustomize":
				c.Kustomize = v
			case k == "args":
				c.Args = strings.Fields(v)
			case k == "setup":
				c.Setup = append(c.Setup, v)
			}
		}
		if c.Want == "" || c.Kustomize == "" {
			return nil, fmt.Errorf("%s: a case needs want: and kustomize: lines", p)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// Write writes the case's tree, with testdata/hostile/outside beside it,
// under dir, and takes its setup steps. diskOnly is true when the tree
// holds what only a disk can (a FIFO, a link to a device). An error
// wrapping ErrUnsupported means this system cannot make the tree.
func (c Case) Write(dir string) (diskOnly bool, err error) {
	files := map[string][]byte{}
	for p, b := range c.outside {
		files[p] = b
	}
	for p, b := range c.Files {
		files[p] = bytes.ReplaceAll(b, []byte("ABS"), []byte(filepath.ToSlash(dir)))
	}
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return false, err
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			return false, err
		}
	}
	for _, s := range c.Setup {
		f := strings.Fields(s)
		if len(f) < 2 {
			return false, fmt.Errorf("setup %q: no path", s)
		}
		p := filepath.Join(dir, filepath.FromSlash(f[1]))
		var err error
		switch {
		case f[0] == "rm":
			err = os.Remove(p)
		case f[0] == "symlink" && len(f) == 3:
			if runtime.GOOS == "windows" && strings.HasPrefix(f[2], "/dev/") {
				return false, fmt.Errorf("setup %q: no devices on windows: %w", s, ErrUnsupported)
			}
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Symlink(filepath.FromSlash(f[2]), p)
			}
			if err != nil && runtime.GOOS == "windows" {
				return false, fmt.Errorf("setup %q: no symlinks: %v: %w", s, err, ErrUnsupported)
			}
			diskOnly = diskOnly || strings.HasPrefix(f[2], "/dev/")
		case f[0] == "fifo":
			if runtime.GOOS == "windows" {
				return false, fmt.Errorf("setup %q: no FIFOs on windows: %w", s, ErrUnsupported)
			}
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = exec.Command("mkfifo", p).Run()
			}
			diskOnly = true
		default:
			return false, fmt.Errorf("unknown setup %q", s)
		}
		if err != nil {
			return false, fmt.Errorf("setup %q: %w", s, err)
		}
	}
	return diskOnly, nil
}
