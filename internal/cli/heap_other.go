//go:build !linux

package cli

// hugeHeap does nothing where transparent huge pages are not Linux's
// madvise (see heap_linux.go).
func hugeHeap(size int) {}
