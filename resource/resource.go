package resource

import (
	"fmt"
	"sort"
	"sync/atomic"
)

// Resource is one object of a build: its tree and the build state kustomize
// keeps alongside it. See the package comment for the sharing rules.
type Resource struct {
	obj    map[string]any
	frozen bool

	// prev holds the names this object had before it was renamed, oldest
	// first; name references and patches use them to find it.
	prev []prevName

	// refBy lists the objects whose fields referred to this one when name
	// references were last fixed (kustomize's refBy build annotation).
	refBy []ID

	// refVars lists the names of vars whose objref selects this object.
	refVars []string

	// Gen is non-nil for objects made by a generator.
	Gen *Generated

	// keys are the map keys below the top level that are not strings,
	// which make kustomize fail (keys.go).
	keys []FieldKey

	// encoded caches the output encoding of a frozen resource (see
	// Encoded): it lives exactly as long as the resource.
	encoded atomic.Pointer[[]byte]

	// ident is the identity read from the tree, kept while identOK (see
	// ID). settled says that nobody holds the tree for writing, so the
	// identity read may be kept: set by Settle and Clone, cleared by every
	// change.
	ident   identity
	identOK bool
	settled bool
}

// identity is what ID and its parts read from the tree.
type identity struct {
	apiVersion string
	id         ID
}

// readIdentity reads the identity from the tree.
func (r *Resource) readIdentity() identity {
	av := LookupScalar(r.obj, "apiVersion")
	return identity{apiVersion: av, id: ID{
		GVK:       NewGVK(av, LookupScalar(r.obj, "kind")),
		Name:      LookupScalar(r.obj, "metadata", "name"),
		Namespace: LookupScalar(r.obj, "metadata", "namespace"),
	}}
}

// identity returns the identity: the one kept, or else read now, and
// kept when the resource is settled (a frozen one keeps it from Freeze
// on, so that shared resources are only read).
func (r *Resource) identity() identity {
	if r.identOK {
		return r.ident
	}
	id := r.readIdentity()
	if r.settled && !r.frozen {
		r.ident, r.identOK = id, true
	}
	return id
}

// Settle says that nobody holds the object's tree for writing any more (a
// map from Edit, New or SetObject), so that the identity read next may be
// kept until the next change (see ID). The engine calls it between
// stages. It does nothing to a frozen object.
func (r *Resource) Settle() {
	if !r.frozen {
		r.settled = true
	}
}

// Encoded returns the output encoding stored with SetEncoded, if any.
func (r *Resource) Encoded() ([]byte, bool) {
	if p := r.encoded.Load(); p != nil {
		return *p, true
	}
	return nil, false
}

// SetEncoded keeps the output encoding of a frozen resource with it, so
// that every root sharing the resource encodes it once; it does nothing
// for a resource that is not frozen (it may still change).
func (r *Resource) SetEncoded(y []byte) {
	if r.frozen {
		r.encoded.Store(&y)
	}
}

// prevName is one earlier identity of a resource. The group and version are
// taken from the current apiVersion, as kustomize does.
type prevName struct {
	Kind, Name, Namespace string
}

// Generated holds the generator options of a generated object.
type Generated struct {
	// Behavior is how the object merges with one of the same ID from a base:
	// "create" (or ""), "merge" or "replace".
	Behavior string
	// NeedsHash is true when a content hash will be appended to the name.
	NeedsHash bool
}

// New wraps an object tree. The tree becomes owned by the resource; the
// caller may still write it until the resource is frozen or settled.
func New(obj map[string]any) *Resource {
	return &Resource{obj: obj}
}

// Object returns the object tree for reading. Callers must not modify it;
// use Edit for that.
func (r *Resource) Object() map[string]any { return r.obj }

// Edit returns the object tree for modification. It panics when the resource
// is frozen: a frozen resource is shared, so the caller must Clone it first.
// The identity is read from the tree again until the resource is frozen or
// settled (see ID).
func (r *Resource) Edit() map[string]any {
	r.mustBeMutable()
	return r.obj
}

