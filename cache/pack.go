package cache

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/kpipe/kpipe/internal/fsread"
)

// Packs: many entry files in one file (Options.Pack).
//
// Creating a file is what filling the cache costs: on the ext4 disks of
// common CI virtual machines a new inode costs 150-250 us of system time,
// a hard link to an existing one about 3 us. A cold build-all of 400
// roots writes some 1,400 entry files, which made it take 1.8 times as
// long as the same build without a cache. So a store opened with
// Options.Pack gathers the files a run writes in memory and writes them,
// a few hundred at a time, as one pack file, then links the pack under
// the name of every entry file it holds. Everything else stays as it is:
//
//   - a name is found the same way, and a reader that opens it and sees
//     the pack's magic finds its member in the pack's index (the index is
//     sorted and at most packMaxEntries long: a lookup costs the same
//     whatever the cache holds);
//   - each member is exactly the bytes a file of its own would hold, so
//     it is checked as before (an entry line and its content digest, a
//     record's trailing digest): a damaged pack is a miss for each of its
//     members, never a wrong hit;
//   - the names are kpipe's own names, and the pack is freed by the file
//     system when the last of them is deleted (the prune deletes names
//     least recently used first; the names of one pack share one
//     modification time);
//   - a pack is written whole under a temporary name before any link to
//     it exists, so no reader sees part of one, and a process killed
//     before the links leaves only a temporary file the prune removes.
//
// Until a pack is written its members are visible to this process only
// (reads look at the pending ones first); Store.Flush and Store.Close
// write them. A file system without hard links (the first link fails)
// makes the store write plain files again.
//
// Pack layout (integers little-endian):
//
//	magic (16 bytes) | count (uint32) | reserved (uint32)
//	count index records, sorted by name:
//	    name (32 bytes) | suffix (1 byte) | offset (uint64) | length (uint64)
//	the members' bytes
const (
	packMagic       = "\x00kpipe-pack-v1\n\x00"
	packHeaderSize  = len(packMagic) + 8
	packRecordSize  = 32 + 1 + 8 + 8
	packMaxEntries  = 512     // members per pack: bounds a lookup's index read
	packMaxBytes    = 4 << 20 // bytes per pack, about: what waits is live memory
	packMaxMember   = 1 << 20 // larger files are written on their own
	packPrefix      = tmpPrefix + "pack-"
	packFirstReadSz = 16 << 10
)

// packName is a member's name in a pack: the 32 bytes its file name's hex
// spells, and the suffix letter.
type packName struct {
	hash [32]byte
	suf  byte
}

func (a packName) less(b packName) bool {
	if c := bytes.Compare(a.hash[:], b.hash[:]); c != 0 {
		return c < 0
	}
	return a.suf < b.suf
}

// parsePackName reads an entry file's base name ("<64 hex>-a"); false for
// any other name.
func parsePackName(base string) (packName, bool) {
	var n packName
	if len(base) != 2*32+2 || base[2*32] != '-' {
		return n, false
	}
	if _, err := hex.Decode(n.hash[:], []byte(base[:2*32])); err != nil {
		return n, false
	}
	n.suf = base[2*32+1]
	return n, true
}

// packer gathers the files a store writes until they are written as a
// pack.
type packer struct {
	mu      sync.Mutex
	pending map[string]content // path -> content, not yet in a pack
	size    int
	// writing are the batches being written: still read from memory until
	// their links exist.
	writing map[*map[string]content]bool
	off     bool // hard links failed here: plain files from now on
	// background holds a token while a batch is written in the background
	// (writePackSoon); flushPack waits for it with written.
	background chan struct{}
	written    sync.WaitGroup
}

// content is a file's bytes in two pieces, head then body: an entry's
// line and its value, which the pack writes one after the other rather
// than copying the value (a root's whole output) behind the line first.
type content struct{ head, body []byte }

func (c content) len() int { return len(c.head) + len(c.body) }

// bytes returns the content in one piece.
func (c content) bytes() []byte {
	if len(c.body) == 0 {
		return c.head
	}
	if len(c.head) == 0 {
		return c.body
	}
	return append(append(make([]byte, 0, c.len()), c.head...), c.body...)
}

// get returns the content of path if it waits to be written.
func (p *packer) get(path string) ([]byte, bool) {
	c, ok := p.find(path)
	return c.bytes(), ok
}

// sizeOf returns the length of path's content if it waits to be written.
func (p *packer) sizeOf(path string) (int64, bool) {
	c, ok := p.find(path)
	return int64(c.len()), ok
}

func (p *packer) find(path string) (content, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.pending[path]; ok {
		return v, true
	}
	for b := range p.writing {
		if v, ok := (*b)[path]; ok {
			return v, true
		}
	}
	return content{}, false
}

// forget drops path from what waits to be written.
func (p *packer) forget(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.pending[path]; ok {
		p.size -= v.len()
		delete(p.pending, path)
	}
}

