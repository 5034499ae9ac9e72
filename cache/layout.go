package cache

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The directory layout (see doc.go):
//
//	<dir>/CACHEDIR.TAG         the marker: kpipe made this directory
//	<dir>/v2/<x>/<hex>-a       an entry: key -> content digest (one line)
//	<dir>/v2/<x>/<hex>-d       content, named by its SHA-256
//	<dir>/v2/<x>/<hex>-i       a stat-index record (files.go)
//	<dir>/v2/<x>/<hex>-r       a caller's record (records.go; internal/rootindex)
//	<dir>/v2/<x>/.tmp-*        a file being written (renamed when whole),
//	                           or a pack being linked (pack.go)
//	<dir>/v2/trim.txt          the size estimate and last trim (trim.go)
//	<dir>/v2/lastrun.json      the last run's counts (`kpipe cache stats`)
const (
	markerName = "CACHEDIR.TAG"
	layoutDir  = "v2"
	trimName   = "trim.txt"
	lastRun    = "lastrun.json"
	tmpPrefix  = ".tmp-"
)

// marker is the content of CACHEDIR.TAG (https://bford.info/cachedir/):
// backup tools skip the directory, and kpipe knows it made it.
const marker = "Signature: 8a477f597d28d172789f06886806bc55\n" +
	"# This file is a cache directory tag created by kpipe.\n" +
	"# Everything here can be deleted; `kpipe cache clear` deletes what kpipe wrote.\n"

// Entry name suffixes: the only names kpipe ever deletes under v2/.
const (
	sufAction = "-a"
	sufData   = "-d"
	sufStat   = "-i"
	sufRecord = "-r"
)

// oldNames reports whether name is a file of the first cache format
// (BadgerDB plus state files), which kpipe may delete.
func oldName(name string) bool {
	switch name {
	case "MANIFEST", "KEYREGISTRY", "DISCARD", "LOCK", "files.idx":
		return true
	}
	for _, suf := range []string{".sst", ".vlog", ".mem"} {
		if strings.HasSuffix(name, suf) && strings.Trim(strings.TrimSuffix(name, suf), "0123456789") == "" {
			return true
		}
	}
	return (strings.HasPrefix(name, "roots-") && strings.HasSuffix(name, ".idx")) || strings.HasPrefix(name, ".tmp-")
}

// disk is a cache directory that kpipe owns: it writes self-checking
// files there with mode 0600, on their own or in packs (pack.go), and
// reports the first write failure once (a read-only or full disk) and
// then writes nothing more.
type disk struct {
	dir    string // the cache directory
	layout string // dir's layout directory (layoutDir), with a separator after it: see name
	warn   func(string)

	now       func() time.Time // the clock (nil: time.Now)
	broken    atomic.Bool      // a write failed: write no more
	warned    sync.Once
	mkdirOnce sync.Map // subdirectory -> struct{}: known to exist
	written   atomic.Int64
	pack      *packer // nil: every file is written on its own

	// fresh: this process made the directory a cache, so it held no
	// entries then. A lookup of a name this process has not written
	// (mine) is then a miss without a try: on a cold run every lookup
	// misses, and each failed open costs a path walk. Another process
	// may write entries meanwhile; not seeing them is only a miss.
	fresh bool
	mine  names // written by this process (when fresh)
	// recordsNoted are the records this process wrote (when fresh), by
	// the ids their writers know them by (Store.NoteRecord): a caller asks
	// them before it hashes a record's name, most of what a cold run's
	// lookups of records cost.
	recordsNoted sync.Map
}

// claim makes dir a kpipe cache directory, or says why it cannot be one:
// it creates dir (0700) and its marker when missing, adopts a directory of
// the first cache format (deleting its files, which no kpipe can read any
// more: their keys were salted with the binary that wrote them), and
// refuses a directory holding anything else. created says it wrote the
// marker: the directory was not a kpipe cache before.
func claim(dir string) (created bool, err error) {
	if _, err := os.Stat(filepath.Join(dir, markerName)); err == nil {
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("cannot create it: %w", unwrapPath(err))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("cannot read it: %w", unwrapPath(err))
	}
	var foreign, old []string
	for _, e := range entries {
		switch {
		case e.Name() == layoutDir && e.IsDir():
			// A v2 layout whose marker was lost: ours if it only holds
			// our names (checked by the trim, which deletes nothing else).
		case e.Name() == markerName:
			// Another kpipe wrote the marker since the check above.
			return false, nil
		case strings.HasPrefix(e.Name(), tmpPrefix+markerName+"-") && e.Type().IsRegular():
			// The marker another kpipe is writing at this moment (many
			// processes may open a new cache at once), or one that died
			// writing it: this one writes the marker too.
		case oldName(e.Name()) && e.Type().IsRegular():
			old = append(old, e.Name())
		default:
			foreign = append(foreign, e.Name())
		}
	}
	hasOld := func(n string) bool {
		for _, o := range old {
			if o == n {
				return true
			}
		}
		return false
	}
	if len(old) > 0 && !(hasOld("KEYREGISTRY") && hasOld("MANIFEST")) {
		// Names like ours, but not a Badger directory: not ours.
		foreign, old = append(foreign, old...), nil
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		if len(foreign) > 3 {
			foreign = append(foreign[:3], "...")
		}
		return false, fmt.Errorf("it holds files kpipe did not create (%s); use an empty or new directory", strings.Join(foreign, ", "))
	}
	for _, n := range old {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("removing the old cache format: %w", unwrapPath(err))
		}
	}
	_ = os.Chmod(dir, 0o700)
	if err := writeWhole(filepath.Join(dir, markerName), []byte(marker)); err != nil {
		return false, fmt.Errorf("cannot write to it: %w", unwrapPath(err))
	}
	return true, nil
}

