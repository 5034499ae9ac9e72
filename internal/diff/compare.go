package diff

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"sort"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Options tune a comparison.
type Options struct {
	// Context is the number of unchanged lines around each change in a
	// resource's unified diff (-U); negative means the default, 3.
	Context int
	// ShowSecrets prints Secret values; by default each is replaced by a
	// short digest.
	ShowSecrets bool
	// OrderMatters counts a change of the resources' order alone as a
	// change of the root (by default it is none, and only noted).
	OrderMatters bool
}

func (o Options) context() int {
	if o.Context < 0 {
		return 3
	}
	return o.Context
}

// Change kinds of a resource.
const (
	ResourceAdded   = "added"
	ResourceRemoved = "removed"
	ResourceChanged = "changed"
)

// ResourceChange is one resource that differs between the two sides.
type ResourceChange struct {
	// Change is ResourceAdded, ResourceRemoved or ResourceChanged.
	Change string `json:"change"`
	// ID is the resource (on the new side, for a change).
	ID ID `json:"id"`
	// OldName is the resource's name on the old side when a generator's
	// hash suffix changed it (app-config-5k2g7h -> app-config-9m4c2t).
	OldName string `json:"oldName,omitempty"`
	// Diff is the unified diff of the resource's YAML.
	Diff string `json:"diff"`
	// Secret says the resource is a Secret (its values are masked unless
	// Options.ShowSecrets).
	Secret bool `json:"secret,omitempty"`
}

// Compare compares two rendered outputs of one root and returns the
// resources that differ, in the new side's order (removed ones after, in
// the old side's order), and whether the order of the resources changed.
func Compare(oldYAML, newYAML []byte, o Options) (changes []ResourceChange, reordered bool, err error) {
	oldDocs, newDocs := splitDocs(oldYAML), splitDocs(newYAML)
	usedOld := make([]bool, len(oldDocs))
	matchOf := make([]int, len(newDocs)) // index in olds, or -1
	// A document the same on both sides is the same resource, unchanged:
	// it is matched without being read (most of a changed root's
	// documents, among them its largest, its CRDs).
	seed := maphash.MakeSeed()
	byText := make(map[uint64][]int, len(oldDocs))
	for j, d := range oldDocs {
		h := maphash.Bytes(seed, d)
		byText[h] = append(byText[h], j)
	}
	for i, d := range newDocs {
		matchOf[i] = -1
		h := maphash.Bytes(seed, d)
		for _, j := range byText[h] {
			if !usedOld[j] && bytes.Equal(oldDocs[j], d) {
				matchOf[i], usedOld[j] = j, true
				break
			}
		}
	}
	olds := make([]resource, len(oldDocs))
	for j, d := range oldDocs {
		if !usedOld[j] {
			if olds[j], err = parseDoc(j, d, o.ShowSecrets); err != nil {
				return nil, false, fmt.Errorf("old output: %w", err)
			}
		}
	}
	news := make([]resource, len(newDocs))
	for i, d := range newDocs {
		if matchOf[i] < 0 {
			if news[i], err = parseDoc(i, d, o.ShowSecrets); err != nil {
				return nil, false, fmt.Errorf("new output: %w", err)
			}
		}
	}
	oldIdx := map[ID]int{}
	for j, r := range olds {
		if _, dup := oldIdx[r.id]; !dup && !usedOld[j] {
			oldIdx[r.id] = j
		}
	}
	for i, r := range news {
		if matchOf[i] >= 0 {
			continue
		}
		if j, ok := oldIdx[r.id]; ok && !usedOld[j] {
			matchOf[i] = j
			usedOld[j] = true
		}
	}
	// A generated resource whose hash suffix changed with its content: the
	// one unmatched old resource of the same group, kind, namespace and
	// name without suffix.
	oldStems := map[ID][]int{} // by ID with the name's hash suffix cut
	for j, r := range olds {
		if usedOld[j] {
			continue
		}
		if b := baseName(r.id.Name); b != "" {
			id := r.id
			id.Name = b
			oldStems[id] = append(oldStems[id], j)
		}
	}
	for i, r := range news {
		if matchOf[i] >= 0 {
			continue
		}
		b := baseName(r.id.Name)
		if b == "" {
			continue
		}
		id := r.id
		id.Name = b
		if js := oldStems[id]; len(js) == 1 && !usedOld[js[0]] {
			matchOf[i] = js[0]
			usedOld[js[0]] = true
		}
	}
	// Order: compare the sequence of matched old indexes.
	last := -1
	for _, j := range matchOf {
		if j < 0 {
			continue
		}
		if j < last {
			reordered = true
		}
		last = j
	}
	ctx := o.context()
	for i, r := range news {
		j := matchOf[i]
		if j < 0 {
			changes = append(changes, ResourceChange{Change: ResourceAdded, ID: r.id, Secret: r.secret,
				Diff: unified("/dev/null", "b/"+r.id.String(), "", r.text, ctx)})
			continue
		}
		if bytes.Equal(oldDocs[j], newDocs[i]) {
			continue // (not read)
		}
		old := olds[j]
		if old.text == r.text && old.id == r.id {
			continue
		}
		c := ResourceChange{Change: ResourceChanged, ID: r.id, Secret: r.secret || old.secret,
			Diff: unified("a/"+old.id.String(), "b/"+r.id.String(), old.text, r.text, ctx)}
		if old.id.Name != r.id.Name {
			c.OldName = old.id.Name
		}
		changes = append(changes, c)
	}
	for j, r := range olds {
		if !usedOld[j] {
			changes = append(changes, ResourceChange{Change: ResourceRemoved, ID: r.id, Secret: r.secret,
				Diff: unified("a/"+r.id.String(), "/dev/null", r.text, "", ctx)})
		}
	}
	return changes, reordered, nil
}

// unified is the unified diff of two texts with n lines of context.
func unified(oldLabel, newLabel, a, b string, n int) string {
	edits := udiff.Lines(a, b)
	s, err := udiff.ToUnified(oldLabel, newLabel, a, edits, n)
	if err != nil {
		return udiff.Unified(oldLabel, newLabel, a, b)
	}
	return s
}

// Counts sums changes by kind.
func Counts(changes []ResourceChange) (added, removed, changed int) {
	for _, c := range changes {
		switch c.Change {
		case ResourceAdded:
			added++
		case ResourceRemoved:
			removed++
		default:
			changed++
		}
	}
	return
}

// sortRoots orders root diffs by path.
func sortRoots(rs []RootDiff) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Path < rs[j].Path })
}
