package engine

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/resource"
)

// render writes a root's output as output.Marshal does, encoding each
// frozen resource once per run: a frozen resource never changes and is
// shared by every root that leaves it as its base made it, so its bytes,
// kept with the resource itself (and freed with it), serve them all.
// Resources a root changed (not frozen) are encoded for that root alone.
func (b *Builder) render(list []*resource.Resource) ([]byte, error) {
	docs := make([][]byte, len(list))
	errs := make([]error, len(list))
	// The documents are encoded on up to Jobs goroutines and joined in
	// order below.
	forEach(len(list), b.opts.Jobs, func(i int) { docs[i], errs[i] = b.encodeOnce(list[i]) })
	size := 0
	for i, y := range docs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		size += len(y) + len("---\n")
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	for i, y := range docs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(y)
	}
	return buf.Bytes(), nil
}

// forEach calls fn(i) for every i in [0, n), on up to workers goroutines,
// this one among them (in order on this one alone when workers is one),
// each taking the next i; it returns when every call has returned.
func forEach(n, workers int, fn func(i int)) {
	workers = min(n, workers)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= n {
				return
			}
			fn(i)
		}
	}
	// The caller is one of the workers: its stack has grown already, a
	// new goroutine's grows again (the encoders recurse deeply).
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// encodeOnce returns r's document: encoded once per run when r is frozen
// (shared by roots), else for this root.
func (b *Builder) encodeOnce(r *resource.Resource) ([]byte, error) {
	if !r.Frozen() {
		return output.MarshalOne(r)
	}
	if y, ok := r.Encoded(); ok {
		return y, nil
	}
	y, err := output.MarshalOne(r)
	if err != nil {
		return nil, err
	}
	r.SetEncoded(y)
	return y, nil
}
