package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kpipe/kpipe/cache/remote"
)

// RemoteOptions configure Store.SetRemote: a shared remote cache behind
// the directory.
//
// Reads go to the directory first, then to the remote; what the remote
// holds is verified (an action record must name the key asked for, its
// value must match the record's SHA-256 and size) and written to the
// directory. An object that fails verification is refused with a warning
// and the value is built again. Writes go to the remote only with Write
// (trusted runs), and sensitive entries (PutSensitive) only with
// Sensitive too. The first failure of the remote (down, too slow,
// refused) is one warning, and the rest of the run does without it.
//
// With Write, the remote is also written through: an entry this run
// finds in the directory is checked against the remote, a few hundred
// at a time in one request where the remote has one (remote.Finder; else
// one HEAD each), and uploaded only when the remote lacks it (its record,
// or its content). A runner whose own cache is warm thus fills an empty
// or evicted remote with what it used, and never sends what the remote
// has.
type RemoteOptions struct {
	// Backend is the remote store (opened by package remote/backend).
	Backend remote.Backend
	// Write uploads what this run builds, and what it finds in the
	// directory that the remote lacks.
	Write bool
	// Sensitive uploads sensitive entries too (with Write).
	Sensitive bool
}

// RemoteStats count a run's use of the remote cache.
type RemoteStats struct {
	// URL is the remote's address, without credentials.
	URL string `json:"url"`
	// Hits are entries found there (and verified); Misses entries it did
	// not hold, or held but failed verification (Refused counts those).
	Hits    int64 `json:"hits"`
	Misses  int64 `json:"misses"`
	Refused int64 `json:"refused"`
	// Uploads are the entries written there (built by this run, or found
	// in the directory and missing there).
	Uploads int64 `json:"uploads"`
	// Checked are the entries found in the directory that were checked
	// against the remote (with Write); Present those it held already.
	Checked int64 `json:"checked,omitempty"`
	Present int64 `json:"present,omitempty"`
	// BytesDown and BytesUp are the object bytes read and written.
	BytesDown int64 `json:"bytesDown"`
	BytesUp   int64 `json:"bytesUp"`
	// Seconds is the time spent in requests, added over concurrent ones.
	Seconds float64 `json:"seconds"`
	// Failed is set when the remote failed and the run went on without it.
	Failed bool `json:"failed,omitempty"`
}

// remoteLayer is a Store's remote.
type remoteLayer struct {
	RemoteOptions
	ctx    context.Context
	cancel context.CancelFunc
	warn   func(string)

	failed   atomic.Bool
	failOnce sync.Once
	missing  sync.Map // Key -> struct{}: known absent this run

	hits, misses, refused, uploads, down, up, nanos atomic.Int64
	checked, present                                atomic.Int64

	// Write-through (ensure): local reads the directory's entry; keys
	// found there wait in checks for the checker, which asks the remote
	// which it lacks, a batch at a time. ensured holds every key this run
	// uploaded, fetched, or queued for a check: each is sent or checked
	// once.
	local     func(Key) (localEntry, bool)
	checks    chan Key
	checkOnce sync.Once
	ensured   sync.Map // Key -> struct{}

	refusedShown atomic.Int64
	queue        chan upload
	workers      sync.WaitGroup
	pending      sync.WaitGroup // uploads queued and not yet done
	startOnce    sync.Once
}

// upload is one entry to send: its content (when not inline) before its
// record.
type upload struct {
	key     Key
	record  []byte // nil: the remote has it (only the content is sent)
	content []byte // nil when the value is inline in the record, or the remote has it
	digest  [sha256.Size]byte
	// missing: the remote is known to lack the content (no HEAD first).
	missing bool
}

// localEntry is an entry as the directory holds it, for write-through:
// its line and its value.
type localEntry struct {
	line      []byte
	value     []byte
	digest    [sha256.Size]byte
	sensitive bool
}

// checkBatch bounds the entries one existence check asks about (each
// one object, or two with its content).
const checkBatch = remote.MaxMissing / 2

