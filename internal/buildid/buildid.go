// Package buildid reads the Go build ID of an executable: the identity
// kpipe salts its cache keys with, so that two different kpipe binaries
// (or two programs embedding different kpipe code) never share entries.
// It imports only the standard library.
package buildid

import (
	"bytes"
	"encoding/binary"
	"io"
)

// headSize is how much of the file GoBuildID reads in one go: the Go
// linker puts the build ID note right after the ELF headers, in the first
// few kilobytes.
const headSize = 16 << 10

// GoBuildID returns the Go build ID stored in the ELF executable at path
// (what `go tool buildid` prints), or "" when there is none. Its last
// part is the toolchain's hash of the linked binary, so two different
// binaries have different IDs; reading it costs a few kilobytes where
// hashing the whole executable costs tens of megabytes.
//
// It reads the ELF header and the PT_NOTE program headers itself, with
// one read where the note sits near the start as the Go linker puts it,
// rather than through debug/elf, which reads every section header and
// whose package brings zlib and zstd decoders into every kpipe process
// (some 0.4 ms of a warm 20 ms `kpipe build`).
func GoBuildID(path string) string {
	f, err := open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, headSize)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return ""
	}
	return fromELF(f, head[:n])
}

// fromELF finds the Go build ID note through the program headers of the
// ELF file f, whose first bytes are head.
func fromELF(f io.ReaderAt, head []byte) string {
	if len(head) < 52 || !bytes.HasPrefix(head, []byte("\x7fELF")) {
		return ""
	}
	var order binary.ByteOrder
	switch head[5] { // EI_DATA
	case 1:
		order = binary.LittleEndian
	case 2:
		order = binary.BigEndian
	default:
		return ""
	}
	// Where the program headers are, and the offset and size fields of
	// one, for ELFCLASS32 and ELFCLASS64.
	var phoff, phentsize, phnum uint64
	var offAt, sizeAt, wordSize int
	switch head[4] { // EI_CLASS
	case 1:
		phoff = uint64(order.Uint32(head[28:]))
		phentsize, phnum = uint64(order.Uint16(head[42:])), uint64(order.Uint16(head[44:]))
		offAt, sizeAt, wordSize = 4, 16, 4
	case 2:
		if len(head) < 64 {
			return ""
		}
		phoff = order.Uint64(head[32:])
		phentsize, phnum = uint64(order.Uint16(head[54:])), uint64(order.Uint16(head[56:]))
		offAt, sizeAt, wordSize = 8, 32, 8
	default:
		return ""
	}
	if phentsize < uint64(sizeAt+wordSize) || phnum > 256 {
		return ""
	}
	word := func(b []byte) uint64 {
		if wordSize == 4 {
			return uint64(order.Uint32(b))
		}
		return order.Uint64(b)
	}
	table, ok := readAt(f, head, phoff, phentsize*phnum)
	if !ok {
		return ""
	}
	const ptNote = 4
	for i := uint64(0); i < phnum; i++ {
		ph := table[i*phentsize:]
		if order.Uint32(ph) != ptNote {
			continue
		}
		off, size := word(ph[offAt:]), word(ph[sizeAt:])
		if size > 1<<20 {
			continue
		}
		notes, ok := readAt(f, head, off, size)
		if !ok {
			continue
		}
		if id, ok := goNote(notes, order); ok {
			return id
		}
	}
	return ""
}

// readAt returns size bytes of f at off: from head when they lie in it.
func readAt(f io.ReaderAt, head []byte, off, size uint64) ([]byte, bool) {
	if off+size < off {
		return nil, false
	}
	if off+size <= uint64(len(head)) {
		return head[off : off+size], true
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, int64(off)); err != nil {
		return nil, false
	}
	return b, true
}

// goNote finds, among the ELF notes in b, the one the Go linker writes:
// name "Go", type 4, the build ID as its description. Each note is a name
// size, a description size and a type, then the name and the description,
// each padded to 4 bytes.
func goNote(b []byte, order binary.ByteOrder) (string, bool) {
	for len(b) >= 12 {
		namesz, descsz, typ := uint64(order.Uint32(b)), uint64(order.Uint32(b[4:])), order.Uint32(b[8:])
		nameEnd := 12 + (namesz+3)&^3
		descEnd := nameEnd + (descsz+3)&^3
		if nameEnd > uint64(len(b)) || nameEnd+descsz > uint64(len(b)) {
			return "", false
		}
		if typ == 4 && namesz == 4 && bytes.Equal(b[12:16], []byte("Go\x00\x00")) {
			return string(b[nameEnd : nameEnd+descsz]), true
		}
		if descEnd >= uint64(len(b)) {
			return "", false
		}
		b = b[descEnd:]
	}
	return "", false
}
