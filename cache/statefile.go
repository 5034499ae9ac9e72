package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
)

// The binary encoding of records (Store.Record) and of the engine's node
// manifests, written here rather than with encoding/gob: a warm build-all
// reads one record per root, and gob, whose decoder learns the types anew
// from every record, spent a quarter of such a run's CPU decoding them.
// Layout: a format byte, then the fields in order; a string is its length
// (uvarint) and bytes, a Key its 32 bytes, a list its length and items, a
// bool a 0 or 1 byte. An input's path is written as the length of the
// prefix it shares with the path before it and the rest, and its real
// path as the length of the prefix it shares with its path and the rest: a
// root's inputs are sorted directories' files, so most of a path is its
// neighbour's, and writing them whole made the records a third of what a
// cold build-all wrote to the cache. An input carries its stat (see
// Input), a content's name or the fields.

// Encoder writes the binary encoding of cache records (and of the
// engine's node manifests): a string is its length (uvarint) and bytes, a
// Key its 32 bytes, a bool one byte. Written here rather than with gob,
// whose decoder learns the types anew from every value it reads.
type Encoder struct{ buf []byte }

// NewEncoder starts an encoding with a format byte.
func NewEncoder(format byte) *Encoder { return &Encoder{buf: []byte{format}} }

// Bytes returns the encoding so far.
func (w *Encoder) Bytes() []byte { return w.buf }

// Reserve makes room for n more bytes and for the inputs of lists as
// Inputs writes them (their paths after the prefixes they share), so that
// a record whose size is known up front is written into one buffer.
func (w *Encoder) Reserve(n int, lists ...[]Input) {
	for _, l := range lists {
		prev := ""
		for _, in := range l {
			n += len(in.Path) - commonPrefix(prev, in.Path) + len(in.Real) - commonPrefix(in.Path, in.Real) + sha256.Size + 6 + 36 // 36: a stat
			prev = in.Path
		}
	}
	w.buf = slices.Grow(w.buf, n)
}

// Uint writes a count or length.
func (w *Encoder) Uint(n int) { w.buf = binary.AppendUvarint(w.buf, uint64(n)) }

// Key writes a key's 32 bytes.
func (w *Encoder) Key(k Key) { w.buf = append(w.buf, k[:]...) }

// String writes a string.
func (w *Encoder) String(s string) {
	w.Uint(len(s))
	w.buf = append(w.buf, s...)
}

// Bool writes ok and returns it.
func (w *Encoder) Bool(ok bool) bool {
	if ok {
		w.buf = append(w.buf, 1)
	} else {
		w.buf = append(w.buf, 0)
	}
	return ok
}

// Strings writes a list of strings.
func (w *Encoder) Strings(l []string) {
	w.Uint(len(l))
	for _, s := range l {
		w.String(s)
	}
}

// Inputs writes a list of inputs (with their stats).
func (w *Encoder) Inputs(l []Input) {
	w.Uint(len(l))
	prev := ""
	for _, in := range l {
		w.shared(prev, in.Path)
		w.shared(in.Path, in.Real) // most paths are their own real path
		w.Key(in.Digest)
		w.stat(in.stat)
		prev = in.Path
	}
}

// stat writes an input's stat (Input.stat): a 0 byte when there is none,
// a 2 and the content's name for a name (ContentID), else a 1 and the
// fields, the times as differences from the modification time (most are
// small).
func (w *Encoder) stat(e fileStat) {
	switch {
	case e.Recorded == 0:
		w.buf = append(w.buf, 0)
		return
	case e.ID != "":
		w.buf = append(w.buf, 2)
		w.String(e.ID)
		return
	}
	w.buf = append(w.buf, 1)
	w.buf = binary.AppendVarint(w.buf, e.Size)
	w.buf = binary.AppendVarint(w.buf, e.ModNano)
	w.buf = binary.AppendVarint(w.buf, e.CtimeNano-e.ModNano)
	w.buf = binary.AppendUvarint(w.buf, e.Inode)
	w.buf = binary.AppendUvarint(w.buf, e.Dev)
	w.buf = binary.AppendVarint(w.buf, e.Recorded-e.ModNano)
}

// shared writes s as the length of the prefix it shares with base and
// the rest of s.
func (w *Encoder) shared(base, s string) {
	n := commonPrefix(base, s)
	w.Uint(n)
	w.String(s[n:])
}