// uploadWorkers bound the concurrent uploads.
const uploadWorkers = 8

// maxRefusedWarnings bounds the warnings about refused objects; the
// stats count them all.
const maxRefusedWarnings = 5

// SetRemote puts a remote cache behind s (nothing on a nil Store). Call it
// before the store is used; Close waits for the uploads.
func (s *Store) SetRemote(ctx context.Context, o RemoteOptions) {
	if s == nil || o.Backend == nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	s.remote = &remoteLayer{RemoteOptions: o, ctx: ctx, cancel: cancel, warn: s.opts.Warn, local: s.localEntry}
}

// WritesThrough reports whether s has a remote cache it writes (with
// RemoteOptions.Write): every entry a run finds in the directory is then
// checked against the remote (see RemoteOptions). A command that can
// skip looking entries up (an up-to-date root) looks them up instead.
func (s *Store) WritesThrough() bool {
	return s != nil && s.remote != nil && s.remote.Write
}

// RemoteStats returns the counts of the remote cache (zero without one).
func (s *Store) RemoteStats() RemoteStats {
	if s == nil || s.remote == nil {
		return RemoteStats{}
	}
	r := s.remote
	return RemoteStats{URL: r.Backend.String(), Hits: r.hits.Load(), Misses: r.misses.Load(), Refused: r.refused.Load(),
		Uploads: r.uploads.Load(), Checked: r.checked.Load(), Present: r.present.Load(), BytesDown: r.down.Load(), BytesUp: r.up.Load(),
		Seconds: time.Duration(r.nanos.Load()).Seconds(), Failed: r.failed.Load()}
}

// fail reports the remote's first failure, once, and stops using it.
func (r *remoteLayer) fail(err error) {
	r.failed.Store(true)
	r.failOnce.Do(func() {
		r.warn(fmt.Sprintf("remote cache %s: %v; going on without it", r.Backend, err))
	})
}

// refuse reports an object that failed verification.
func (r *remoteLayer) refuse(kind remote.Kind, name, why string) {
	r.refused.Add(1)
	switch n := r.refusedShown.Add(1); {
	case n <= maxRefusedWarnings:
		r.warn(fmt.Sprintf("remote cache %s: refused %s/%s: %s; building it here", r.Backend, kind, name, why))
	case n == maxRefusedWarnings+1:
		r.warn(fmt.Sprintf("remote cache %s: more objects refused; the counts are in --stats and the report", r.Backend))
	}
}

// get reads one object, timing it; found is false for a missing object,
// and for any failure (after which the remote is not used again).
func (r *remoteLayer) get(kind remote.Kind, name string) ([]byte, bool) {
	if r.failed.Load() {
		return nil, false
	}
	t0 := time.Now()
	data, err := r.Backend.Get(r.ctx, kind, name)
	r.nanos.Add(int64(time.Since(t0)))
	switch {
	case errors.Is(err, remote.ErrNotFound):
		return nil, false
	case err != nil:
		r.fail(err)
		return nil, false
	}
	r.down.Add(int64(len(data)))
	return data, true
}

// fetch looks key up in the remote: the verified value and whether it is
// sensitive. A refused object is a miss.
func (r *remoteLayer) fetch(key Key) (value []byte, sensitive, ok bool) {
	if r.failed.Load() {
		return nil, false, false
	}
	if _, known := r.missing.Load(key); known {
		return nil, false, false
	}
	miss := func() ([]byte, bool, bool) {
		if !r.failed.Load() {
			r.misses.Add(1)
			r.missing.Store(key, struct{}{})
		}
		return nil, false, false
	}
	kh := hex.EncodeToString(key[:])
	rec, found := r.get(remote.AC, kh)
	if !found {
		return miss()
	}
	if len(rec) < entrySize {
		r.refuse(remote.AC, kh, "not a kpipe action record")
		return miss()
	}
	e, valid := parseEntry(key, rec[:entrySize])
	if !valid {
		r.refuse(remote.AC, kh, "not a kpipe action record for this key")
		return miss()
	}
	if len(rec) > entrySize || e.size == 0 {
		value = rec[entrySize:]
		if int64(len(value)) != e.size || sha256.Sum256(value) != e.digest {
			r.refuse(remote.AC, kh, "its value does not match the record's SHA-256")
			return miss()
		}
	} else {
		dh := hex.EncodeToString(e.digest[:])
		if value, found = r.get(remote.CAS, dh); !found {
			return miss() // a record whose content is missing is a miss
		}
		if int64(len(value)) != e.size || sha256.Sum256(value) != e.digest {
			r.refuse(remote.CAS, dh, "its content does not match its SHA-256")
			return miss()
		}
	}
	r.hits.Add(1)
	return value, e.sensitive, true
}