// unwrapPath drops the operation and paths of a *fs.PathError or an
// *os.LinkError (a rename's): the message names the directory already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// name returns the path of the entry file for hex with suffix suf: in
// one of 16 subdirectories, by the first hex digit. (Sixteen rather than
// the Go build cache's 256: a cold run creates every subdirectory, and
// each costs as much as a file to create; ext4, APFS and NTFS index
// large directories. Earlier kpipes used two digits; such
// subdirectories are still cleared and pruned.)
func (d *disk) name(hexName, suf string) string {
	// filepath.Join(d.dir, layoutDir, hexName[:1], hexName+suf) without
	// cleaning the whole path again: a cold build-all names tens of
	// thousands of entries.
	if d.layout == "" {
		// A disk made without setDir: never a path relative to the
		// working directory.
		return filepath.Join(d.dir, layoutDir, hexName[:1], hexName+suf)
	}
	return d.layout + hexName[:1] + string(filepath.Separator) + hexName + suf
}

// newDisk returns the disk of cache directory dir (not yet used).
func newDisk(dir string) *disk {
	d := &disk{}
	d.setDir(dir)
	return d
}

// setDir sets the cache directory of a disk not yet used.
func (d *disk) setDir(dir string) {
	d.dir = dir
	d.layout = filepath.Join(dir, layoutDir) + string(filepath.Separator)
}

// read reads an entry file; any error is a miss. Only a regular file that
// is not a symlink is read, and at most fsread.MaxFileSize of it: kpipe
// writes none other, so a FIFO, a device or a symlink planted in the cache
// (say, a stat record linked to /dev/zero) is a miss, never a hang.
func (d *disk) read(path string) ([]byte, error) {
	if !d.maybeThere(path) {
		return nil, fs.ErrNotExist
	}
	return d.readListed(path)
}

// readListed is read for a name found by listing the directory, which
// exists whoever wrote it.
func (d *disk) readListed(path string) ([]byte, error) {
	if d.pack != nil {
		if v, ok := d.pack.get(path); ok {
			return v, nil
		}
	}
	return readFile(path)
}

// maybeThere says whether a lookup of path is worth trying (see fresh):
// true for every name this process wrote, pending ones included.
func (d *disk) maybeThere(path string) bool {
	if !d.fresh {
		return true
	}
	ok := d.mine.has(path)
	return ok
}

// size returns the length of the file kpipe wrote at path (of its member,
// for a name of a pack).
func (d *disk) size(path string) (int64, bool) {
	if !d.maybeThere(path) {
		return 0, false
	}
	if d.pack != nil {
		if v, ok := d.pack.sizeOf(path); ok {
			return v, true
		}
	}
	f, _, length, err := openEntry(path)
	if err != nil {
		return 0, false
	}
	f.Close()
	return length, true
}

// write writes an entry file: into the pending pack when the store packs
// (pack.go), else as a file of its own.
func (d *disk) write(path string, data []byte) { d.writeContent(path, content{head: data}) }

// writeContent is write for content in two pieces; the pack keeps them
// apart (content), a file of its own gets them joined.
func (d *disk) writeContent(path string, data content) {
	if d.broken.Load() {
		return
	}
	if d.fresh {
		d.mine.add(path)
	}
	if d.pack != nil && data.len() <= packMaxMember {
		full, ok := d.pack.add(path, data)
		if ok {
			if full != nil {
				d.writePackSoon(full)
			}
			return
		}
	}
	d.writePlain(path, data.bytes())
}