// commonPrefix is the length of the longest prefix a and b share.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Decoder reads what an Encoder wrote. Any defect (a length past the end,
// a bool that is neither 0 nor 1) makes every later read a zero value and
// Done false.
type Decoder struct {
	buf []byte
	bad bool
}

// NewDecoder starts reading data, whose first byte must be format.
func NewDecoder(data []byte, format byte) *Decoder {
	if len(data) == 0 || data[0] != format {
		return &Decoder{bad: true}
	}
	return &Decoder{buf: data[1:]}
}

// Done reports whether everything was read without a defect.
func (r *Decoder) Done() bool { return !r.bad && len(r.buf) == 0 }

// Uint reads a count or length; one past the bytes left is a defect
// (every item takes at least one byte).
func (r *Decoder) Uint() int {
	n := r.uvarint()
	if n > uint64(len(r.buf)) {
		r.bad = true
		return 0
	}
	return int(n)
}

func (r *Decoder) take(n int) []byte {
	if r.bad || n > len(r.buf) {
		r.bad = true
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

// Key reads a key.
func (r *Decoder) Key() Key {
	var k Key
	copy(k[:], r.take(len(k)))
	return k
}

// String reads a string.
func (r *Decoder) String() string { return string(r.take(r.Uint())) }

// Bool reads a bool.
func (r *Decoder) Bool() bool {
	b := r.take(1)
	if len(b) == 1 && b[0] > 1 {
		r.bad = true
	}
	return len(b) == 1 && b[0] == 1
}

// Strings reads what Encoder.Strings wrote.
func (r *Decoder) Strings() []string {
	n := r.Uint()
	if n == 0 {
		return nil
	}
	l := make([]string, 0, n)
	for i := 0; i < n && !r.bad; i++ {
		l = append(l, r.String())
	}
	return l
}

// Inputs reads what Encoder.Inputs wrote.
func (r *Decoder) Inputs() []Input {
	n := r.Uint()
	if n == 0 {
		return nil
	}
	l := make([]Input, 0, n)
	prev := ""
	for i := 0; i < n && !r.bad; i++ {
		var in Input
		in.Path = r.shared(prev)
		in.Real = r.shared(in.Path)
		in.Digest = r.Key()
		in.stat = r.stat()
		l = append(l, in)
		prev = in.Path
	}
	return l
}

// shared reads what Encoder.shared wrote against base; a prefix longer
// than base is a defect.
func (r *Decoder) shared(base string) string {
	// Not Uint: a prefix may be longer than what is left to read.
	n := r.uvarint()
	if n > uint64(len(base)) {
		r.bad = true
		return ""
	}
	rest := r.take(r.Uint())
	if len(rest) == 0 {
		return base[:n] // no copy: most real paths are their paths
	}
	return base[:n] + string(rest)
}

// Keys reads a count and that many keys.
func (r *Decoder) Keys() []Key {
	n := r.Uint()
	if n == 0 || n > len(r.buf)/sha256.Size {
		if n != 0 {
			r.bad = true
		}
		return nil
	}
	ks := make([]Key, n)
	for i := range ks {
		ks[i] = r.Key()
	}
	return ks
}

// stat reads what Encoder.stat wrote.
func (r *Decoder) stat() fileStat {
	var e fileStat
	switch b := r.take(1); {
	case r.bad || b[0] == 0:
		return e
	case b[0] == 2:
		e.ID = r.String()
		e.Recorded = 1 // (known: a name needs no time)
		if e.ID == "" {
			r.bad = true
		}
		return e
	case b[0] != 1:
		r.bad = true
		return e
	}
	e.Size = r.varint()
	e.ModNano = r.varint()
	e.CtimeNano = e.ModNano + r.varint()
	e.Inode = r.uvarint()
	e.Dev = r.uvarint()
	e.Recorded = e.ModNano + r.varint()
	if e.Recorded == 0 {
		r.bad = true
	}
	return e
}

// varint reads what binary.AppendVarint wrote: a uvarint holding the
// number zigzag-encoded.
func (r *Decoder) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *Decoder) uvarint() uint64 {
	n, size := binary.Uvarint(r.buf)
	if r.bad || size <= 0 {
		r.bad = true
		return 0
	}
	r.buf = r.buf[size:]
	return n
}
