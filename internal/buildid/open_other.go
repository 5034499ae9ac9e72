//go:build !unix

package buildid

import "os"

func open(path string) (*os.File, error) { return os.Open(path) }