// mustBeMutable is called before every change: it panics on a frozen
// resource, and forgets the identity kept, which the change may make
// untrue.
func (r *Resource) mustBeMutable() {
	if r.frozen {
		panic(fmt.Sprintf("kpipe: internal error: modifying frozen resource %s (Clone it first)", r.ID()))
	}
	r.identOK, r.settled = false, false
}

// Freeze marks the resource as shared and immutable, and keeps its
// identity (it cannot change any more). Freezing a frozen resource writes
// nothing, so lists sharing frozen resources may be frozen concurrently.
func (r *Resource) Freeze() {
	if !r.frozen {
		if !r.identOK {
			r.ident, r.identOK = r.readIdentity(), true
		}
		r.frozen = true
	}
}

// Frozen reports whether the resource is shared and immutable.
func (r *Resource) Frozen() bool { return r.frozen }

// Clone returns an unfrozen deep copy of the resource, settled (its tree is
// new: nobody else holds it), with the identity it keeps.
func (r *Resource) Clone() *Resource {
	c := r.cloneState()
	c.obj = CopyMap(r.obj)
	return c
}

// cloneState returns an unfrozen copy of the resource's build state that
// shares its object tree (see List.EditTree).
func (r *Resource) cloneState() *Resource {
	c := &Resource{
		obj:     r.obj,
		prev:    append([]prevName(nil), r.prev...),
		refBy:   append([]ID(nil), r.refBy...),
		refVars: append([]string(nil), r.refVars...),
		keys:    r.keys[:len(r.keys):len(r.keys)], // never changed in place: appends copy
		ident:   r.ident,
		identOK: r.identOK,
		settled: true, // the tree is new, or frozen
	}
	if r.Gen != nil {
		g := *r.Gen
		c.Gen = &g
	}
	return c
}

// Mutable returns r itself when it may be modified, or a clone when it is
// frozen.
func (r *Resource) Mutable() *Resource {
	if r.frozen {
		return r.Clone()
	}
	return r
}

// SetObject replaces the object tree, keeping the build state. The caller
// may still write obj until the resource is frozen or settled.
func (r *Resource) SetObject(obj map[string]any) {
	r.mustBeMutable()
	r.obj = obj
}

// APIVersion returns the apiVersion field. It, Kind, Name and Namespace
// read the identity the resource keeps, when it may keep one (see ID).
func (r *Resource) APIVersion() string {
	if r.identOK || r.settled {
		return r.identity().apiVersion
	}
	return LookupScalar(r.obj, "apiVersion")
}

// Kind returns the kind field.
func (r *Resource) Kind() string {
	if r.identOK || r.settled {
		return r.identity().id.Kind
	}
	return LookupScalar(r.obj, "kind")
}

// Name returns metadata.name.
func (r *Resource) Name() string {
	if r.identOK || r.settled {
		return r.identity().id.Name
	}
	return LookupScalar(r.obj, "metadata", "name")
}

// Namespace returns metadata.namespace.
func (r *Resource) Namespace() string {
	if r.identOK || r.settled {
		return r.identity().id.Namespace
	}
	return LookupScalar(r.obj, "metadata", "namespace")
}

// LookupScalar returns the text of the scalar at path: a string as it is,
// a number or a boolean as kustomize reads it (`name: 123` is the name
// "123", `kind: 5` the kind "5"); "" for anything else.
func LookupScalar(obj map[string]any, path ...string) string {
	v, _ := Lookup(obj, path...)
	if s, ok := v.(string); ok {
		return s
	}
	s, _ := ScalarString(v)
	return s
}

// GVK returns the object's group, version and kind.
func (r *Resource) GVK() GVK { return r.identity().id.GVK }

