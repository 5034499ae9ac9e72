//go:build !unix

package cache

// overwrite replaces the file at path with data (see overwrite_unix.go;
// here, always through a temporary file and a rename).
func overwrite(path string, data []byte) error { return writeWhole(path, data) }
