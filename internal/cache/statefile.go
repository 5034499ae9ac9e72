package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
)

// Records (root and discovery records, roots.go) are gob data followed by
// its SHA-256, written whole (temporary file and rename): a reader sees a
// whole record from one writer or none, and a record that does not match
// its digest is ignored, as if missing.

// errBadStateFile says a record failed verification.
var errBadStateFile = errors.New("cache record does not match its digest")

// encodeState encodes v as a record.
func encodeState(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

// decodeState decodes a record into v.
func decodeState(data []byte, v any) error {
	if len(data) < sha256.Size {
		return errBadStateFile
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return errBadStateFile
	}
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(v); err != nil {
		return fmt.Errorf("%w: %v", errBadStateFile, err)
	}
	return nil
}
