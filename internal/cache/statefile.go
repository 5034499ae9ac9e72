package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// State files live beside the Badger store, in the cache directory: small
// indexes (file stats, root records) that a run reads before it decides
// whether it needs the store at all. Each is gob data followed by its
// SHA-256, written to a temporary file and renamed into place, so a reader
// sees a whole file from one writer or none; a file that does not match its
// digest is ignored (and rebuilt by the next run).

// errBadStateFile says a state file failed verification.
var errBadStateFile = errors.New("state file does not match its digest")

// readState decodes the state file at path into v. A missing file is not
// an error (v is left as it is); a corrupt one is.
func readState(path string, v any) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(data) < sha256.Size {
		return fmt.Errorf("%s: %w", path, errBadStateFile)
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return fmt.Errorf("%s: %w", path, errBadStateFile)
	}
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// writeState encodes v to the state file at path, atomically.
func writeState(path string, v any) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return err
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
