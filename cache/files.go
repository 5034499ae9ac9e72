package cache

import (
	"bytes"
	"encoding/gob"
	"os"
	"sync"
	"syscall"
	"time"
)

// FileIndex finds the digests of files cheaply, as git's index does: a
// file whose size, modification time and inode match what was recorded
// when it was last hashed keeps its digest without being read. An entry
// recorded less than racyWindow after the file's modification time is "in
// doubt" (the file may have changed again within the clock's resolution)
// and the file is hashed again.
type FileIndex struct {
	mu      sync.Mutex
	entries map[string]fileEntry
	dirty   bool
	hashed  int // files read and hashed this run
	stat    int // files answered from the index
}

type fileEntry struct {
	Size, ModNano, Inode int64
	Recorded             int64 // unix nanoseconds when the digest was taken
	Digest               Key
}

// racyWindow is how much later than a file's modification time its digest
// must have been taken to be trusted without reading the file.
const racyWindow = 2 * time.Second

// LoadFileIndex reads the file index saved in s (an empty index for a nil
// store or a missing or unreadable index).
func LoadFileIndex(s *Store) *FileIndex {
	ix := &FileIndex{entries: map[string]fileEntry{}}
	if b, ok := s.GetMeta("fileindex"); ok {
		var m map[string]fileEntry
		if gob.NewDecoder(bytes.NewReader(b)).Decode(&m) == nil {
			ix.entries = m
		}
	}
	return ix
}

// Save writes the index back to s when it changed.
func (ix *FileIndex) Save(s *Store) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ix.dirty || s == nil {
		return
	}
	var buf bytes.Buffer
	if gob.NewEncoder(&buf).Encode(ix.entries) == nil {
		s.PutMeta("fileindex", buf.Bytes())
	}
	ix.dirty = false
}

// Digest returns the digest of the file at path (an absolute, clean path),
// and false when the file cannot be read.
func (ix *FileIndex) Digest(path string) (Key, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return Key{}, false
	}
	size, mod, ino := fi.Size(), fi.ModTime().UnixNano(), inode(fi)
	ix.mu.Lock()
	e, ok := ix.entries[path]
	ix.mu.Unlock()
	if ok && e.Size == size && e.ModNano == mod && e.Inode == ino && e.Recorded-mod > int64(racyWindow) {
		ix.mu.Lock()
		ix.stat++
		ix.mu.Unlock()
		return e.Digest, true
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Key{}, false
	}
	return ix.Record(path, data, fi), true
}

// Record notes the digest of data, just read from path whose stat (taken
// before the read) is fi, and returns it.
func (ix *FileIndex) Record(path string, data []byte, fi os.FileInfo) Key {
	d := Digest(data)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.hashed++
	if fi != nil && fi.Size() == int64(len(data)) {
		ix.entries[path] = fileEntry{Size: fi.Size(), ModNano: fi.ModTime().UnixNano(), Inode: inode(fi),
			Recorded: time.Now().UnixNano(), Digest: d}
		ix.dirty = true
	}
	return d
}

// Counts returns how many files were hashed and how many were answered
// from the index in this run.
func (ix *FileIndex) Counts() (hashed, fromIndex int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.hashed, ix.stat
}

func inode(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Ino)
	}
	return 0
}
