package stages

import (
	"context"
	"fmt"
	"sort"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// The sort orders of the sortOptions field.
const (
	OrderLegacy = "legacy"
	orderFIFO   = "fifo"
)

// defaultLegacyOrder returns kustomize's default legacy kind order.
func defaultLegacyOrder() *loaders.LegacySortOptions {
	first, last := resource.DefaultKindOrder()
	return &loaders.LegacySortOptions{OrderFirst: first, OrderLast: last}
}

type sortOrder struct {
	opts loaders.SortOptions
}

// NewSortOrder returns the stage that orders a build's output. Kustomize
// runs it only on the final output, from the sortOptions field or the
// --reorder flag; it is not available under `transformers:`.
func NewSortOrder(opts loaders.SortOptions) (Stage, error) {
	if opts.Order == OrderLegacy && opts.LegacySortOptions == nil {
		opts.LegacySortOptions = defaultLegacyOrder()
	}
	if opts.Order != orderFIFO && opts.Order != OrderLegacy {
		return nil, fmt.Errorf("the field 'sortOptions.order' must be one of [%s, %s]", orderFIFO, OrderLegacy)
	}
	if opts.Order == orderFIFO && opts.LegacySortOptions != nil {
		return nil, fmt.Errorf("the field 'sortOptions.legacySortOptions' is set but the selected sort order is '%s', not 'legacy'", opts.Order)
	}
	return &sortOrder{opts: opts}, nil
}

func (s *sortOrder) Kind() string        { return "SortOrderTransformer" }
func (s *sortOrder) Cheap()              {}
func (s *sortOrder) Fingerprint() []byte { return Fingerprint(s.Kind(), s.opts) }

func (s *sortOrder) Run(_ context.Context, rs *resource.List) error {
	if s.opts.Order != OrderLegacy {
		return nil
	}
	rank := resource.KindRanks(s.opts.LegacySortOptions.OrderFirst, s.opts.LegacySortOptions.OrderLast)
	// The keys are made once an object, not once a comparison.
	items := make([]legacyKey, rs.Len())
	for i, r := range rs.All() {
		id := r.ID()
		items[i] = legacyKey{id: id, rank: rank[id.Kind], order: id.GVK.OrderKey(), idKey: legacyIDKey(id), r: r}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].less(&items[j]) })
	out := make([]*resource.Resource, len(items))
	for i, it := range items {
		out[i] = it.r
	}
	rs.Replace(out)
	return nil
}

// legacyKey is what the legacy order compares of an object.
type legacyKey struct {
	id    resource.ID
	rank  int    // of the kind, in the orderFirst and orderLast lists
	order string // id.GVK.OrderKey()
	idKey string // legacyIDKey(id)
	r     *resource.Resource
}

// less orders by GVK (kind rank, then group, version and kind), then by
// namespace and name.
func (a *legacyKey) less(b *legacyKey) bool {
	if a.id.GVK == b.id.GVK {
		return a.idKey < b.idKey
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	// Kustomize puts a Namespace of some group before the core Namespace.
	if a.id.Kind == "Namespace" && b.id.Kind == "Namespace" && (a.id.Group == "" || b.id.Group == "") {
		return a.order > b.order
	}
	return a.order < b.order
}

func legacyIDKey(id resource.ID) string {
	return id.GVK.String() + "|" + orDefault(id.Namespace, "~X") + "|" + orDefault(id.Name, "~N")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
