package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/kpipe/kpipe/internal/fsread"
)

// FileIndex finds the digests of files cheaply, as git's index does: a
// file whose size, modification time, status-change time (ctime), inode
// and device match what was recorded when it was last hashed keeps its
// digest without being read. Comparing ctime catches an in-place edit
// that keeps size and mtime (cp -p, rsync --inplace, tar -x, touch -r):
// the kernel moves ctime on every write or chmod, and no program can set
// it back. An entry recorded less than racyWindow after the file's
// modification or change time is "in doubt" (the file may have changed
// again within the clock's resolution) and the file is hashed again.
//
// A directory's digest covers its inode and the names and types of its
// entries, so adding, removing or renaming an entry, or replacing the
// directory, changes it.
//
// Records last for the run in memory; those of files of at least
// persistMin bytes (where a stat saves reading the file) are also kept in
// the cache directory, one small file per path (v2/<x>/<hex>-i), read
// only when that path is asked for and written only when it changed: the
// index costs what a run touches, whatever the cache holds. A smaller
// file's record would cost about what reading the file does; instead a
// root record keeps the stat of each of its inputs, small files and
// directories included (Stamp, StampRead), and the InputChecker hands it
// to the index (learn) before asking for the digest, where the platform
// gives a change time.
//
// An index reads the disk, or another tree through a Source (On): a
// git revision, an in-memory tree. Where a tree names its files' content
// (a git object name: ContentID), that name is the stat: a file whose
// name is unchanged keeps its digest, whoever recorded it, and a large
// file's digest is kept in the cache directory under the name.
type FileIndex struct {
	d   objects // nil: the index lives in memory only
	src Source  // nil: the disk
	// window is racyWindow (tests shorten it).
	window time.Duration

	mu      sync.Mutex
	entries map[string]fileEntry
	pending map[string]fileEntry // records to write to the cache directory
	hashed  int                  // files read and hashed this run
	known   int                  // files answered from the index
}

type fileEntry struct {
	fileStat
	Digest Key
}

// fileStat is what a stat said of a file (or directory) when its digest
// was taken, and when that was; or, for a tree that names content
// (ContentID), that name alone.
type fileStat struct {
	Size, ModNano, CtimeNano int64
	Inode, Dev               uint64
	Recorded                 int64 // unix nanoseconds when the digest was taken
	ID                       string
}

// statOf is fi's fileStat, fi taken at statAt or later.
func statOf(fi os.FileInfo, statAt time.Time) fileStat {
	if id := ContentID(fi); id != "" {
		return fileStat{ID: id, Recorded: statAt.UnixNano()}
	}
	ino, dev, ctime := statIDs(fi)
	return fileStat{Size: fi.Size(), ModNano: fi.ModTime().UnixNano(), CtimeNano: ctime, Inode: ino, Dev: dev, Recorded: statAt.UnixNano()}
}

// Source is a tree the file index and the input checker read instead of
// the disk (loaders.FS has these methods; loaders.NewFS makes one of a git
// revision or an in-memory tree). Paths are absolute; errors as the os
// package's.
type Source interface {
	Stat(path string) (fs.FileInfo, error)
	Lstat(path string) (fs.FileInfo, error)
	EvalSymlinks(path string) (string, error)
	ReadFile(path string, follow bool) ([]byte, fs.FileInfo, error)
	ReadDir(path string) (fs.FileInfo, []fs.DirEntry, error)
}

// ContentID returns the name of fi's content when its tree gives one (a
// git object name: fi.Sys has a ContentID method), else "". Two files
// with the same ID hold the same bytes; a directory's ID covers every
// path below it.
func ContentID(fi fs.FileInfo) string {
	if c, ok := fi.Sys().(interface{ ContentID() string }); ok {
		return c.ContentID()
	}
	return ""
}

// sameSize reports whether fi's file holds n bytes, without asking a tree
// that names content (its size may cost a read).
func sameSize(fi fs.FileInfo, n int) bool {
	return ContentID(fi) != "" || fi.Size() == int64(n)
}

// racyWindow is how much later than a file's modification (and change)
// time its digest must have been taken to be trusted without reading the
// file.
const racyWindow = 2 * time.Second

// persistMin is the size from which a file's record is kept on disk.
const persistMin = 64 << 10

