//go:build !unix

package fsread

import "os"

// open opens path for reading. The stat of what was opened refuses what
// is not a regular file before anything is read.
func open(path string, follow bool) (*os.File, error) { return os.Open(path) }

// openRefusesSymlinks: open follows symlinks here, so a caller that must
// not follow one looks first.
const openRefusesSymlinks = false
