package cache

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// RunStats are the cache counts of one kpipe run, kept for `kpipe cache
// stats`.
type RunStats struct {
	Time   time.Time `json:"time"`
	Hits   int64     `json:"hits"`
	Misses int64     `json:"misses"`
	Writes int64     `json:"writes"`
}

// HitRate is hits / (hits + misses), or 0 without lookups.
func (r RunStats) HitRate() float64 {
	if r.Hits+r.Misses == 0 {
		return 0
	}
	return float64(r.Hits) / float64(r.Hits+r.Misses)
}

// RecordRun saves this process's counts as the last run's.
func (s *Store) RecordRun() {
	if s == nil {
		return
	}
	h, m, p := s.Counts()
	b, _ := json.Marshal(RunStats{Time: time.Now().UTC(), Hits: h, Misses: m, Writes: p})
	s.PutMeta("lastrun", b)
}

// Info describes the store for `kpipe cache stats`.
type Info struct {
	Dir     string    `json:"dir"`
	Entries int       `json:"entries"`
	Blobs   int       `json:"blobs"`
	Bytes   int64     `json:"bytes"`
	LastRun *RunStats `json:"lastRun,omitempty"`
}

// Info counts the store's entries and reads the last run's statistics.
func (s *Store) Info() (Info, error) {
	info := Info{Dir: s.Dir()}
	if s == nil {
		return info, nil
	}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			switch {
			case hasPrefix(k, prefixRef):
				info.Entries++
			case hasPrefix(k, prefixBlob):
				info.Blobs++
			}
		}
		return nil
	})
	info.Bytes = s.Size()
	if b, ok := s.GetMeta("lastrun"); ok {
		var r RunStats
		if json.Unmarshal(b, &r) == nil {
			info.LastRun = &r
		}
	}
	return info, err
}

func hasPrefix(k []byte, p string) bool { return len(k) >= len(p) && string(k[:len(p)]) == p }

// Prune deletes the oldest entries until the entries and the values they
// use take at most maxBytes, then drops values no entry uses and reclaims
// disk space. It returns the number of entries removed.
func (s *Store) Prune(maxBytes int64) (int, error) {
	if s == nil {
		return 0, nil
	}
	s.Flush()
	type ref struct {
		key    []byte
		made   uint64
		digest string
		size   int64
	}
	var refs []ref
	blobSize := map[string]int64{}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			k := item.KeyCopy(nil)
			switch {
			case hasPrefix(k, prefixBlob):
				blobSize[string(k[len(prefixBlob):])] = item.ValueSize() + int64(len(k))
			case hasPrefix(k, prefixRef):
				v, err := item.ValueCopy(nil)
				if err != nil || len(v) != refSize {
					refs = append(refs, ref{key: k}) // corrupt: oldest of all
					continue
				}
				refs = append(refs, ref{key: k, made: binary.BigEndian.Uint64(v), digest: string(v[8:]), size: int64(len(k) + len(v))})
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// Live size: refs plus the blobs they use (each blob once).
	users := map[string]int{}
	var total int64
	for _, r := range refs {
		total += r.size
		if users[r.digest] == 0 {
			total += blobSize[r.digest]
		}
		users[r.digest]++
	}
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].made < refs[j].made })
	wb := s.db.NewWriteBatch()
	removed := 0
	for _, r := range refs {
		if total <= maxBytes {
			break
		}
		if err := wb.Delete(r.key); err != nil {
			wb.Cancel()
			return removed, err
		}
		removed++
		total -= r.size
		if users[r.digest]--; users[r.digest] == 0 {
			total -= blobSize[r.digest]
		}
	}
	for d := range blobSize {
		if users[d] <= 0 {
			if err := wb.Delete(blobKey([]byte(d))); err != nil {
				wb.Cancel()
				return removed, err
			}
		}
	}
	if err := wb.Flush(); err != nil {
		return removed, err
	}
	s.compact()
	return removed, nil
}

// Clear deletes every entry.
func (s *Store) Clear() error {
	if s == nil {
		return nil
	}
	s.Flush()
	if err := s.db.DropAll(); err != nil {
		return fmt.Errorf("clearing the cache: %w", err)
	}
	s.setFormat()
	return removeStateFiles(s.opts.Dir)
}

// compact rewrites tables and value logs to give deleted space back.
func (s *Store) compact() {
	_ = s.db.Flatten(1)
	for s.db.RunValueLogGC(0.3) == nil {
	}
}