// add queues path's content; it returns a full batch for the caller to
// write, or nil. ok is false when packs are off: write a plain file.
func (p *packer) add(path string, data content) (full *map[string]content, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.off {
		return nil, false
	}
	if p.pending == nil {
		p.pending = map[string]content{}
	}
	if old, dup := p.pending[path]; dup {
		p.size -= old.len()
	}
	p.pending[path] = data
	p.size += data.len()
	if len(p.pending) >= packMaxEntries || p.size >= packMaxBytes {
		return p.take(), true
	}
	return nil, true
}

// take moves the pending files to a batch being written (nil if none);
// p.mu is held.
func (p *packer) take() *map[string]content {
	if len(p.pending) == 0 {
		return nil
	}
	b := p.pending
	p.pending, p.size = nil, 0
	if p.writing == nil {
		p.writing = map[*map[string]content]bool{}
	}
	p.writing[&b] = true
	return &b
}

// writePackSoon writes a full batch in the background, so that the build
// goroutine that filled it goes on building: a pack of 512 members and
// its links took that goroutine milliseconds, while the other CPU was
// often idle (a build's graph does not always offer two nodes at once).
// One batch at a time is written so; a batch that fills while another is
// being written is written here, which bounds what waits in memory.
func (d *disk) writePackSoon(b *map[string]content) {
	select {
	case d.pack.background <- struct{}{}:
		d.pack.written.Go(func() {
			defer func() { <-d.pack.background }()
			d.writePack(b)
		})
	default:
		d.writePack(b)
	}
}

// flushPack writes what is pending, as packs written side by side: the
// last flush of a run (Store.Close) comes when nothing else is left to do,
// so its writes and links use every CPU rather than one.
func (d *disk) flushPack() {
	if d.pack == nil {
		return
	}
	d.pack.mu.Lock()
	parts := d.pack.takeParts(runtime.GOMAXPROCS(0))
	d.pack.mu.Unlock()
	if len(parts) == 0 {
		d.pack.written.Wait()
		return
	}
	var wg sync.WaitGroup
	for _, b := range parts[1:] {
		wg.Go(func() { d.writePack(b) })
	}
	d.writePack(parts[0])
	wg.Wait()
	d.pack.written.Wait()
}

// packSplitMin is the fewest members a pack written in parallel with
// others gets: below it, a pack file of its own costs more than the
// links it takes off the other.
const packSplitMin = 64

// takeParts is take, split into up to n batches of at least packSplitMin
// members each; p.mu is held.
func (p *packer) takeParts(n int) []*map[string]content {
	b := p.take()
	if b == nil {
		return nil
	}
	n = min(n, len(*b)/packSplitMin)
	if n <= 1 {
		return []*map[string]content{b}
	}
	delete(p.writing, b)
	parts := make([]*map[string]content, n)
	for i := range parts {
		m := make(map[string]content, len(*b)/n+1)
		parts[i] = &m
		p.writing[&m] = true
	}
	i := 0
	for path, data := range *b {
		(*parts[i%n])[path] = data
		i++
	}
	return parts
}

// writePack writes a batch as one pack linked under each member's name;
// members it cannot pack (names that are not entry files) are written as
// plain files, and so is everything once a link fails.
func (d *disk) writePack(b *map[string]content) {
	defer func() {
		d.pack.mu.Lock()
		delete(d.pack.writing, b)
		d.pack.mu.Unlock()
	}()
	var members []packMember
	for path, data := range *b {
		if n, ok := parsePackName(filepath.Base(path)); ok {
			members = append(members, packMember{path, n, data})
		} else {
			d.writePlain(path, data.bytes())
		}
	}
	if len(members) == 0 || d.broken.Load() {
		return
	}
	if len(members) == 1 {
		// A pack of one is a file like any other.
		d.writePlain(members[0].path, members[0].data.bytes())
		return
	}
	sort.Slice(members, func(i, j int) bool { return members[i].name.less(members[j].name) })
	// The pack is written under a temporary name in the first member's
	// subdirectory (where the prune finds it if this process dies), then
	// linked under each name, then its temporary name goes.
	sub := filepath.Dir(members[0].path)
	if !d.mkdir(sub) {
		return
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(sub, packPrefix+hex.EncodeToString(rnd[:]))
	size, err := d.pack.writeTo(tmp, members)
	if err != nil {
		d.fail(err)
		return
	}
	defer os.Remove(tmp)
	l := newLinker()
	defer l.close()
	for i, m := range members {
		if err := d.link(l, tmp, m.path); err != nil {
			if i == 0 && !errors.Is(err, fs.ErrNotExist) {
				// No hard links here (or not to this file): plain files
				// from now on.
				d.pack.mu.Lock()
				d.pack.off = true
				d.pack.mu.Unlock()
				for _, m := range members {
					d.writePlain(m.path, m.data.bytes())
				}
				return
			}
			d.writePlain(m.path, m.data.bytes())
		}
	}
	d.written.Add(roundBlock(size))
}

// packMember is a file waiting in a batch: its path, its name in the
// pack, its bytes.
type packMember struct {
	path string
	name packName
	data content
}

// writeTo writes members, sorted by name, as a new pack file at path and
// returns its size. The header and index are one buffer; the members go
// to the file as they are (writeBuffers).
func (p *packer) writeTo(path string, members []packMember) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	head := make([]byte, packHeaderSize, packHeaderSize+len(members)*packRecordSize)
	copy(head, packMagic)
	binary.LittleEndian.PutUint32(head[len(packMagic):], uint32(len(members)))
	bufs := make([][]byte, 1, 1+2*len(members))
	off := uint64(packHeaderSize + len(members)*packRecordSize)
	for _, m := range members {
		head = append(head, m.name.hash[:]...)
		head = append(head, m.name.suf)
		head = binary.LittleEndian.AppendUint64(head, off)
		head = binary.LittleEndian.AppendUint64(head, uint64(m.data.len()))
		off += uint64(m.data.len())
		bufs = append(bufs, m.data.head, m.data.body)
	}
	bufs[0] = head
	err = writeBuffers(f, bufs)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return 0, err
	}
	return int64(off), nil
}

