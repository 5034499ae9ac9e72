package buildid

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoBuildID checks that the build ID read from the test binary is the
// one the Go toolchain reports for it, and that a file without one gives "".
func TestGoBuildID(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want, err := exec.Command(goTool, "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	if got := GoBuildID(exe); got == "" || got != strings.TrimSpace(string(want)) {
		t.Errorf("goBuildID = %q, go tool buildid says %q", got, strings.TrimSpace(string(want)))
	}
	if got := GoBuildID("../../testdata/examples/prod.expected.yaml"); got != "" {
		t.Errorf("goBuildID of a YAML file = %q, want empty", got)
	}
}

// synthELF lays out an ELF file of the given class (1: 32-bit, 2: 64-bit)
// and byte order whose only program header is a PT_NOTE at noteOff,
// holding another vendor's note and then Go's with id.
func synthELF(class byte, order interface {
	binary.ByteOrder
	binary.AppendByteOrder
}, noteOff int, id string) []byte {
	note := func(name string, typ uint32, desc string) []byte {
		var b []byte
		b = order.AppendUint32(b, uint32(len(name)))
		b = order.AppendUint32(b, uint32(len(desc)))
		b = order.AppendUint32(b, typ)
		b = append(b, name...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		b = append(b, desc...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	notes := append(note("GNU\x00", 3, "0123456789abcdef0123"), note("Go\x00\x00", 4, id)...)
	file := make([]byte, noteOff+len(notes))
	copy(file[noteOff:], notes)
	copy(file, "\x7fELF")
	file[4] = class
	file[5] = 1
	if order == binary.BigEndian {
		file[5] = 2
	}
	if class == 1 {
		const phoff, phentsize = 52, 32
		order.PutUint32(file[28:], phoff)
		order.PutUint16(file[42:], phentsize)
		order.PutUint16(file[44:], 1)
		order.PutUint32(file[phoff:], 4)
		order.PutUint32(file[phoff+4:], uint32(noteOff))
		order.PutUint32(file[phoff+16:], uint32(len(notes)))
	} else {
		const phoff, phentsize = 64, 56
		order.PutUint64(file[32:], phoff)
		order.PutUint16(file[54:], phentsize)
		order.PutUint16(file[56:], 1)
		order.PutUint32(file[phoff:], 4)
		order.PutUint64(file[phoff+8:], uint64(noteOff))
		order.PutUint64(file[phoff+32:], uint64(len(notes)))
	}
	return file
}

// The note is found for either class and byte order, near the start or
// past the first read; a file cut inside the note, or not ELF, gives "".
func TestGoBuildIDLayouts(t *testing.T) {
	const id = "abc/def/ghi/jkl"
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		class byte
		order interface {
			binary.ByteOrder
			binary.AppendByteOrder
		}
		noteOff int
	}{
		{"elf64-le-near", 2, binary.LittleEndian, 0x1000},
		{"elf32-be-near", 1, binary.BigEndian, 200},
		{"elf64-be-far", 2, binary.BigEndian, 3 * headSize},
		{"elf32-le-far", 1, binary.LittleEndian, headSize - 8},
	} {
		file := synthELF(c.class, c.order, c.noteOff, id)
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := GoBuildID(path); got != id {
			t.Errorf("%s: GoBuildID = %q, want %q", c.name, got, id)
		}
		cut := path + ".cut"
		if err := os.WriteFile(cut, file[:len(file)-6], 0o644); err != nil {
			t.Fatal(err)
		}
		if got := GoBuildID(cut); got != "" {
			t.Errorf("%s cut short: GoBuildID = %q, want empty", c.name, got)
		}
	}
	if got := GoBuildID(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("a missing file: %q", got)
	}
}
