package cache

import (
	"crypto/sha256"
	"errors"
	"io"

	"github.com/kpipe/kpipe/internal/fsread"
)

// streamChunk is how much of a big entry Open holds in memory at once.
// Reading a big entry into a buffer of its size costs a page fault for
// every 4 KiB of the buffer, the first time the process touches it: on the
// 2-core VM of benchmarks/RESULTS.md, reading and checking a 3.5 MB output
// that way took 21 ms, and in 64 KiB pieces 3 ms.
const streamChunk = 64 << 10

// Value is an entry's content, checked against its digest: held in
// memory, or, from Open and bigger than streamChunk, left in its file.
// Close it.
type Value struct {
	data   []byte // the content, when it is held in memory
	f      fsread.OwnFile
	off, n int64
	buf    []byte
}

// Len is the content's length.
func (v *Value) Len() int64 {
	if v.f == nil {
		return int64(len(v.data))
	}
	return v.n
}

// WriteTo writes the content to w. The content was checked when Open read
// it through once; kpipe writes entry files once and never changes them,
// and a file that another program rewrites between that check and this
// copy is the one change it does not catch.
func (v *Value) WriteTo(w io.Writer) (int64, error) {
	if v.f == nil {
		n, err := w.Write(v.data)
		return int64(n), err
	}
	// w as a plain Writer: CopyBuffer reads through v.buf, not a buffer of
	// w's ReadFrom.
	n, err := io.CopyBuffer(struct{ io.Writer }{w}, io.NewSectionReader(v.f, v.off, v.n), v.buf)
	if err == nil && n < v.n {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// Bytes returns the whole content.
func (v *Value) Bytes() ([]byte, error) {
	if v.f == nil {
		return v.data, nil
	}
	b := make([]byte, v.n)
	if _, err := io.ReadFull(io.NewSectionReader(v.f, v.off, v.n), b); err != nil {
		return nil, err
	}
	return b, nil
}

// Close releases the file the content is read from.
func (v *Value) Close() error {
	if v.f == nil {
		return nil
	}
	return v.f.Close()
}

// errDamaged is the error of an entry whose content does not match the
// size or digest its entry records (a miss).
var errDamaged = errors.New("damaged cache entry")

// Open is GetDigest for a caller that copies the content elsewhere (a
// cached output printed to stdout): content bigger than streamChunk is
// checked by reading it through in pieces and left in its file. Close the
// Value.
func (s *Store) Open(key Key) (*Value, Key, bool) { return s.lookup(key, true) }

// openChecked opens the data file (or pack member) dp and checks, reading
// it through in pieces, that its content has e's size and digest. Content
// this process has not written out yet is held in memory.
func (d *disk) openChecked(dp string, e entry) (*Value, error) {
	if !d.maybeThere(dp) {
		return nil, errDamaged
	}
	if d.pack != nil {
		if data, pending := d.pack.get(dp); pending {
			if int64(len(data)) != e.size || sha256.Sum256(data) != e.digest {
				return nil, errDamaged
			}
			return &Value{data: data}, nil
		}
	}
	f, off, n, err := openEntry(dp)
	if err != nil {
		return nil, err
	}
	if n != e.size {
		f.Close()
		return nil, errDamaged
	}
	v := &Value{f: f, off: off, n: n, buf: make([]byte, streamChunk)}
	h := sha256.New()
	if k, err := v.WriteTo(h); err != nil || k != n || Key(h.Sum(nil)) != e.digest {
		f.Close()
		return nil, errDamaged
	}
	return v, nil
}
