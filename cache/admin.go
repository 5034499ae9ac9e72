package cache

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// RunStats are the cache counts of one kpipe run, kept for `kpipe cache
// stats`.
type RunStats struct {
	Time   time.Time `json:"time"`
	Hits   int64     `json:"hits"`
	Misses int64     `json:"misses"`
	Writes int64     `json:"writes"`
}

// appendJSON appends r as JSON, as encoding/json writes it. A warm
// `kpipe build` writes it on every run, and encoding/json's first call
// (it builds an encoder for the type) cost more than the rest of the
// write; TestRunStatsJSON checks it against encoding/json.
func (r RunStats) appendJSON(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = r.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","hits":`...)
	b = strconv.AppendInt(b, r.Hits, 10)
	b = append(b, `,"misses":`...)
	b = strconv.AppendInt(b, r.Misses, 10)
	b = append(b, `,"writes":`...)
	b = strconv.AppendInt(b, r.Writes, 10)
	return append(b, '}')
}

// HitRate is hits / (hits + misses), or 0 without lookups.
func (r RunStats) HitRate() float64 {
	if r.Hits+r.Misses == 0 {
		return 0
	}
	return float64(r.Hits) / float64(r.Hits+r.Misses)
}

// RecordRun saves this process's counts as the last run's, when it looked
// anything up or wrote anything. The entries waiting in a pack are
// written first, so that a lastrun.json that cannot be written (a
// directory left in its place) costs the statistics alone: one warning
// says so, and the run's entries stay.
func (s *Store) RecordRun() {
	if s == nil {
		return
	}
	h, m, p := s.counts()
	if h+m+p == 0 || s.failed() {
		return
	}
	s.flushPack()
	if s.failed() {
		return // the flush failed, and warned
	}
	b := RunStats{Time: s.opts.Now().UTC(), Hits: h, Misses: m, Writes: p}.appendJSON(nil)
	if kv, ok := s.objects.(*kvObjects); ok {
		kv.write(lastRunName, b)
		return
	}
	path := filepath.Join(s.dir, layoutDir, lastRun)
	if err := overwrite(path, b); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.warnOnce(fmt.Sprintf("cache: cannot record this run's statistics in %s (%v)", path, unwrapPath(err)))
	}
}

// Info describes the store for `kpipe cache stats`.
type Info struct {
	Dir     string `json:"dir"`
	Entries int    `json:"entries"`
	Blobs   int    `json:"blobs"`
	Bytes   int64  `json:"bytes"` // on disk, as du counts it
	// Kept is the part of Bytes that pruning never removes: the cache's
	// directories and its own state files (the file store; 0 for a key-value store).
	Kept    int64     `json:"kept"`
	LastRun *RunStats `json:"lastRun,omitempty"`
}

// Info counts the store's entries and reads the last run's statistics.
func (s *Store) Info() (Info, error) {
	info := Info{Dir: s.Dir()}
	if s == nil {
		return info, nil
	}
	if kv, ok := s.objects.(*kvObjects); ok {
		info, err := kv.info(s.dir)
		if b, err := kv.read(lastRunName); err == nil {
			var r RunStats
			if json.Unmarshal(b, &r) == nil {
				info.LastRun = &r
			}
		}
		return info, err
	}
	u, err := s.scan()
	if err != nil {
		return info, err
	}
	info.Bytes = u.total
	info.Kept = u.total
	for _, f := range u.files {
		info.Kept -= f.bytes
		switch {
		case strings.HasSuffix(f.path, sufAction):
			info.Entries++
		case strings.HasSuffix(f.path, sufData):
			info.Blobs++
		}
	}
	if b, err := s.read(filepath.Join(s.dir, layoutDir, lastRun)); err == nil {
		var r RunStats
		if json.Unmarshal(b, &r) == nil {
			info.LastRun = &r
		}
	}
	return info, nil
}

// usage is what a scan of the directory found.
type usage struct {
	total int64       // every file and directory under the cache dir, as du counts
	files []ownedFile // the files kpipe may delete
}

type ownedFile struct {
	path  string
	mod   time.Time
	bytes int64 // its share of the disk: a pack's size over its names
	// pack identifies the pack file the name links to (its device and
	// inode), zero for a file of its own: a pack is freed only with its
	// last name, so pruning removes its names together.
	pack [2]uint64
}

