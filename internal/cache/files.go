package cache

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
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
//
// A directory's digest covers its inode and the names and types of its
// entries, so adding, removing or renaming an entry, or replacing the
// directory, changes it.
//
// The index is kept in the file "files.idx" of the cache directory.
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

// fileIndexName is the index's file in the cache directory.
const fileIndexName = "files.idx"

// LoadFileIndex reads the file index kept in the cache directory dir; the
// index is empty when dir is "" or it has none. An index file that cannot
// be read or fails verification is reported in the error, and the index
// returned is empty (the next Save replaces the file).
func LoadFileIndex(dir string) (*FileIndex, error) {
	ix := &FileIndex{entries: map[string]fileEntry{}}
	if dir == "" {
		return ix, nil
	}
	var m map[string]fileEntry
	if err := readState(filepath.Join(dir, fileIndexName), &m); err != nil {
		ix.dirty = true
		return ix, err
	}
	if m != nil {
		ix.entries = m
	}
	return ix, nil
}

// Save writes the index back to the cache directory dir when it changed.
func (ix *FileIndex) Save(dir string) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ix.dirty || dir == "" {
		return nil
	}
	if err := writeState(filepath.Join(dir, fileIndexName), ix.entries); err != nil {
		return err
	}
	ix.dirty = false
	return nil
}

// Digest returns the digest of the file or directory at path (an
// absolute, clean path), and false when it cannot be read.
func (ix *FileIndex) Digest(path string) (Key, bool) {
	fi, err := os.Stat(path)
	if err != nil || !(fi.Mode().IsRegular() || fi.IsDir()) {
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
	if fi.IsDir() {
		d, ok := dirDigest(path, ino)
		if ok {
			ix.remember(path, fi, d)
		}
		return d, ok
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Key{}, false
	}
	return ix.Record(path, data, fi), true
}

// dirDigest digests a directory's inode and listing.
func dirDigest(path string, ino int64) (Key, bool) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return Key{}, false
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name() + "\x00" + e.Type().String()
	}
	sort.Strings(names)
	kb := NewKey("dir", path)
	kb.Bytes(binary.LittleEndian.AppendUint64(nil, uint64(ino)))
	for _, n := range names {
		kb.String(n)
	}
	return kb.Sum(), true
}

// Record notes the digest of data, just read from path whose stat (taken
// before the read) is fi, and returns it.
func (ix *FileIndex) Record(path string, data []byte, fi os.FileInfo) Key {
	d := Digest(data)
	ix.mu.Lock()
	ix.hashed++
	ix.mu.Unlock()
	if fi != nil && fi.Size() == int64(len(data)) {
		ix.remember(path, fi, d)
	}
	return d
}

func (ix *FileIndex) remember(path string, fi os.FileInfo, d Key) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.entries[path] = fileEntry{Size: fi.Size(), ModNano: fi.ModTime().UnixNano(), Inode: inode(fi),
		Recorded: time.Now().UnixNano(), Digest: d}
	ix.dirty = true
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