// ID returns the object's current identity: its apiVersion, kind,
// metadata.name and metadata.namespace.
//
// A resource keeps them, read once, while its tree cannot change: from
// Freeze on (a frozen tree never changes), and from Settle or Clone to the
// next change (every change goes through the resource: a setter, or Edit,
// which hands out the tree). Otherwise they are read from the tree on each
// call. Stages ask for IDs of every object, often several times
// (kubernetes-sigs/kustomize#5084: recomputing IDs made a build of 4,000
// objects take 45 s). ID writes only to a resource that is not frozen,
// which belongs to one goroutine; frozen ones, shared, are only read.
func (r *Resource) ID() ID { return r.identity().id }

// SetName sets metadata.name.
func (r *Resource) SetName(name string) { r.setMeta("name", name) }

// SetNamespace sets metadata.namespace.
func (r *Resource) SetNamespace(ns string) { r.setMeta("namespace", ns) }

// SetKind sets the kind field.
func (r *Resource) SetKind(kind string) {
	r.mustBeMutable()
	r.obj["kind"] = kind
}

func (r *Resource) setMeta(field, value string) {
	r.mustBeMutable()
	md, err := EnsureMap(r.obj, "metadata")
	if err != nil {
		panic(err) // Decode guarantees metadata is a map.
	}
	md[field] = value
}

// Labels returns metadata.labels as strings.
func (r *Resource) Labels() map[string]string {
	v, _ := Lookup(r.obj, "metadata", "labels")
	return StringMap(v)
}

// Annotations returns metadata.annotations as strings.
func (r *Resource) Annotations() map[string]string {
	v, _ := Lookup(r.obj, "metadata", "annotations")
	return StringMap(v)
}

// Annotation returns one annotation, as Annotations()[key] would, without
// copying them all.
func (r *Resource) Annotation(key string) (string, bool) {
	ann, _ := Lookup(r.obj, "metadata", "annotations")
	m, _ := ann.(map[string]any)
	v, ok := m[key]
	if !ok {
		return "", false
	}
	s, _ := ScalarString(v)
	return s, true
}

// SetAnnotation sets one annotation.
func (r *Resource) SetAnnotation(key, value string) {
	r.mustBeMutable()
	m, err := EnsureMap(r.obj, "metadata", "annotations")
	if err != nil {
		panic(err)
	}
	m[key] = value
}

// SetLabel sets one label, creating metadata.labels when it is absent or
// null. It fails, changing nothing, when metadata.labels is not a map.
func (r *Resource) SetLabel(key, value string) error {
	r.mustBeMutable()
	m, err := EnsureMap(r.obj, "metadata", "labels")
	if err != nil {
		return err
	}
	m[key] = value
	return nil
}

// SetAnnotations replaces all annotations, written as strings, and removes
// the annotations map when ann is empty (kustomize's SetAnnotations).
func (r *Resource) SetAnnotations(ann map[string]string) {
	r.mustBeMutable()
	md, ok := r.obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	if len(ann) == 0 {
		delete(md, "annotations")
		return
	}
	m := make(map[string]any, len(ann))
	for k, v := range ann {
		m[k] = v
	}
	md["annotations"] = m
}

// RemoveAnnotation deletes one annotation, and the annotations map when it
// becomes empty.
func (r *Resource) RemoveAnnotation(key string) {
	r.removeMetaKey("annotations", key)
}

// RemoveLabel deletes one label, and the labels map when it becomes empty.
func (r *Resource) RemoveLabel(key string) {
	r.removeMetaKey("labels", key)
}

func (r *Resource) removeMetaKey(field, key string) {
	md := LookupMap(r.obj, "metadata")
	m, _ := md[field].(map[string]any)
	if _, ok := m[key]; !ok {
		return
	}
	r.mustBeMutable()
	delete(m, key)
	if len(m) == 0 {
		delete(md, field)
	}
}

// PrevIDs returns the IDs the object had before renames, oldest first.
func (r *Resource) PrevIDs() []ID {
	if len(r.prev) == 0 {
		return nil
	}
	g, v := r.groupVersion()
	ids := make([]ID, len(r.prev))
	for i, p := range r.prev {
		ids[i] = ID{GVK: GVK{Group: g, Version: v, Kind: p.Kind}, Name: p.Name, Namespace: p.Namespace}
	}
	return ids
}