// owned reports whether name, a file in a v2/<x> subdirectory, is one
// kpipe writes.
func owned(name string) bool {
	if strings.HasPrefix(name, tmpPrefix) {
		return true
	}
	i := strings.LastIndexByte(name, '-')
	if i != 2*32 {
		return false
	}
	switch name[i:] {
	case sufAction, sufData, sufStat, sufRecord:
	default:
		return false
	}
	for _, c := range name[:i] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// scan walks the cache directory, adding up its size as du does and
// listing the files kpipe wrote.
//
// The names of one pack are one file on disk: it counts once in the total,
// and each name is charged its share when the prune weighs deleting it.
func (s *Store) scan() (usage, error) {
	var u usage
	if s.files == nil {
		return u, fmt.Errorf("the %s store is not a directory of files", s.objects.(*kvObjects).db)
	}
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed by another process meanwhile
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		n := diskUsage(fi)
		var pack [2]uint64
		if dev, ino, links, ok := linkCount(fi); ok && links > 1 && d.Type().IsRegular() {
			if !seen[inode{dev, ino}] {
				seen[inode{dev, ino}] = true
				u.total += n
			}
			n /= int64(links)
			pack = [2]uint64{dev, ino}
		} else {
			u.total += n
		}
		if d.Type().IsRegular() && filepath.Base(filepath.Dir(filepath.Dir(path))) == layoutDir &&
			filepath.Dir(filepath.Dir(filepath.Dir(path))) == filepath.Clean(s.dir) && owned(d.Name()) {
			u.files = append(u.files, ownedFile{path: path, mod: fi.ModTime(), bytes: n, pack: pack})
		}
		return nil
	})
	return u, err
}

// Size returns the bytes the cache directory takes on disk, as du counts
// them (a walk of the directory).
func (s *Store) Size() int64 {
	if s == nil {
		return 0
	}
	if kv, ok := s.objects.(*kvObjects); ok {
		return kv.db.DiskSize()
	}
	u, _ := s.scan()
	return u.total
}

// Prune deletes the least recently used files kpipe wrote until the
// directory takes at most maxBytes on disk (as du counts it), and returns
// how many entries it removed. Files kpipe did not write are never
// deleted, and count against the bound.
func (s *Store) Prune(maxBytes int64) (int, error) {
	if s == nil {
		return 0, nil
	}
	if s.files == nil {
		return 0, fmt.Errorf("the %s store keeps its own bound (Options.MaxSize): it evicts as it writes", s.objects.(*kvObjects).db)
	}
	// The estimate file is written first, so that the size measured
	// counts it.
	s.writeEstimate(0)
	n, size, err := s.pruneTo(maxBytes)
	if err == nil {
		s.writeEstimate(size)
	}
	return n, err
}

// pruneTo deletes least recently used files until the directory's size is
// at most target; it returns the entries removed and the size reached.
// What a deletion frees is estimated (a pack is freed with its last name,
// and directories do not shrink), so the directory is measured again after
// each pass, for a few passes.
func (s *Store) pruneTo(target int64) (int, int64, error) {
	removed := 0
	for pass := 0; ; pass++ {
		u, err := s.scan()
		if err != nil {
			return removed, 0, err
		}
		if u.total <= target || pass == 4 {
			return removed, u.total, nil
		}
		n, deleted, err := s.prunePass(u, target)
		removed += n
		if err != nil || deleted == 0 {
			return removed, u.total, err
		}
	}
}