// LoadFileIndex returns the file index kept in the cache directory dir; it
// lives in memory only when dir is "" or is not a kpipe cache directory.
// Nothing is read until a path is asked for; the error is always nil (it
// is kept for callers).
func LoadFileIndex(dir string) (*FileIndex, error) {
	ix := &FileIndex{window: racyWindow, entries: map[string]fileEntry{}, pending: map[string]fileEntry{}}
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, markerName)); err == nil {
			ix.d = newDisk(dir)
		}
	}
	return ix, nil
}

// On returns an index of the tree src (nil: the disk) that keeps its
// records where ix does. It knows nothing of ix's records: a path of one
// tree says nothing of the same path in another.
func (ix *FileIndex) On(src Source) *FileIndex {
	if ix == nil {
		ix, _ = LoadFileIndex("")
	}
	return &FileIndex{d: ix.d, src: src, window: ix.window, entries: map[string]fileEntry{}, pending: map[string]fileEntry{}}
}

// Source returns the tree the index reads (nil: the disk).
func (ix *FileIndex) Source() Source {
	if ix == nil {
		return nil
	}
	return ix.src
}

// stat is os.Stat of path, in the index's tree.
func (ix *FileIndex) stat(path string) (fs.FileInfo, error) {
	if ix.src != nil {
		return ix.src.Stat(path)
	}
	return os.Stat(path)
}

// FileIndex returns a file index kept in s's directory (in memory only for
// a nil store); its write failures are reported through s, once.
func (s *Store) FileIndex() *FileIndex {
	ix, _ := LoadFileIndex("")
	if s != nil {
		ix.d = s.objects
	}
	return ix
}

// Save writes the records of large files hashed in this run to the cache
// directory. dir is ignored (the index knows its directory); a write
// failure is reported by the store, if any, and never returned.
func (ix *FileIndex) Save(dir string) error {
	ix.mu.Lock()
	pending := ix.pending
	ix.pending = map[string]fileEntry{}
	ix.mu.Unlock()
	if ix.d == nil {
		return nil
	}
	for path, e := range pending {
		ix.d.write(ix.d.name(statName(path), sufStat), encodeStat(path, e))
	}
	return nil
}

// idKey is the name a record of the content named id is kept under.
func idKey(id string) string { return "content\x00" + id }

func statName(path string) string {
	h := sha256.Sum256([]byte("stat\x00" + path))
	return hex.EncodeToString(h[:])
}

const statMagic = "kpi2"

