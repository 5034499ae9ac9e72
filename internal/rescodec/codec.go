// Package rescodec is the binary encoding of resource lists that kpipe's
// cache stores and hashes: the object tree with every scalar's Go type
// kept (an int stays an int, a float a float), and the build state.
// EncodeList writes map keys in sorted order, so equal resources encode to
// equal bytes and the encoding can be hashed; AppendListUnsorted, for
// values only stored, does not sort.
//
// It imports the resource package only.
package rescodec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/kpipe/kpipe/resource"
)

// Value tags of the encoding.
const (
	tagNil byte = iota
	tagString
	tagFalse
	tagTrue
	tagInt
	tagInt64
	tagUint64
	tagFloat64
	tagTime
	tagMap
	tagList
	tagEmptyNull
	tagFlowEmptyNull
)

// codecVersion starts every encoded list; bump it when the format changes.
const codecVersion byte = 2

// unencodable is the panic value for a value of a type the encoding does
// not know; EncodeList turns it into an error.
type unencodable struct{ t string }

// appendEncoded appends the encoding of r to buf, its map keys sorted
// when sorted is true.
func appendEncoded(buf []byte, r *resource.Resource, sorted bool) []byte {
	buf = appendValue(buf, r.Object(), sorted)
	prev := r.PrevIDs()
	buf = binary.AppendUvarint(buf, uint64(len(prev)))
	for _, p := range prev {
		buf = appendString(appendString(appendString(buf, p.Kind), p.Name), p.Namespace)
	}
	refBy := r.RefBy()
	buf = binary.AppendUvarint(buf, uint64(len(refBy)))
	for _, id := range refBy {
		buf = appendID(buf, id)
	}
	refVars := r.RefVarNames()
	buf = binary.AppendUvarint(buf, uint64(len(refVars)))
	for _, v := range refVars {
		buf = appendString(buf, v)
	}
	if r.Gen == nil {
		buf = append(buf, 0)
	} else {
		buf = append(buf, 1)
		buf = appendString(buf, r.Gen.Behavior)
		buf = appendBool(buf, r.Gen.NeedsHash)
	}
	keys := r.NonStringKeys()
	buf = binary.AppendUvarint(buf, uint64(len(keys)))
	for _, k := range keys {
		buf = binary.AppendUvarint(buf, uint64(len(k.Path)))
		for _, p := range k.Path {
			buf = appendString(buf, p)
		}
		buf = appendString(appendString(buf, k.Key), k.Tag)
	}
	return buf
}

// EncodeList encodes the resources of l, in order. It fails only when an
// object holds a value of a type YAML decoding never produces (which a
// stage put there); callers then do without the cache.
func EncodeList(l *resource.List) ([]byte, error) {
	return appendList(nil, l, true)
}

// AppendListUnsorted appends the encoding of l to buf with each map's keys
// in the order the map gives them. It decodes (DecodeList) to the same
// resources as EncodeList's encoding and costs less to write, but equal
// lists may encode to different bytes: it is for values that are stored,
// never for values that are hashed into a key.
func AppendListUnsorted(buf []byte, l *resource.List) ([]byte, error) {
	return appendList(buf, l, false)
}

func appendList(buf []byte, l *resource.List, sorted bool) (_ []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			u, ok := p.(unencodable)
			if !ok {
				panic(p)
			}
			buf, err = nil, fmt.Errorf("cannot encode a value of type %s in a resource", u.t)
		}
	}()
	buf = append(buf, codecVersion)
	buf = binary.AppendUvarint(buf, uint64(l.Len()))
	for _, r := range l.All() {
		buf = appendEncoded(buf, r, sorted)
	}
	return buf, nil
}

// DecodeList decodes what EncodeList wrote. The resources are new and
// unfrozen.
func DecodeList(data []byte) (*resource.List, error) {
	d := &decoder{buf: data}
	if v := d.byte(); v != codecVersion {
		return nil, fmt.Errorf("resource encoding version %d, want %d", v, codecVersion)
	}
	n := d.uvarint()
	if n > uint64(len(data)) {
		return nil, errBadEncoding
	}
	items := make([]*resource.Resource, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		items = append(items, d.resource())
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.buf) != 0 {
		return nil, errBadEncoding
	}
	l := resource.NewList()
	l.Replace(items)
	return l, nil
}

var errBadEncoding = errors.New("malformed resource encoding")

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func appendBool(buf []byte, v bool) []byte {
	if v {
		return append(buf, 1)
	}
	return append(buf, 0)
}

