package engine

import (
	"bytes"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resource"
)

// render writes a root's output as output.Marshal does, encoding each
// frozen resource once per run: a frozen resource never changes and is
// shared by every root that leaves it as its base made it, so its bytes,
// kept with the resource itself (and freed with it), serve them all.
// Resources a root changed (not frozen) are encoded for that root alone.
func (b *Builder) render(list []*resource.Resource) ([]byte, error) {
	var buf bytes.Buffer
	for i, r := range list {
		y, err := b.encodeOnce(r)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(y)
	}
	return buf.Bytes(), nil
}

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