// send queues an entry for upload when the options allow it.
func (r *remoteLayer) send(key Key, record, value []byte, digest [sha256.Size]byte, sensitive bool) {
	if !r.Write || (sensitive && !r.Sensitive) || r.failed.Load() {
		return
	}
	r.ensured.Store(key, struct{}{})
	// Copies: the caller may reuse its buffers once Put returns.
	u := upload{key: key, digest: digest}
	if len(value) <= inlineMax {
		u.record = append(append([]byte(nil), record...), value...)
	} else {
		u.record = append([]byte(nil), record...)
		u.content = append([]byte(nil), value...)
	}
	r.queueUpload(u)
}

// queueUpload hands u to the upload workers, starting them on first use.
func (r *remoteLayer) queueUpload(u upload) {
	r.startOnce.Do(func() {
		r.queue = make(chan upload, 4*uploadWorkers)
		for range uploadWorkers {
			r.workers.Add(1)
			go func() {
				defer r.workers.Done()
				for u := range r.queue {
					r.upload(u)
					r.pending.Done()
				}
			}()
		}
	})
	r.pending.Add(1)
	select {
	case r.queue <- u:
	case <-r.ctx.Done():
		r.pending.Done()
	}
}

// upload sends one entry: content first (unless the remote has it), then
// the record, so that no record names content the remote lacks.
func (r *remoteLayer) upload(u upload) {
	if r.failed.Load() {
		return
	}
	t0 := time.Now()
	defer func() { r.nanos.Add(int64(time.Since(t0))) }()
	if u.content != nil {
		dh := hex.EncodeToString(u.digest[:])
		has := false
		if !u.missing {
			var err error
			if has, err = r.Backend.Has(r.ctx, remote.CAS, dh); err != nil {
				r.fail(err)
				return
			}
		}
		if !has {
			if err := r.Backend.Put(r.ctx, remote.CAS, dh, u.content); err != nil {
				r.fail(err)
				return
			}
			r.up.Add(int64(len(u.content)))
		}
	}
	if u.record == nil {
		r.uploads.Add(1)
		return
	}
	if err := r.Backend.Put(r.ctx, remote.AC, hex.EncodeToString(u.key[:]), u.record); err != nil {
		r.fail(err)
		return
	}
	r.up.Add(int64(len(u.record)))
	r.uploads.Add(1)
}

// ensure queues key, found in the directory, for a check against the
// remote (with Write): uploaded if the remote lacks it (checker).
func (r *remoteLayer) ensure(key Key) {
	if !r.Write || r.failed.Load() {
		return
	}
	if _, seen := r.ensured.LoadOrStore(key, struct{}{}); seen {
		return
	}
	r.checkOnce.Do(func() {
		r.checks = make(chan Key, checkBatch)
		go r.checker()
	})
	r.pending.Add(1)
	select {
	case r.checks <- key:
	case <-r.ctx.Done():
		r.pending.Done()
	}
}