// writePlain writes a file of its own, as the Go build cache does: a new
// file in place (a temporary file and a rename cost eight times as much
// on ext4), an existing one through a temporary file and a rename (it may
// be a name of a pack, which must not change). Every file kpipe reads back
// is self-checking (content by its digest, an entry line by its fixed
// size and format, a record by its trailing SHA-256), so a reader that
// meets a file being written, or left partial by a crash, sees a miss.
// Writers of one name write the same bytes (names derive from content)
// or, for an entry line, a line that is valid either way. A failure to
// write is reported once, and from then on nothing is written.
func (d *disk) writePlain(path string, data []byte) {
	if d.broken.Load() {
		return
	}
	if d.pack != nil {
		d.pack.forget(path)
	}
	if !d.mkdir(filepath.Dir(path)) {
		return
	}
	err := writeNew(path, data)
	if errors.Is(err, fs.ErrNotExist) {
		// A prune in another process removed the empty subdirectory.
		d.mkdirOnce.Delete(filepath.Dir(path))
		if d.mkdir(filepath.Dir(path)) {
			err = writeNew(path, data)
		}
	}
	if errors.Is(err, fs.ErrExist) {
		err = writeWhole(path, data)
	}
	if err != nil {
		d.fail(err)
		return
	}
	d.written.Add(roundBlock(int64(len(data))))
}

// mkdir makes sure the subdirectory sub exists; false after a failure
// (reported).
func (d *disk) mkdir(sub string) bool {
	if _, ok := d.mkdirOnce.Load(sub); ok {
		return true
	}
	if err := os.MkdirAll(sub, 0o700); err != nil {
		d.fail(err)
		return false
	}
	d.mkdirOnce.Store(sub, struct{}{})
	return true
}

// remove deletes the file at path, and forgets it if it waits to be
// written.
func (d *disk) remove(path string) {
	if d.pack != nil {
		d.pack.forget(path)
	}
	_ = os.Remove(path)
}

// failed reports whether a write failed.
func (d *disk) failed() bool { return d.broken.Load() }

// freshRecords is recordsNoted when the directory was fresh.
func (d *disk) freshRecords() *sync.Map {
	if !d.fresh {
		return nil
	}
	return &d.recordsNoted
}

// close does nothing: every file is whole once flushPack returns.
func (d *disk) close() error { return nil }

// usedInterval is how stale a file's modification time may get before a
// hit refreshes it (the trim removes the least recently used first): at
// most one write per file and hour, as the Go build cache does.
const usedInterval = time.Hour

// markUsed refreshes path's modification time when older than
// usedInterval.
func (d *disk) markUsed(path string) {
	if d.broken.Load() {
		return
	}
	fi, err := os.Stat(path)
	now := time.Now()
	if d.now != nil {
		now = d.now()
	}
	if err == nil && now.Sub(fi.ModTime()) > usedInterval {
		_ = os.Chtimes(path, now, now)
	}
}

// fail reports a write failure once and stops writing.
func (d *disk) fail(err error) {
	d.broken.Store(true)
	d.warnOnce(fmt.Sprintf("cache: cannot write to %s (%v); this run's results are not cached", d.dir, unwrapPath(err)))
}

// warnOnce gives msg to the warning function, unless the run warned
// about the cache already: a run prints at most one warning about it.
func (d *disk) warnOnce(msg string) {
	d.warned.Do(func() {
		if d.warn != nil {
			d.warn(msg)
		}
	})
}

// writeWhole writes data to path through a temporary file and a rename
// (for the few files that are not self-checking: the marker, trim.txt,
// lastrun.json).
func writeWhole(path string, data []byte) error {
	// os.CreateTemp's names come from the runtime's generator: crypto/rand's
	// first call cost a warm `kpipe build` more than the write itself.
	f, err := os.CreateTemp(filepath.Dir(path), tmpPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
		if err != nil && renameBusy(err) {
			// On Windows a file another process holds open cannot be
			// replaced; the content is the same (names derive from it).
			if _, serr := os.Stat(path); serr == nil {
				err = nil
			}
		}
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// roundBlock is size rounded up to whole 4 KiB blocks, as most file
// systems allocate.
func roundBlock(n int64) int64 { return (n + 4095) &^ 4095 }

// names is a set of paths kept as 64-bit hashes: a cold run writes tens of
// thousands of names, and the set only spares lookups that would miss. Two
// paths that share a hash (one chance in 2^64) cost a failed open.
type names struct {
	mu   sync.Mutex
	seed maphash.Seed
	set  map[uint64]struct{}
}

func (n *names) add(path string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.set == nil {
		n.seed = maphash.MakeSeed()
		n.set = map[uint64]struct{}{}
	}
	n.set[maphash.String(n.seed, path)] = struct{}{}
}

func (n *names) has(path string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.set == nil {
		return false
	}
	_, ok := n.set[maphash.String(n.seed, path)]
	return ok
}
