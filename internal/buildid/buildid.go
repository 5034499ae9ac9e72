// Package buildid reads the Go build ID of an executable: the identity
// kpipe salts its cache keys with, so that two different kpipe binaries
// (or two programs embedding different kpipe code) never share entries.
// It imports only the standard library.
package buildid

import (
	"bytes"
	"debug/elf"
)

// GoBuildID returns the Go build ID stored in the ELF executable at path
// (what `go tool buildid` prints), or "" when there is none. Its last
// part is the toolchain's hash of the linked binary, so two different
// binaries have different IDs; reading it costs a few kilobytes where
// hashing the whole executable costs tens of megabytes.
func GoBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	data, err := s.Data()
	if err != nil || len(data) < 16 {
		return ""
	}
	// An ELF note: name size, description size, type, then the name
	// ("Go\x00\x00") and the description (the ID), each 4-byte aligned.
	order := f.ByteOrder
	namesz, descsz, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
	nameEnd := 12 + (namesz+3)&^3
	if typ != 4 || uint64(nameEnd)+uint64(descsz) > uint64(len(data)) || !bytes.HasPrefix(data[12:], []byte("Go\x00")) {
		return ""
	}
	return string(data[nameEnd : nameEnd+descsz])
}