func appendID(buf []byte, id resource.ID) []byte {
	for _, s := range []string{id.Group, id.Version, id.Kind, id.Name, id.Namespace} {
		buf = appendString(buf, s)
	}
	return buf
}

// appendValue appends the encoding of v, each map's keys sorted when
// sorted is true (else in map order).
func appendValue(buf []byte, v any, sorted bool) []byte {
	switch t := v.(type) {
	case map[string]any:
		buf = binary.AppendUvarint(append(buf, tagMap), uint64(len(t)))
		if !sorted {
			for k, e := range t {
				buf = appendValue(appendString(buf, k), e, false)
			}
			return buf
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			buf = appendValue(appendString(buf, k), t[k], true)
		}
		return buf
	case []any:
		buf = binary.AppendUvarint(append(buf, tagList), uint64(len(t)))
		for _, e := range t {
			buf = appendValue(buf, e, sorted)
		}
		return buf
	}
	return appendScalar(buf, v)
}

// appendScalar appends the encoding of a value that is not a map or list.
func appendScalar(buf []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return append(buf, tagNil)
	case resource.EmptyNull:
		if t.Flow {
			return append(buf, tagFlowEmptyNull)
		}
		return append(buf, tagEmptyNull)
	case string:
		return appendString(append(buf, tagString), t)
	case bool:
		if t {
			return append(buf, tagTrue)
		}
		return append(buf, tagFalse)
	case int:
		return binary.AppendVarint(append(buf, tagInt), int64(t))
	case int64:
		return binary.AppendVarint(append(buf, tagInt64), t)
	case uint64:
		return binary.AppendUvarint(append(buf, tagUint64), t)
	case float64:
		return binary.BigEndian.AppendUint64(append(buf, tagFloat64), math.Float64bits(t))
	case time.Time:
		return appendString(append(buf, tagTime), t.Format(time.RFC3339Nano))
	}
	panic(unencodable{fmt.Sprintf("%T", v)})
}

type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errBadEncoding
	}
	d.buf = nil
}

func (d *decoder) byte() byte {
	if len(d.buf) == 0 {
		d.fail()
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.buf)) {
		d.fail()
		return ""
	}
	s := string(d.buf[:n])
	d.buf = d.buf[n:]
	return s
}

func (d *decoder) id() resource.ID {
	var id resource.ID
	id.Group, id.Version, id.Kind, id.Name, id.Namespace = d.string(), d.string(), d.string(), d.string(), d.string()
	return id
}

func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.buf)) { // every element takes at least a byte
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) resource() *resource.Resource {
	obj, ok := d.value().(map[string]any)
	if !ok {
		d.fail()
		return nil
	}
	r := resource.New(obj)
	for i, n := 0, d.count(); i < n; i++ {
		r.AddPrevID(resource.ID{GVK: resource.GVK{Kind: d.string()}, Name: d.string(), Namespace: d.string()})
	}
	for i, n := 0, d.count(); i < n; i++ {
		r.AddRefBy(d.id())
	}
	for i, n := 0, d.count(); i < n; i++ {
		r.AddRefVarName(d.string())
	}
	if d.byte() == 1 {
		r.Gen = &resource.Generated{Behavior: d.string(), NeedsHash: d.byte() == 1}
	}
	for i, n := 0, d.count(); i < n; i++ {
		var k resource.FieldKey
		for j, m := 0, d.count(); j < m; j++ {
			k.Path = append(k.Path, d.string())
		}
		k.Key, k.Tag = d.string(), d.string()
		r.AddNonStringKey(k)
	}
	return r
}

func (d *decoder) value() any {
	switch d.byte() {
	case tagNil:
		return nil
	case tagEmptyNull:
		return resource.EmptyNull{}
	case tagFlowEmptyNull:
		return resource.EmptyNull{Flow: true}
	case tagString:
		return d.string()
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt:
		return int(d.varint())
	case tagInt64:
		return d.varint()
	case tagUint64:
		return d.uvarint()
	case tagFloat64:
		if len(d.buf) < 8 {
			d.fail()
			return nil
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(d.buf))
		d.buf = d.buf[8:]
		return f
	case tagTime:
		t, err := time.Parse(time.RFC3339Nano, d.string())
		if err != nil {
			d.fail()
		}
		return t
	case tagMap:
		n := d.count()
		m := make(map[string]any, n)
		for i := 0; i < n && d.err == nil; i++ {
			k := d.string()
			m[k] = d.value()
		}
		return m
	case tagList:
		n := d.count()
		l := make([]any, n)
		for i := 0; i < n && d.err == nil; i++ {
			l[i] = d.value()
		}
		return l
	}
	d.fail()
	return nil
}
