package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
)

// Records (root and discovery records, roots.go) are a small binary
// encoding followed by its SHA-256: a record that does not match its
// digest, or does not decode, is ignored, as if missing.
//
// The encoding is written here rather than with encoding/gob: a warm
// build-all reads one record per root, and gob, whose decoder learns the
// types anew from every record, spent a quarter of such a run's CPU
// decoding them. Layout: a format byte, then the fields in order; a
// string is its length (uvarint) and bytes, a Key its 32 bytes, a list
// its length and items, an absent record a 0 byte and a present one a 1;
// an input's real path is empty when it is the same as its path.

// recordFormat is the first byte of a record's encoding.
const recordFormat = 2

// errBadStateFile says a record failed verification.
var errBadStateFile = errors.New("cache record does not match its digest")

// encodeState encodes a record.
func encodeState(s *storedRecord) ([]byte, error) {
	w := recordWriter{buf: []byte{recordFormat}}
	w.key(s.Settings)
	w.string(s.Name)
	if w.present(s.Root != nil) {
		w.inputs(s.Root.Inputs)
		w.string(s.Root.Output)
		w.key(s.Root.OutputDigest)
		w.strings(s.Root.Warnings)
	}
	if w.present(s.Discovery != nil) {
		w.inputs(s.Discovery.Files)
		w.inputs(s.Discovery.Dirs)
		w.strings(s.Discovery.Roots)
	}
	sum := sha256.Sum256(w.buf)
	return append(w.buf, sum[:]...), nil
}

// decodeState decodes a record.
func decodeState(data []byte, s *storedRecord) error {
	if len(data) < sha256.Size+1 {
		return errBadStateFile
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) || body[0] != recordFormat {
		return errBadStateFile
	}
	r := recordReader{buf: body[1:]}
	s.Settings = r.key()
	s.Name = r.string()
	if r.present() {
		s.Root = &RootRecord{Inputs: r.inputs(), Output: r.string(), OutputDigest: r.key(), Warnings: r.strings()}
	}
	if r.present() {
		s.Discovery = &DiscoveryRecord{Files: r.inputs(), Dirs: r.inputs(), Roots: r.strings()}
	}
	if r.bad || len(r.buf) != 0 {
		return errBadStateFile
	}
	return nil
}

type recordWriter struct{ buf []byte }

func (w *recordWriter) uint(n int) { w.buf = binary.AppendUvarint(w.buf, uint64(n)) }
func (w *recordWriter) key(k Key)  { w.buf = append(w.buf, k[:]...) }
func (w *recordWriter) string(s string) {
	w.uint(len(s))
	w.buf = append(w.buf, s...)
}

func (w *recordWriter) present(ok bool) bool {
	if ok {
		w.buf = append(w.buf, 1)
	} else {
		w.buf = append(w.buf, 0)
	}
	return ok
}

func (w *recordWriter) strings(l []string) {
	w.uint(len(l))
	for _, s := range l {
		w.string(s)
	}
}

func (w *recordWriter) inputs(l []Input) {
	w.uint(len(l))
	for _, in := range l {
		w.string(in.Path)
		if in.Real == in.Path {
			w.string("") // most paths are their own real path
		} else {
			w.string(in.Real)
		}
		w.key(in.Digest)
	}
}

// recordReader reads what recordWriter wrote; any defect sets bad and
// reads zero values from then on.
type recordReader struct {
	buf []byte
	bad bool
}

func (r *recordReader) uint() int {
	n, size := binary.Uvarint(r.buf)
	if r.bad || size <= 0 || n > uint64(len(r.buf)) {
		// No count or length exceeds the bytes left: every item takes
		// at least one byte.
		r.bad = true
		return 0
	}
	r.buf = r.buf[size:]
	return int(n)
}

func (r *recordReader) take(n int) []byte {
	if r.bad || n > len(r.buf) {
		r.bad = true
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

func (r *recordReader) key() Key {
	var k Key
	copy(k[:], r.take(len(k)))
	return k
}

func (r *recordReader) string() string { return string(r.take(r.uint())) }

func (r *recordReader) present() bool {
	b := r.take(1)
	if len(b) == 1 && b[0] > 1 {
		r.bad = true
	}
	return len(b) == 1 && b[0] == 1
}

func (r *recordReader) strings() []string {
	n := r.uint()
	if n == 0 {
		return nil
	}
	l := make([]string, 0, n)
	for i := 0; i < n && !r.bad; i++ {
		l = append(l, r.string())
	}
	return l
}

func (r *recordReader) inputs() []Input {
	n := r.uint()
	if n == 0 {
		return nil
	}
	l := make([]Input, 0, n)
	for i := 0; i < n && !r.bad; i++ {
		in := Input{Path: r.string(), Real: r.string(), Digest: r.key()}
		if in.Real == "" {
			in.Real = in.Path
		}
		l = append(l, in)
	}
	return l
}