// encodeStat encodes a record: magic, the fields, the path, and the
// SHA-256 of all that.
func encodeStat(path string, e fileEntry) []byte {
	b := []byte(statMagic)
	for _, v := range []uint64{uint64(e.Size), uint64(e.ModNano), uint64(e.CtimeNano), e.Inode, e.Dev, uint64(e.Recorded)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	b = append(b, e.Digest[:]...)
	b = append(b, path...)
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// decodeStat reads a record of path; false on any defect.
func decodeStat(path string, b []byte) (fileEntry, bool) {
	var e fileEntry
	const fixed = len(statMagic) + 6*8 + sha256.Size
	if len(b) != fixed+len(path)+sha256.Size || string(b[:len(statMagic)]) != statMagic {
		return e, false
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) || string(body[fixed:]) != path {
		return e, false
	}
	v := make([]uint64, 6)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(body[len(statMagic)+8*i:])
	}
	e.Size, e.ModNano, e.CtimeNano, e.Inode, e.Dev, e.Recorded = int64(v[0]), int64(v[1]), int64(v[2]), v[3], v[4], int64(v[5])
	copy(e.Digest[:], body[len(statMagic)+48:fixed])
	return e, true
}

// matches reports whether e still describes the file fi and was recorded
// late enough after its last change to be trusted; or, for content with a
// name, whether the name is the same.
func (e fileEntry) matches(fi os.FileInfo, window time.Duration) bool {
	if e.ID != "" {
		return ContentID(fi) == e.ID
	}
	ino, dev, ctime := statIDs(fi)
	last := fi.ModTime().UnixNano()
	if ctime > last {
		last = ctime
	}
	return e.Size == fi.Size() && e.ModNano == fi.ModTime().UnixNano() && e.CtimeNano == ctime &&
		e.Inode == ino && e.Dev == dev && e.Recorded-last > int64(window)
}

// Digest returns the digest of the file or directory at path (an
// absolute, clean path), and false when it cannot be read.
func (ix *FileIndex) Digest(path string) (Key, bool) {
	fi, err := ix.stat(path)
	if err != nil {
		return Key{}, false
	}
	return ix.digestStat(path, fi)
}

// digestStat is Digest of path, whose stat (or lstat: not a symlink) is
// fi.
func (ix *FileIndex) digestStat(path string, fi os.FileInfo) (Key, bool) {
	if !(fi.Mode().IsRegular() || fi.IsDir()) {
		return Key{}, false
	}
	ix.mu.Lock()
	e, ok := ix.entries[path]
	ix.mu.Unlock()
	if id := ContentID(fi); !ok && id != "" && ix.d != nil && fi.Mode().IsRegular() {
		// A large file's digest is kept under its content's name (there
		// is no telling a file's size from such a tree without reading it).
		if b, err := ix.d.read(ix.d.name(statName(idKey(id)), sufStat)); err == nil {
			if e, ok = decodeStat(idKey(id), b); ok {
				e.fileStat = fileStat{ID: id, Recorded: e.Recorded}
			}
		}
	} else if !ok && ix.d != nil && fi.Mode().IsRegular() && fi.Size() >= persistMin {
		if b, err := ix.d.read(ix.d.name(statName(path), sufStat)); err == nil {
			e, ok = decodeStat(path, b)
		}
	}
	if ok && e.matches(fi, ix.window) {
		ix.mu.Lock()
		ix.known++
		ix.entries[path] = e
		ix.mu.Unlock()
		return e.Digest, true
	}
	if fi.IsDir() {
		ino, _, _ := statIDs(fi)
		d, ok := ix.dirDigest(path, ino)
		if ok {
			ix.remember(path, fi, d)
		}
		return d, ok
	}
	var data []byte
	var err error
	if ix.src != nil {
		data, _, err = ix.src.ReadFile(path, true)
	} else {
		data, err = fsread.File(path)
	}
	if err != nil {
		return Key{}, false
	}
	return ix.Record(path, data, fi), true
}

// Known returns the digest recorded for path at since or later (by
// Record, Remember or RememberDir), without a stat: with since the start
// of a run, the digest of the bytes or the listing that run read. A record
// of the run's build pairs its output with exactly those, so it takes them
// from here; whether the file changed since is the next run's question
// (Digest). An index that outlives a run (an embedder's) may hold older
// digests, which since leaves out.
func (ix *FileIndex) Known(path string, since time.Time) (Key, bool) {
	if ix == nil {
		return Key{}, false
	}
	ix.mu.Lock()
	e, ok := ix.entries[path]
	ix.mu.Unlock()
	if !ok || e.Recorded < since.UnixNano() {
		return Key{}, false
	}
	return e.Digest, true
}

// dirDigest digests a directory's inode and listing.
func (ix *FileIndex) dirDigest(path string, ino uint64) (Key, bool) {
	var entries []fs.DirEntry
	var err error
	if ix.src != nil {
		_, entries, err = ix.src.ReadDir(path)
	} else {
		_, entries, err = fsread.ReadDir(path)
	}
	if err != nil {
		return Key{}, false
	}
	return listingDigest(path, ino, entries), true
}

// RememberDir records the digest of the directory at path from entries,
// its listing, read after fi, the directory's stat, was taken (at statAt
// or later; see Remember): a later Digest of the directory costs a stat
// instead of a second listing.
func (ix *FileIndex) RememberDir(path string, fi os.FileInfo, entries []fs.DirEntry, statAt time.Time) {
	if ix == nil || fi == nil || !fi.IsDir() {
		return
	}
	ino, _, _ := statIDs(fi)
	ix.rememberAt(path, fi, listingDigest(path, ino, entries), statAt, -1)
}

// listingDigest is dirDigest of a listing already read.
func listingDigest(path string, ino uint64, entries []fs.DirEntry) Key {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name() + "\x00" + e.Type().String()
	}
	sort.Strings(names)
	kb := NewKey("dir", path)
	kb.Bytes(binary.LittleEndian.AppendUint64(nil, ino))
	for _, n := range names {
		kb.String(n)
	}
	return kb.Sum()
}

