package resource

import "fmt"

// List is an ordered set of resources with unique current IDs: kustomize's
// ResMap. Its elements may be frozen (shared with other lists); Edit returns
// a private copy before anything is changed.
type List struct {
	items []*Resource
}

// NewList returns a list of the given resources, without checking IDs.
func NewList(rs ...*Resource) *List {
	return &List{items: append([]*Resource(nil), rs...)}
}

// Len returns the number of resources.
func (l *List) Len() int { return len(l.items) }

// At returns the i-th resource for reading.
func (l *List) At(i int) *Resource { return l.items[i] }

// All returns the resources in order. The slice must not be modified.
func (l *List) All() []*Resource { return l.items }

// Edit returns the i-th resource ready for modification, replacing a frozen
// element by a private clone first.
func (l *List) Edit(i int) *Resource {
	r := l.items[i]
	if r.Frozen() {
		r = r.Clone()
		l.items[i] = r
	}
	return r
}

// EditTree is Edit for a caller that replaces the resource's object tree
// whole (SetObject) before it changes anything in it, reading it at most:
// a frozen element's private clone then shares the frozen tree until it
// is replaced, instead of copying it first. (A JSON patch, for one, builds
// the patched object apart; copying the tree it replaces was about 4% of
// the bytes a cold build allocated.)
func (l *List) EditTree(i int) *Resource {
	r := l.items[i]
	if r.Frozen() {
		r = r.cloneState()
		l.items[i] = r
	}
	return r
}

// Set replaces the i-th resource.
func (l *List) Set(i int, r *Resource) { l.items[i] = r }

// Remove deletes the i-th resource.
func (l *List) Remove(i int) {
	l.items = append(l.items[:i:i], l.items[i+1:]...)
}

// Keep deletes the resources for which keep is false, in one pass (Remove
// in a loop copies the list once a resource).
func (l *List) Keep(keep func(i int, r *Resource) bool) {
	kept := make([]*Resource, 0, len(l.items))
	for i, r := range l.items {
		if keep(i, r) {
			kept = append(kept, r)
		}
	}
	l.items = kept
}

// Append adds r, failing when a resource with the same current ID exists.
func (l *List) Append(r *Resource) error {
	id := r.ID()
	for _, o := range l.items {
		if o.ID().Equals(id) {
			return fmt.Errorf("may not add resource with an already registered id: %s", id)
		}
	}
	l.items = append(l.items, r)
	return nil
}

// AppendAll appends every resource of o in order, failing on the first
// duplicate ID.
func (l *List) AppendAll(o *List) error {
	if len(o.items) < 2 {
		for _, r := range o.items {
			if err := l.Append(r); err != nil {
				return err
			}
		}
		return nil
	}
	return NewAppender(l).AppendAll(o)
}

// An Appender appends to a list while keeping an index of its current IDs,
// so that each duplicate check is a map lookup (appending many resources
// one at a time with List.Append compares every pair). The list must not
// change other than through the Appender while it is in use.
type Appender struct {
	l   *List
	ids map[ID]bool
}

// NewAppender indexes l's current IDs.
func NewAppender(l *List) *Appender {
	a := &Appender{l: l, ids: make(map[ID]bool, len(l.items))}
	for _, r := range l.items {
		a.ids[r.ID().Key()] = true
	}
	return a
}

// AppendAll appends every resource of o in order, failing on the first
// duplicate ID (the resources before it are appended).
func (a *Appender) AppendAll(o *List) error {
	for _, r := range o.items {
		if err := a.Append(r); err != nil {
			return err
		}
	}
	return nil
}

// Append appends r, failing when a resource with the same current ID
// exists, as List.Append does.
func (a *Appender) Append(r *Resource) error {
	id := r.ID()
	if a.ids[id.Key()] {
		return fmt.Errorf("may not add resource with an already registered id: %s", id)
	}
	a.ids[id.Key()] = true
	a.l.items = append(a.l.items, r)
	return nil
}

// Settle settles every resource (see Resource.Settle): call it when
// nobody holds a tree of the list for writing, as between stages.
func (l *List) Settle() {
	for _, r := range l.items {
		r.Settle()
	}
}

// Freeze freezes every resource so the list can be shared.
func (l *List) Freeze() {
	for _, r := range l.items {
		r.Freeze()
	}
}

// Copy returns a new list holding the same resources. Freeze the list first
// when either copy will be edited.
func (l *List) Copy() *List {
	return &List{items: append([]*Resource(nil), l.items...)}
}

// Replace sets the whole content of the list.
func (l *List) Replace(rs []*Resource) { l.items = rs }

// ByCurrentID returns the indexes of the resources whose current ID equals id.
func (l *List) ByCurrentID(id ID) []int {
	var out []int
	for i, r := range l.items {
		if r.ID().Equals(id) {
			out = append(out, i)
		}
	}
	return out
}

// ByAnyID returns the indexes of the resources whose current or previous
// IDs include id.
func (l *List) ByAnyID(id ID) []int {
	var out []int
	for i, r := range l.items {
		if r.AnyID(id.Equals) {
			out = append(out, i)
		}
	}
	return out
}
