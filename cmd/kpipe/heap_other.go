//go:build !linux

package main

// hugeHeap does nothing where transparent huge pages are not Linux's
// madvise (see heap_linux.go); it reports false.
func hugeHeap(size int) bool { return false }
