package engine

import (
	"encoding/binary"
	"errors"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/rescodec"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// This file holds the memo's storage formats, each versioned on its own: a
// node's manifest of read sets (manifestFormat), a stored accumulation
// (accumulationFormat; its resources in internal/rescodec's encoding, its
// field specs and vars as extra.go writes them) and the lazy mark.

// lazyMark is the entry a lazy node (see resolve) or a component leaves
// under its full key in place of an accumulation: the proof that a build
// read exactly the files that key covers, which lets a later run take the
// key (candidates). It is no accumulation (decodeAccumulation refuses
// it): load builds the node when a dependent asks for it, and stores its
// accumulation over it.
var lazyMark = []byte("lazy")

// encodeManifest and decodeManifest store a manifest, the read sets of a
// node's builds (cache.Encoder's encoding): the count, and for each set
// its lazy mark, the count of its files and for each file its path as
// the kustomization names it and whether it is a tree. A node whose key
// is checked reads one and resolves each path again (candidates), so
// neither real paths nor digests are stored: the digests are in the full
// key, and the entry under it is the proof that they were read. A
// manifest is the same bytes for every node with its pre-key, wherever
// its tree lies and whatever its files hold.
func encodeManifest(sets []readSet) []byte {
	w := cache.NewEncoder(manifestFormat)
	w.Uint(len(sets))
	for _, s := range sets {
		w.Bool(s.lazy)
		w.Uint(len(s.recs))
		for _, r := range s.recs {
			w.String(r.Path)
			w.Bool(r.Tree)
		}
	}
	return w.Bytes()
}

const manifestFormat = 4

// decodeManifest reads what encodeManifest wrote; false for anything
// else, and for more than maxReadSets sets.
func decodeManifest(data []byte) (sets []readSet, ok bool) {
	r := cache.NewDecoder(data, manifestFormat)
	n := r.Uint()
	if n > maxReadSets {
		return nil, false
	}
	sets = make([]readSet, 0, n)
	for i := 0; i < n; i++ {
		s := readSet{lazy: r.Bool()}
		c := r.Uint()
		s.recs = make([]readRecord, 0, c)
		for j := 0; j < c; j++ {
			s.recs = append(s.recs, readRecord{Path: r.String(), Tree: r.Bool()})
		}
		sets = append(sets, s)
	}
	return sets, r.Done()
}

// encodeAccumulation and decodeAccumulation store a node's result:
// accumulationFormat; 1 when Config is kustomize's default field specs,
// which most nodes have and which is large, so not stored, else 0; the
// length (uvarint) and encoding of the rest (encodeExtra: the Config when
// it is not the default, the Vars), empty when there is neither; then the
// resources in rescodec.AppendListUnsorted's encoding, which is most of
// the bytes. The encoding is written
// into a buffer reused across nodes (Builder.scratch) and copied out at
// its final size.
func (b *Builder) encodeAccumulation(acc *Accumulation) ([]byte, error) {
	var extra []byte
	if !acc.PlainConfig || len(acc.Vars.ByName) > 0 {
		var cfg *fieldspec.Config
		if !acc.PlainConfig {
			cfg = acc.Config
		}
		extra = encodeExtra(cfg, acc.Vars)
	}
	bp, _ := b.scratch.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	buf := append((*bp)[:0], accumulationFormat)
	if acc.PlainConfig {
		buf = append(buf, 1)
	} else {
		buf = append(buf, 0)
	}
	buf = binary.AppendUvarint(buf, uint64(len(extra)))
	buf = append(buf, extra...)
	rs := acc.Resources
	if rs == nil {
		rs = resource.NewList()
	}
	buf, err := rescodec.AppendListUnsorted(buf, rs)
	out := append([]byte(nil), buf...)
	if cap(buf) <= maxScratch {
		*bp = buf[:0]
		b.scratch.Put(bp)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// accumulationFormat is the first byte of a stored accumulation.
const accumulationFormat = 4

// maxScratch bounds the encoding buffer kept for the next node.
const maxScratch = 64 << 20

func (b *Builder) decodeAccumulation(data []byte) (*Accumulation, error) {
	if len(data) < 2 || data[0] != accumulationFormat || data[1] > 1 {
		return nil, errBadAccumulation
	}
	acc := &Accumulation{PlainConfig: data[1] == 1}
	n, w := binary.Uvarint(data[2:])
	rest := data[2:]
	if w <= 0 || n > uint64(len(rest)-w) {
		return nil, errBadAccumulation
	}
	extra, list := rest[w:w+int(n)], rest[w+int(n):]
	if len(extra) > 0 {
		cfg, vars, err := decodeExtra(extra)
		if err != nil {
			return nil, err
		}
		acc.Config, acc.Vars = cfg, vars
	}
	rs, err := rescodec.DecodeList(list)
	if err != nil {
		return nil, err
	}
	acc.Resources = rs
	if acc.PlainConfig {
		cfg, err := b.plainConfig()
		if err != nil {
			return nil, err
		}
		acc.Config = cfg
	}
	if acc.Config == nil {
		acc.Config = &fieldspec.Config{}
	}
	acc.Resources.Freeze()
	return acc, nil
}

var errBadAccumulation = errors.New("malformed stored accumulation")
