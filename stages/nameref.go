package stages

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// NewNameRef returns the name-reference fix-up: after prefixes, suffixes,
// namespaces and hash suffixes have renamed objects, every field that
// refers to a renamed object by its old name (a Deployment's configMapRef,
// a RoleBinding's subjects, ...) is rewritten to the new name. The back
// references say which fields of which kinds refer to which kinds.
//
// Only objects that were renamed are candidates. Among several candidates
// with the old name, kustomize's rules pick one: the referred kind (and a
// roleRef's apiGroup and kind), the referrer's namespace, then the
// prefixes and suffixes the two share. An ambiguous reference is an error.
func NewNameRef(backRefs []fieldspec.NameBackReference) Stage {
	return &nameRefStage{backRefs: backRefs}
}

type nameRefStage struct {
	backRefs []fieldspec.NameBackReference
}

func (s *nameRefStage) Kind() string        { return "NameReferenceTransformer" }
func (s *nameRefStage) Cheap()              {}
func (s *nameRefStage) Fingerprint() []byte { return Fingerprint(s.Kind(), s.backRefs) }

// nameRefJob is one field of a referrer to fix, and the back reference
// (the kind it refers to) that lists it: both point into the stage's
// configuration, which a large object's many jobs then do not copy.
type nameRefJob struct {
	field *loaders.FieldSpec
	ref   *fieldspec.NameBackReference
	// mayRename is true when the field may be the referrer's own
	// apiVersion, kind or metadata (see touchesIdentity).
	mayRename bool
}

// Run fixes the references of every object, in list order. The objects a
// reference may name are found through a referralIndex built once, so the
// stage costs time in proportion to the objects and references, not to
// their product (kubernetes-sigs/kustomize#5084).
func (s *nameRefStage) Run(_ context.Context, rs *resource.List) error {
	// The fields to fix depend on the original GVK only: the configuration
	// (hundreds of field specs) is matched once a GVK, not once an object.
	jobs := make([][]nameRefJob, rs.Len())
	byGVK := map[resource.GVK][]nameRefJob{}
	for i := range jobs {
		gvk := rs.At(i).OrigID().GVK
		js, ok := byGVK[gvk]
		if !ok {
			for bi := range s.backRefs {
				br := &s.backRefs[bi]
				for fi := range br.FieldSpecs {
					if fs := &br.FieldSpecs[fi]; gvk.Selects(fs.GVK()) {
						js = append(js, nameRefJob{field: fs, ref: br, mayRename: touchesIdentity(fs)})
					}
				}
			}
			byGVK[gvk] = js
		}
		jobs[i] = js
	}
	var idx *referralIndex
	for i, js := range jobs {
		if len(js) == 0 {
			continue
		}
		if idx == nil {
			idx = newReferralIndex(rs)
		}
		scope, err := idx.scope(i)
		if err != nil {
			return err
		}
		for _, j := range js {
			f := nameRefFix{rs: rs, referrer: i, job: j, idx: idx, scope: scope}
			if err := f.run(); err != nil {
				return err
			}
			// A field that held the referrer's own identity (a
			// configuration naming apiVersion, kind or metadata) may have
			// changed it: index the list again. The scope stays the one
			// the referrer started with.
			if j.mayRename && rs.At(i).ID() != idx.ids[i] {
				idx = newReferralIndex(rs)
			}
		}
	}
	return nil
}

// touchesIdentity reports whether a walk of fs may write the object's
// apiVersion, kind or metadata: its first element that is not blank (a
// blank one stays on the object) names one of them, or it has none.
func touchesIdentity(fs *loaders.FieldSpec) bool {
	for _, e := range fs.PathElements() {
		name, _ := strings.CutSuffix(e, "[]")
		switch strings.TrimSpace(name) {
		case "":
			continue
		case "metadata", "kind", "apiVersion":
			return true
		}
		return false
	}
	return true
}