// prunePass deletes least recently used files of u until what they free
// brings u's total to target; it returns the entries and the files it
// deleted.
func (s *Store) prunePass(u usage, target int64) (removed, deleted int, err error) {
	total := u.total
	sort.SliceStable(u.files, func(i, j int) bool { return u.files[i].mod.Before(u.files[j].mod) })
	recent := s.opts.Now().Add(-time.Hour)
	// The names of each pack: a pack frees its bytes with its last name,
	// so its names go together (they were written by one run), and what
	// they free is counted once they are all gone.
	packs := map[[2]uint64][]ownedFile{}
	for _, f := range u.files {
		if f.pack != ([2]uint64{}) {
			packs[f.pack] = append(packs[f.pack], f)
		}
	}
	remove := func(f ownedFile) error {
		if err := os.Remove(f.path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		deleted++
		total -= f.bytes
		if strings.HasSuffix(f.path, sufAction) {
			removed++
		}
		// An emptied subdirectory goes too (du counts directories); a
		// writer that finds it gone makes it again.
		if sub := filepath.Dir(f.path); os.Remove(sub) == nil {
			total -= 4096
		}
		return nil
	}
	for _, f := range u.files {
		if total <= target {
			break
		}
		if strings.HasPrefix(filepath.Base(f.path), tmpPrefix) && f.mod.After(recent) {
			continue // another process may be writing it
		}
		group := []ownedFile{f}
		if f.pack != ([2]uint64{}) {
			group = packs[f.pack]
			delete(packs, f.pack) // its other names are done with it
			if group == nil {
				continue
			}
		}
		for _, g := range group {
			if err := remove(g); err != nil {
				return removed, deleted, err
			}
		}
	}
	return removed, deleted, nil
}

// estimateInterval is how long a size estimate is trusted before Close
// measures the directory again.
const estimateInterval = 24 * time.Hour

// trimIfNeeded adds this process's writes to the size estimate in
// trim.txt and, when the estimate passes the bound, prunes the cache to
// three quarters of it. The estimate is measured again daily, so the walk
// of the directory is paid for once a day, or once per quarter of the
// bound written.
func (s *Store) trimIfNeeded() {
	written := s.files.written.Load()
	if written == 0 || s.failed() {
		return
	}
	f, err := os.OpenFile(filepath.Join(s.dir, layoutDir, trimName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	if lockFile(f) != nil {
		return
	}
	defer unlockFile(f)
	buf := make([]byte, 64)
	n, _ := f.ReadAt(buf, 0)
	at, est, ok := parseEstimate(buf[:n])
	now := s.opts.Now()
	switch {
	case !ok && s.created:
		// A directory this process made holds what it wrote (and what
		// others wrote meanwhile): no walk of it on a first run.
		at, est = now.UnixNano(), written
	case !ok || now.Sub(time.Unix(0, at)) > estimateInterval:
		u, err := s.scan()
		if err != nil {
			return
		}
		at, est = now.UnixNano(), u.total
	default:
		est += written
	}
	if est > s.opts.MaxSize {
		if _, size, err := s.pruneTo(s.opts.MaxSize * 3 / 4); err == nil {
			at, est = now.UnixNano(), size
		}
	}
	// Written over the old line, then cut to the new one's length: a
	// truncate to nothing first freed the file's block and the write
	// allocated another, 0.3 ms of ext4's journal in a new root's build.
	// A run that stops in between leaves a line that parses as the new
	// one, or does not parse (the next run measures the cache again).
	line := []byte(fmt.Sprintf("%d %d\n", at, est))
	if _, err := f.WriteAt(line, 0); err == nil {
		_ = f.Truncate(int64(len(line)))
	}
}

// writeEstimate records a measured size in trim.txt.
func (s *Store) writeEstimate(size int64) {
	_ = writeWhole(filepath.Join(s.dir, layoutDir, trimName), []byte(fmt.Sprintf("%d %d\n", s.opts.Now().UnixNano(), size)))
}

func parseEstimate(b []byte) (at, size int64, ok bool) {
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, false
	}
	at, err1 := strconv.ParseInt(f[0], 10, 64)
	size, err2 := strconv.ParseInt(f[1], 10, 64)
	return at, size, err1 == nil && err2 == nil && size >= 0
}

// Clear deletes every file kpipe wrote in the cache directory dir, and
// nothing else; it needs no working cache (it is the way out of a damaged
// one). A directory without kpipe's marker is cleared only when it holds
// nothing but kpipe's files (of this format or the first one); otherwise
// Clear deletes nothing and says why. It returns the number of files
// removed and the names of files it left (not kpipe's).
func Clear(dir string) (removed int, left []string, err error) {
	if _, err := os.Stat(filepath.Join(dir, markerName)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
				return 0, nil, nil // nothing to clear
			}
			if _, cerr := claim(dir); cerr != nil {
				return 0, nil, fmt.Errorf("not clearing %s: %w", dir, cerr)
			}
		} else {
			return 0, nil, fmt.Errorf("not clearing %s: %w", dir, unwrapPath(err))
		}
	}
	// The first format's files, if any were left beside the marker.
	top, err := os.ReadDir(dir)
	if err != nil {
		return 0, nil, fmt.Errorf("clearing %s: %w", dir, unwrapPath(err))
	}
	for _, e := range top {
		switch {
		case e.Name() == markerName || (e.Name() == layoutDir && e.IsDir()):
		case e.Type().IsRegular() && oldName(e.Name()):
			if err := os.Remove(filepath.Join(dir, e.Name())); err == nil {
				removed++
			}
		default:
			left = append(left, e.Name())
		}
	}
	v2 := filepath.Join(dir, layoutDir)
	subs, err := os.ReadDir(v2)
	if errors.Is(err, fs.ErrNotExist) {
		return removed, left, nil
	}
	if err != nil {
		return removed, left, fmt.Errorf("clearing %s: %w", dir, unwrapPath(err))
	}
	var firstErr error
	for _, sub := range subs {
		p := filepath.Join(v2, sub.Name())
		switch {
		case sub.Type().IsRegular() && (sub.Name() == trimName || sub.Name() == lastRun || strings.HasPrefix(sub.Name(), tmpPrefix)):
			if err := os.Remove(p); err == nil {
				removed++
			}
		case sub.IsDir() && (len(sub.Name()) == 1 || len(sub.Name()) == 2):
			files, err := os.ReadDir(p)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			kept := false
			for _, f := range files {
				if f.Type().IsRegular() && owned(f.Name()) {
					if err := os.Remove(filepath.Join(p, f.Name())); err == nil || errors.Is(err, fs.ErrNotExist) {
						removed++
						continue
					} else if firstErr == nil {
						firstErr = err
					}
				}
				kept = true
				if !owned(f.Name()) {
					left = append(left, filepath.Join(layoutDir, sub.Name(), f.Name()))
				}
			}
			if !kept {
				_ = os.Remove(p)
			}
		default:
			left = append(left, filepath.Join(layoutDir, sub.Name()))
		}
	}
	if firstErr != nil {
		return removed, left, fmt.Errorf("clearing %s: %w", dir, unwrapPath(firstErr))
	}
	return removed, left, nil
}