// checker gathers the keys ensure queues into batches (what is queued
// when it is free, up to checkBatch) and checks each (checkAll). A batch
// is closed as soon as nothing more waits, so a flush never waits on a
// timer.
func (r *remoteLayer) checker() {
	for {
		var batch []Key
		select {
		case k := <-r.checks:
			batch = append(batch, k)
		case <-r.ctx.Done():
			return
		}
	gather:
		for len(batch) < checkBatch {
			select {
			case k := <-r.checks:
				batch = append(batch, k)
			default:
				break gather
			}
		}
		r.checkAll(batch)
		for range batch {
			r.pending.Done()
		}
	}
}

// checkAll asks the remote which of keys' entries (records, and the
// content of those not inline) it lacks, and queues the uploads.
func (r *remoteLayer) checkAll(keys []Key) {
	if r.failed.Load() {
		return
	}
	var entries []localEntry
	var objs []remote.Object
	var ks []Key
	for _, k := range keys {
		e, ok := r.local(k)
		if !ok || (e.sensitive && !r.Sensitive) {
			continue
		}
		entries, ks = append(entries, e), append(ks, k)
		objs = append(objs, remote.Object{Kind: remote.AC, Name: hex.EncodeToString(k[:])})
		if e.value != nil && len(e.value) > inlineMax {
			objs = append(objs, remote.Object{Kind: remote.CAS, Name: hex.EncodeToString(e.digest[:])})
		}
	}
	if len(entries) == 0 {
		return
	}
	t0 := time.Now()
	missing, err := r.missingOf(objs)
	r.nanos.Add(int64(time.Since(t0)))
	if err != nil {
		r.fail(err)
		return
	}
	r.checked.Add(int64(len(entries)))
	for i, e := range entries {
		k := ks[i]
		recMissing := missing[remote.Object{Kind: remote.AC, Name: hex.EncodeToString(k[:])}]
		big := len(e.value) > inlineMax
		contentMissing := big && missing[remote.Object{Kind: remote.CAS, Name: hex.EncodeToString(e.digest[:])}]
		if !recMissing && !contentMissing {
			r.present.Add(1)
			continue
		}
		u := upload{key: k, digest: e.digest, missing: contentMissing}
		if recMissing {
			if big {
				u.record = e.line
			} else {
				u.record = append(e.line[:len(e.line):len(e.line)], e.value...)
			}
		}
		if contentMissing {
			u.content = e.value
		}
		r.queueUpload(u)
	}
}

// missingOf returns which of objs the remote lacks: in requests of
// remote.MaxMissing objects where the backend can (remote.Finder), else
// with a HEAD each, uploadWorkers at a time.
func (r *remoteLayer) missingOf(objs []remote.Object) (map[remote.Object]bool, error) {
	out := map[remote.Object]bool{}
	if f, ok := r.Backend.(remote.Finder); ok {
		for len(objs) > 0 {
			n := min(len(objs), remote.MaxMissing)
			missing, err := f.Missing(r.ctx, objs[:n])
			if errors.Is(err, remote.ErrUnsupported) {
				break
			}
			if err != nil {
				return nil, err
			}
			for _, o := range missing {
				out[o] = true
			}
			objs = objs[n:]
		}
		if len(objs) == 0 {
			return out, nil
		}
	}
	var mu sync.Mutex
	var firstErr error
	next := make(chan remote.Object)
	var wg sync.WaitGroup
	for range min(uploadWorkers, len(objs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range next {
				has, err := r.Backend.Has(r.ctx, o.Kind, o.Name)
				mu.Lock()
				switch {
				case err != nil && firstErr == nil:
					firstErr = err
				case err == nil && !has:
					out[o] = true
				}
				mu.Unlock()
			}
		}()
	}
	for _, o := range objs {
		next <- o
	}
	close(next)
	wg.Wait()
	return out, firstErr
}

// flush waits for the uploads queued so far.
func (r *remoteLayer) flush() { r.pending.Wait() }

// close waits for the queued checks and uploads.
func (r *remoteLayer) close() {
	r.pending.Wait()
	if r.queue != nil {
		close(r.queue)
		r.workers.Wait()
	}
	r.cancel()
}