// referralIndex is what the stage looks objects up by, built from the
// list once: current IDs, the objects by previous name (only renamed
// objects can be referrals) and by the namespace they were first created
// in. References rewrite referrers' fields and add referrers to
// referrals; neither changes a name, so the index stays true for the
// whole stage unless a referrer's own identity changes (see Run).
type referralIndex struct {
	rs  *resource.List
	ids []resource.ID
	// byPrevName lists, in list order and once each, the objects with a
	// previous ID of that name.
	byPrevName map[string][]int
	// byOrigNS lists, in list order, the namespaced objects by the
	// effective namespace of their original ID.
	byOrigNS map[string][]int
	// origIn memoizes inScope.anyOrigIn by scope and namespace.
	origIn map[string]bool
}

func newReferralIndex(rs *resource.List) *referralIndex {
	x := &referralIndex{
		rs:         rs,
		ids:        make([]resource.ID, rs.Len()),
		byPrevName: map[string][]int{},
		byOrigNS:   map[string][]int{},
		origIn:     map[string]bool{},
	}
	for j, r := range rs.All() {
		x.ids[j] = r.ID()
		r.AnyPrevID(func(id resource.ID) bool {
			if l := x.byPrevName[id.Name]; len(l) == 0 || l[len(l)-1] != j {
				x.byPrevName[id.Name] = append(l, j)
			}
			return false
		})
		if o := r.OrigID(); !o.IsClusterScoped() {
			ns := o.EffectiveNamespace()
			x.byOrigNS[ns] = append(x.byOrigNS[ns], j)
		}
	}
	return x
}

// referralScope says which objects a referrer may refer to: all of them
// for a cluster-scoped referrer; else the cluster-scoped ones, those in
// its namespace, and for a RoleBinding those in the namespaces of its
// ServiceAccount subjects (kustomize's
// SubsetThatCouldBeReferencedByResource). It holds the IDs of the index
// it was made from, as they were when the referrer's fixes began.
type referralScope struct {
	from         *referralIndex
	ids          []resource.ID
	all          bool
	namespace    string // the referrer's effective namespace
	saNamespaces map[string]bool
	key          string // all, namespace and saNamespaces, for memos
}

// scope returns the scope of the i-th object.
func (x *referralIndex) scope(i int) (*referralScope, error) {
	referrer := x.rs.At(i)
	rid := x.ids[i]
	if rid.IsClusterScoped() {
		return &referralScope{from: x, ids: x.ids, all: true, key: "*"}, nil
	}
	s := &referralScope{from: x, ids: x.ids, namespace: rid.EffectiveNamespace(), saNamespaces: map[string]bool{}}
	if referrer.Kind() == "RoleBinding" {
		subjects, _ := referrer.Object()["subjects"].([]any)
		for _, e := range subjects {
			subj, _ := e.(map[string]any)
			ns, hasNS := subj["namespace"]
			kind, hasKind := subj["kind"]
			if !hasNS || !hasKind || kind != "ServiceAccount" {
				continue
			}
			str, ok := ns.(string)
			if !ok {
				return nil, fmt.Errorf("Invalid Input: namespace is blank for resource %q\n", rid.String()) //nolint:staticcheck // kustomize's message
			}
			s.saNamespaces[str] = true
		}
	}
	s.key = strings.Join(append([]string{s.namespace}, resource.SortedKeys(s.saNamespaces)...), "\x00")
	return s, nil
}

// has reports whether the j-th object is in the scope.
func (s *referralScope) has(j int) bool {
	if s.all {
		return true
	}
	id := s.ids[j]
	return id.IsClusterScoped() || id.EffectiveNamespace() == s.namespace || s.saNamespaces[id.Namespace]
}

// anyOrigIn reports whether an object in scope s was first created in
// namespace ns. The answer is kept for the scopes made from x: the
// referrers of one namespace share it.
func (x *referralIndex) anyOrigIn(s *referralScope, ns string) bool {
	key := s.key + "\x01" + ns
	if found, ok := x.origIn[key]; ok && s.from == x {
		return found
	}
	found := false
	for _, j := range x.byOrigNS[ns] {
		if s.has(j) {
			found = true
			break
		}
	}
	if s.from == x {
		x.origIn[key] = found
	}
	return found
}

// nameRefFix fixes one field of one referrer.
type nameRefFix struct {
	rs       *resource.List
	referrer int
	job      nameRefJob
	idx      *referralIndex
	scope    *referralScope
}