// VerifyResult counts the entries of a cache by state.
type VerifyResult struct {
	// Good entries verify against their digests.
	Good int `json:"good"`
	// Incomplete entries are shorter than their line says, or their
	// content is missing: a write that a killed process, a crash or a full
	// disk cut short, or a prune. Each is a miss, rewritten by the next
	// build that needs it.
	Incomplete int `json:"incomplete"`
	// Corrupt entries are whole but do not match their digest (the disk
	// or another program changed them). Each is a miss too.
	Corrupt int `json:"corrupt"`
}

// Verify reads every entry of the cache and checks its content against
// its digest. It deletes nothing: a bad entry is a miss.
func (s *Store) Verify() (VerifyResult, error) {
	var r VerifyResult
	if s == nil {
		return r, nil
	}
	if kv, ok := s.objects.(*kvObjects); ok {
		keys, err := kv.actionKeys()
		for _, k := range keys {
			if _, _, ok := s.get(k); ok {
				r.Good++
				continue
			}
			line, err := kv.read(kv.name(hex.EncodeToString(k[:]), sufAction))
			e, ok := parseEntry(k, line[:min(len(line), entrySize)])
			switch {
			case err != nil || !ok:
				r.Corrupt++
			case int64(len(line)-entrySize) < e.size && e.size <= inlineMax:
				r.Incomplete++
			case e.size > inlineMax:
				if _, ok := kv.size(kv.name(hex.EncodeToString(e.digest[:]), sufData)); !ok {
					r.Incomplete++
				} else {
					r.Corrupt++
				}
			default:
				r.Corrupt++
			}
		}
		return r, err
	}
	u, err := s.scan()
	if err != nil {
		return r, err
	}
	for _, f := range u.files {
		name := filepath.Base(f.path)
		if !strings.HasSuffix(name, sufAction) || strings.HasPrefix(name, tmpPrefix) {
			continue
		}
		var k Key
		if _, err := hex.Decode(k[:], []byte(strings.TrimSuffix(name, sufAction))); err != nil {
			r.Corrupt++
			continue
		}
		if _, _, ok := s.get(k); ok {
			r.Good++
			continue
		}
		line, err := s.files.readListed(f.path)
		if err != nil || len(line) < entrySize {
			r.Incomplete++
			continue
		}
		e, ok := parseEntry(k, line[:entrySize])
		switch {
		case !ok:
			r.Corrupt++
		case len(line) > entrySize && int64(len(line)-entrySize) < e.size:
			r.Incomplete++
		case len(line) > entrySize:
			r.Corrupt++
		default:
			if n, ok := s.size(s.name(hex.EncodeToString(e.digest[:]), sufData)); !ok || n < e.size {
				r.Incomplete++
			} else {
				r.Corrupt++
			}
		}
	}
	return r, nil
}

// uploadable lists the files of the cache a remote upload would send: the
// entries and their content, leaving out sensitive entries (a Secret's
// data, a plugin's output) unless includeSensitive.
func (s *Store) uploadable(includeSensitive bool) ([]string, error) {
	if s == nil {
		return nil, nil
	}
	u, err := s.scan()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range u.files {
		name := filepath.Base(f.path)
		if !strings.HasSuffix(name, sufAction) || strings.HasPrefix(name, tmpPrefix) {
			continue
		}
		var k Key
		if _, err := hex.Decode(k[:], []byte(strings.TrimSuffix(name, sufAction))); err != nil {
			continue
		}
		line, err := s.files.readListed(f.path)
		if err != nil {
			continue
		}
		if len(line) < entrySize {
			continue
		}
		e, ok := parseEntry(k, line[:entrySize])
		if !ok || (e.sensitive && !includeSensitive) {
			continue
		}
		out = append(out, f.path)
		if e.size > inlineMax {
			out = append(out, s.name(hex.EncodeToString(e.digest[:]), sufData))
		}
	}
	return out, nil
}