// Record notes the digest of data, just read from path whose stat (taken
// before the read) is fi, and returns it.
func (ix *FileIndex) Record(path string, data []byte, fi os.FileInfo) Key {
	d := Digest(data)
	ix.mu.Lock()
	ix.hashed++
	ix.mu.Unlock()
	if fi != nil && sameSize(fi, len(data)) {
		ix.rememberAt(path, fi, d, time.Now(), len(data))
	}
	return d
}

// Remember records d, the digest of the n bytes read from the regular
// file at path, with fi, the stat of that file taken before it was read
// (nil: nothing is recorded), at a time no later than that stat. A file
// changed since that stat no longer matches it, and one changed within
// the racy window before that time is not trusted, so a later Digest
// reads the file again in either case.
func (ix *FileIndex) Remember(path string, fi os.FileInfo, n int, d Key, statAt time.Time) {
	if ix != nil && fi != nil && fi.Mode().IsRegular() && sameSize(fi, n) {
		ix.rememberAt(path, fi, d, statAt, n)
	}
}

// KeepsRecord reports whether a file of size bytes has its record kept in
// the cache directory for later runs (Remember of a smaller file serves
// only this run's Known and Digest).
func (ix *FileIndex) KeepsRecord(size int64) bool {
	return ix != nil && ix.d != nil && size >= persistMin
}

// remember records d for path (a directory), whose stat fi was just
// taken.
func (ix *FileIndex) remember(path string, fi os.FileInfo, d Key) {
	ix.rememberAt(path, fi, d, time.Now(), -1)
}

// rememberAt records d for path, whose stat fi was taken at statAt or
// later; size is the file's (-1 for a directory, or unknown).
func (ix *FileIndex) rememberAt(path string, fi os.FileInfo, d Key, statAt time.Time, size int) {
	e := fileEntry{statOf(fi, statAt), d}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.entries[path] = e
	switch {
	case ix.d == nil || !fi.Mode().IsRegular():
	case e.ID != "":
		if size >= persistMin {
			// Kept under the content's name: any path, in any tree
			// that names it so, finds it.
			ix.pending[idKey(e.ID)] = fileEntry{fileStat{Recorded: e.Recorded}, d}
		}
	case fi.Size() >= persistMin:
		ix.pending[path] = e
	}
}

// Stamp returns in with what the index knows of in.Real when that is
// the stat of the content in.Digest names (recorded this run by Digest,
// Record, Remember or RememberDir): a record that keeps the input so
// stamped is checked later by a stat, without reading the file or listing
// the directory (InputChecker). An input stamped already (StampRead)
// keeps its stat, with no lookup.
func (ix *FileIndex) Stamp(in Input) Input {
	if ix == nil || in.stat.Recorded != 0 {
		return in
	}
	ix.mu.Lock()
	e, ok := ix.entries[in.Real]
	ix.mu.Unlock()
	if ok && e.Digest == in.Digest && e.trusted() {
		in.stat = e.fileStat
	}
	return in
}

// trusted reports whether the stat has a change time, or names the
// content: where the platform gives no change time (statIDs), an input
// is not stamped, and a small file is read again as before, rather than
// trusted on its size and mtime alone.
func (st fileStat) trusted() bool { return st.CtimeNano != 0 || st.ID != "" }

// StampRead returns in, the input of a regular file the build read after
// taking fi, its stat, at statAt or later, with that stat (see Stamp):
// for a file the index keeps no entry of.
func StampRead(in Input, fi os.FileInfo, size int, statAt time.Time) Input {
	if fi != nil && fi.Mode().IsRegular() && sameSize(fi, size) {
		if st := statOf(fi, statAt); st.trusted() {
			in.stat = st
		}
	}
	return in
}

// learn takes st, a stat a record kept of path with its digest d (see
// Stamp), as its own entry of path, unless it has one already: Digest
// then trusts d where path still matches st, and reads path otherwise.
func (ix *FileIndex) learn(path string, st fileStat, d Key) {
	if ix == nil || st.Recorded == 0 || !st.trusted() {
		return
	}
	ix.mu.Lock()
	if _, ok := ix.entries[path]; !ok {
		ix.entries[path] = fileEntry{st, d}
	}
	ix.mu.Unlock()
}

// Counts returns how many files were hashed and how many were answered
// from the index in this run.
func (ix *FileIndex) Counts() (hashed, fromIndex int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.hashed, ix.known
}