// link makes path a name of the pack at tmp, replacing any file there
// (a rename over it: no reader sees the name missing).
func (d *disk) link(l *linker, tmp, path string) error {
	if !d.mkdir(filepath.Dir(path)) {
		return fs.ErrNotExist
	}
	err := l.link(tmp, path)
	if errors.Is(err, fs.ErrExist) {
		var rnd [6]byte
		_, _ = rand.Read(rnd[:])
		t := filepath.Join(filepath.Dir(path), tmpPrefix+filepath.Base(path)+"-"+hex.EncodeToString(rnd[:]))
		if err = l.link(tmp, t); err == nil {
			if err = os.Rename(t, path); err != nil {
				os.Remove(t)
			}
		}
	}
	return err
}

// writeNew creates path, which must not exist, holding data.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// readFile reads the file kpipe wrote at path: the whole file, or, when
// it is a pack, the member named by path's base name. Anything but a
// regular file is refused, and a pack that does not hold the name, or
// whose index does not fit the file, is a miss (an error).
func readFile(path string) ([]byte, error) {
	f, off, length, err := openEntry(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if length > fsread.MaxFileSize {
		return nil, fmt.Errorf("%s: larger than the limit", path)
	}
	data := make([]byte, length)
	n, err := f.ReadAt(data, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	// Shorter when the file shrank since its stat: a miss for the caller's
	// checks.
	return data[:n], nil
}

// openEntry opens the file kpipe wrote at path and finds the bytes the
// name stands for: the whole file, or its member when it is a pack (off
// and length). The caller closes f.
func openEntry(path string) (f fsread.OwnFile, off, length int64, err error) {
	f, fi, err := fsread.OpenOwn(path)
	if err != nil {
		return nil, 0, 0, err
	}
	hp := headBuffers.Get().(*[]byte)
	defer headBuffers.Put(hp)
	head := (*hp)[:min(fi.Size(), packFirstReadSz)]
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, 0, 0, err
	}
	if head = head[:n]; !bytes.HasPrefix(head, []byte(packMagic)) {
		return f, 0, fi.Size(), nil
	}
	off, length, err = packLookup(f, fi.Size(), head, filepath.Base(path))
	if err != nil {
		f.Close()
		return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return f, off, length, nil
}

// headBuffers are openEntry's first reads, used again: a read is mostly
// a small member of a pack, whose 16 KiB first read is otherwise fresh
// memory every time (a warm flux build-all of 79 Kustomizations spent
// about a tenth of its CPU in the page faults of those reads).
var headBuffers = sync.Pool{New: func() any { b := make([]byte, packFirstReadSz); return &b }}

// errNotInPack is the error of a lookup of a name a pack does not hold.
var errNotInPack = errors.New("not in its pack")

// packLookup finds base's member in the pack f (size bytes, starting with
// head): its offset and length.
func packLookup(f io.ReaderAt, size int64, head []byte, base string) (int64, int64, error) {
	want, ok := parsePackName(base)
	if !ok || len(head) < packHeaderSize {
		return 0, 0, errNotInPack
	}
	count := int64(binary.LittleEndian.Uint32(head[len(packMagic):]))
	end := int64(packHeaderSize) + count*packRecordSize
	if count == 0 || count > packMaxEntries || end > size {
		return 0, 0, errors.New("damaged pack index")
	}
	index := head
	if int64(len(index)) < end {
		index = make([]byte, end)
		if _, err := f.ReadAt(index, 0); err != nil {
			return 0, 0, err
		}
	}
	index = index[packHeaderSize:end]
	rec := func(i int) []byte { return index[i*packRecordSize : (i+1)*packRecordSize] }
	nameAt := func(i int) packName {
		var n packName
		copy(n.hash[:], rec(i))
		n.suf = rec(i)[32]
		return n
	}
	i := sort.Search(int(count), func(i int) bool { return !nameAt(i).less(want) })
	if i == int(count) || nameAt(i) != want {
		return 0, 0, errNotInPack
	}
	r := rec(i)
	off := binary.LittleEndian.Uint64(r[33:])
	n := binary.LittleEndian.Uint64(r[41:])
	if off < uint64(end) || off > uint64(size) || n > uint64(size)-off {
		return 0, 0, errors.New("damaged pack index")
	}
	return int64(off), int64(n), nil
}