// OrigID returns the object's original ID: the oldest previous ID, or the
// current one when it was never renamed.
func (r *Resource) OrigID() ID {
	if len(r.prev) > 0 {
		g, v := r.groupVersion()
		p := r.prev[0]
		return ID{GVK: GVK{Group: g, Version: v, Kind: p.Kind}, Name: p.Name, Namespace: p.Namespace}
	}
	return r.ID()
}

// groupVersion returns the group and version of the current apiVersion.
func (r *Resource) groupVersion() (group, version string) {
	if r.identOK {
		return r.ident.id.Group, r.ident.id.Version
	}
	return ParseAPIVersion(r.APIVersion())
}

// AnyPrevID reports whether f is true of one of PrevIDs, asked in order.
func (r *Resource) AnyPrevID(f func(ID) bool) bool {
	if len(r.prev) == 0 {
		return false
	}
	g, v := r.groupVersion()
	for _, p := range r.prev {
		if f(ID{GVK: GVK{Group: g, Version: v, Kind: p.Kind}, Name: p.Name, Namespace: p.Namespace}) {
			return true
		}
	}
	return false
}

// AnyID reports whether f is true of one of the object's IDs: the
// previous ones (PrevIDs, oldest first), then the current one. It stops
// at the first, and allocates nothing: stages ask it of every object.
func (r *Resource) AnyID(f func(ID) bool) bool {
	return r.AnyPrevID(f) || f(r.ID())
}

// RememberID records the current ID as a previous one, before a rename.
func (r *Resource) RememberID() {
	id := r.ID()
	r.mustBeMutable()
	r.prev = append(r.prev, prevName{Kind: id.Kind, Name: id.Name, Namespace: id.EffectiveNamespace()})
}

// AddPrevID records id as the newest of the object's previous IDs (see
// PrevIDs), its namespace as it is; its group and version are not kept,
// as PrevIDs takes them from the current apiVersion. It restores what
// PrevIDs returned (the cache's encoding of resources).
func (r *Resource) AddPrevID(id ID) {
	r.mustBeMutable()
	r.prev = append(r.prev, prevName{Kind: id.Kind, Name: id.Name, Namespace: id.Namespace})
}

// SetOriginalName records name (in namespace ns) as the object's original
// identity; generators use it so references to the name they were given
// still find the object after a hash suffix is added.
func (r *Resource) SetOriginalName(ns, name string) {
	r.mustBeMutable()
	r.prev = append(r.prev, prevName{Kind: r.Kind(), Name: name, Namespace: ns})
}

// CopyBuildStateFrom copies the previous names of o into r (used when one
// resource replaces another with the same identity).
func (r *Resource) CopyBuildStateFrom(o *Resource) {
	r.mustBeMutable()
	r.prev = append([]prevName(nil), o.prev...)
	r.refBy = append([]ID(nil), o.refBy...)
	r.refVars = append([]string(nil), o.refVars...)
}

// HasBuildState reports whether the build recorded anything about the
// object that kustomize keeps in build annotations (previous names,
// referrers, generator options).
func (r *Resource) HasBuildState() bool {
	return len(r.prev) > 0 || len(r.refBy) > 0 || r.Gen != nil
}

// RefBy returns the IDs of objects that referred to this one.
func (r *Resource) RefBy() []ID { return r.refBy }

// AddRefBy records that the object id refers to this one.
func (r *Resource) AddRefBy(id ID) {
	r.mustBeMutable()
	r.refBy = append(r.refBy, id)
}

// RefVarNames returns the names of vars whose objref selects this object.
func (r *Resource) RefVarNames() []string { return r.refVars }

// AddRefVarName records that the var named name selects this object.
func (r *Resource) AddRefVarName(name string) {
	r.mustBeMutable()
	r.refVars = append(r.refVars, name)
}

// SortedKeys returns the keys of m in byte order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
