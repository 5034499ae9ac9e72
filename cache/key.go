package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Key identifies a cached result: the SHA-256 digest of everything that
// can change it.
type Key [sha256.Size]byte

// KeyBuilder accumulates the inputs of a Key. Every field is written with
// its length, so that no two different sequences of fields collide. The
// fields are gathered in a buffer and hashed once by Sum (a key's fields
// are short: kinds, paths and other keys): a streaming hash.Hash would
// copy every string field and length to the heap on its way in.
type KeyBuilder struct {
	buf []byte
}

// NewKey starts a key for a result of the given kind (for example "node"
// or a stage kind), salted with the producer's version: a new kpipe never
// trusts an old kpipe's results.
func NewKey(version, kind string) *KeyBuilder {
	b := &KeyBuilder{buf: make([]byte, 0, 256)}
	return b.String(version).String(kind)
}

// String adds a string field.
func (b *KeyBuilder) String(s string) *KeyBuilder {
	b.buf = binary.AppendUvarint(b.buf, uint64(len(s)))
	b.buf = append(b.buf, s...)
	return b
}

// Bytes adds a byte-slice field.
func (b *KeyBuilder) Bytes(p []byte) *KeyBuilder {
	b.buf = binary.AppendUvarint(b.buf, uint64(len(p)))
	b.buf = append(b.buf, p...)
	return b
}

// Key adds another key (an input's key) as a field.
func (b *KeyBuilder) Key(k Key) *KeyBuilder { return b.Bytes(k[:]) }

// Bool adds a boolean field.
func (b *KeyBuilder) Bool(v bool) *KeyBuilder {
	if v {
		return b.String("1")
	}
	return b.String("0")
}

// Sum returns the key: the SHA-256 digest of the fields so far.
func (b *KeyBuilder) Sum() Key { return sha256.Sum256(b.buf) }

// MarshalBinary encodes the key as its bytes (gob would otherwise write
// the array byte by byte).
func (k Key) MarshalBinary() ([]byte, error) { return k[:], nil }

// UnmarshalBinary decodes a key written by MarshalBinary.
func (k *Key) UnmarshalBinary(b []byte) error {
	if len(b) != len(k) {
		return fmt.Errorf("cache key: %d bytes, want %d", len(b), len(k))
	}
	copy(k[:], b)
	return nil
}

// Digest returns the SHA-256 digest of data as a Key.
func Digest(data []byte) Key { return sha256.Sum256(data) }