func (f *nameRefFix) run() error {
	r := f.rs.At(f.referrer)
	fs := *f.job.field
	fs.Group, fs.Version, fs.Kind = "", "", ""
	// Read the referrer's ID before Edit: the walk may change its fields.
	id := r.ID()
	err := fieldspec.Walk(f.rs.Edit(f.referrer).Edit(), fs, fieldspec.CreateNone, f.set)
	if err != nil {
		return fmt.Errorf("updating name reference in '%s' field of '%s': %w", fs.Path, id, err)
	}
	return nil
}

// set fixes the reference held in one field: a name, a map with a name
// (and maybe a namespace), or a list of either.
func (f *nameRefFix) set(fl fieldspec.Field) error {
	switch v := fl.Value().(type) {
	case nil:
		return nil
	case map[string]any:
		return f.setMap(v)
	case []any:
		for i, e := range v {
			switch e := e.(type) {
			case nil, resource.EmptyNull:
			case map[string]any:
				if err := f.setMap(e); err != nil {
					return err
				}
			case []any:
				return fmt.Errorf("element %d of the list is expected to be either a string or a map of string, not a list", i)
			default:
				if err := f.setScalar(e, func(s string) { v[i] = s }); err != nil {
					return err
				}
			}
		}
		return nil
	default:
		return f.setScalar(v, func(s string) { fl.Set(s) })
	}
}

// setScalar fixes a name held as a scalar.
func (f *nameRefFix) setScalar(v any, setTo func(string)) error {
	old, _ := resource.ScalarString(v)
	j, err := f.selectReferral(old, f.scope.has, false)
	if err != nil || j < 0 {
		return err
	}
	f.record(j)
	if name := f.rs.At(j).Name(); name != old {
		setTo(name)
	}
	return nil
}

// setMap fixes a reference held as a map with a name field and, maybe, a
// namespace field.
func (f *nameRefFix) setMap(m map[string]any) error {
	nameVal, ok := m["name"]
	if !ok {
		return errors.New("path config error; no 'name' field in node")
	}
	candidate := f.scope.has
	if nsVal, ok := m["namespace"]; ok {
		ns, _ := resource.ScalarString(nsVal)
		candidate = f.inNamespace(ns)
	}
	old, _ := resource.ScalarString(nameVal)
	j, err := f.selectReferral(old, candidate, true)
	if err != nil || j < 0 {
		return err
	}
	f.record(j)
	referral := f.rs.At(j)
	if referral.Name() == old && referral.Namespace() == "" {
		return nil
	}
	m["name"] = referral.Name()
	if ns := referral.Namespace(); ns != "" {
		m["namespace"] = ns
	}
	return nil
}

// inNamespace narrows the candidates to those first created in namespace
// ns, or, when there are none, to those now in it.
func (f *nameRefFix) inNamespace(ns string) func(int) bool {
	if f.idx.anyOrigIn(f.scope, ns) {
		return func(j int) bool {
			o := f.rs.At(j).OrigID()
			return f.scope.has(j) && !o.IsClusterScoped() && o.EffectiveNamespace() == ns
		}
	}
	return func(j int) bool {
		c := f.rs.At(j).ID()
		return f.scope.has(j) && !c.IsClusterScoped() && c.EffectiveNamespace() == ns
	}
}

// record notes on the referral that the referrer refers to it.
func (f *nameRefFix) record(j int) {
	id := f.rs.At(f.referrer).ID()
	f.rs.Edit(j).AddRefBy(id)
}

// selectReferral picks the object an old name refers to among the
// candidates (the objects with a previous name old that candidate
// accepts): -1 when none does. withNamespace says that candidates with the
// same name but different namespaces are still ambiguous.
func (f *nameRefFix) selectReferral(old string, candidate func(int) bool, withNamespace bool) (int, error) {
	referrer := f.rs.At(f.referrer)
	kinds := []resource.GVK{f.job.ref.GVK()}
	if strings.HasSuffix(f.job.field.Path, "roleRef/name") {
		if g, ok := roleRefGVK(referrer.Object()); ok {
			kinds = append(kinds, g)
		}
	}
	rid := referrer.ID()
	var c []int
	for _, j := range f.idx.byPrevName[old] {
		r := f.rs.At(j)
		if !candidate(j) || !prevSelectedByAll(r, kinds) {
			continue
		}
		cid := r.ID()
		if rid.IsClusterScoped() || cid.IsClusterScoped() || r.Kind() == "ServiceAccount" ||
			cid.EffectiveNamespace() == rid.EffectiveNamespace() {
			c = append(c, j)
		}
	}
	if len(c) == 1 {
		return c[0], nil
	}
	c = f.sieveAffixes(c, referrer, true)
	if len(c) > 1 {
		c = f.sieveAffixes(c, referrer, false)
	}
	switch {
	case len(c) == 1:
		return c[0], nil
	case len(c) == 0:
		return -1, nil
	case f.identical(c, withNamespace):
		return c[0], nil
	}
	ids := make([]string, len(c))
	details := &strings.Builder{}
	fmt.Fprintf(details, "\n**** Too many possible referral targets to referrer:\n%s\n", yamlOf(referrer))
	for i, j := range c {
		ids[i] = f.rs.At(j).ID().String()
		fmt.Fprintf(details, "--- possible referral %d:\n%s\n", i, yamlOf(f.rs.At(j)))
	}
	return -1, fmt.Errorf("found multiple possible referrals: %s\n%s", strings.Join(ids, ", "), details)
}

// sieveAffixes keeps the candidates whose name prefixes and suffixes end
// the same way as the referrer's; with allowEmpty, an object without
// prefixes (or suffixes) matches any.
func (f *nameRefFix) sieveAffixes(c []int, referrer *resource.Resource, allowEmpty bool) []int {
	var out []int
	for _, j := range c {
		r := f.rs.At(j)
		if sameEnding(r.NamePrefixes(), referrer.NamePrefixes(), allowEmpty) &&
			sameEnding(r.NameSuffixes(), referrer.NameSuffixes(), allowEmpty) {
			out = append(out, j)
		}
	}
	return out
}

// identical reports whether all candidates have the same name (and, with
// withNamespace, the same namespace), so that any of them will do.
func (f *nameRefFix) identical(c []int, withNamespace bool) bool {
	first := f.rs.At(c[0])
	for _, j := range c[1:] {
		r := f.rs.At(j)
		if r.Name() != first.Name() || (withNamespace && r.Namespace() != first.Namespace()) {
			return false
		}
	}
	return true
}

// sameEnding reports whether the shorter of a and b is a suffix of the
// longer (two empty lists match; an empty and a non-empty one match only
// with allowEmpty).
func sameEnding(a, b []string, allowEmpty bool) bool {
	if allowEmpty && (len(a) == 0 || len(b) == 0) {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 {
		return len(b) == 0
	}
	return strings.Join(b[len(b)-len(a):], "\x00") == strings.Join(a, "\x00")
}

// prevSelectedByAll reports whether, for every selector, one of r's
// previous IDs is selected by it.
func prevSelectedByAll(r *resource.Resource, sels []resource.GVK) bool {
	for _, sel := range sels {
		if !r.AnyPrevID(func(id resource.ID) bool { return id.GVK.Selects(sel) }) {
			return false
		}
	}
	return true
}

// roleRefGVK reads the apiGroup and kind a RoleBinding's roleRef names.
func roleRefGVK(obj map[string]any) (resource.GVK, bool) {
	ref, ok := obj["roleRef"].(map[string]any)
	if !ok {
		return resource.GVK{}, false
	}
	group, okG := ref["apiGroup"]
	kind, okK := ref["kind"]
	if !okG || !okK || group == nil || kind == nil {
		return resource.GVK{}, false
	}
	g, _ := resource.ScalarString(group)
	k, _ := resource.ScalarString(kind)
	return resource.GVK{Group: g, Kind: k}, true
}

// yamlOf renders an object for an error message.
func yamlOf(r *resource.Resource) string {
	b, err := output.MarshalValue(r.Object())
	if err != nil {
		return r.ID().String()
	}
	return string(b)
}
