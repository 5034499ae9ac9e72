package fnrun

import (
	"fmt"
	"sort"

	"github.com/kpipe/kpipe/internal/resyaml"
	"go.yaml.in/yaml/v3"
)

// After a function, kustomize gives each object it returned that it was
// given (matched by the id annotation) the comments of the object it was
// given where the function left none, and puts its keys back in the order
// they had (kyaml's comments.CopyComments and order.SyncOrder). These are
// those two walks.
//
// kyaml walks with the Kubernetes OpenAPI schema at hand and, for the
// lists it knows to be keyed (a Deployment's containers by name), also
// pairs list items by key; kpipe pairs them by position only, which gives
// the same result unless a function reorders such a list.

// copyComments copies from's comments to the nodes of to that have none,
// field by field (from is not changed). On the way, a folded scalar of to
// becomes double-quoted (kyaml's workaround for line comments on folded
// scalars), and a field that is a map in one and not in the other is an
// error, as in kyaml.
func copyComments(from, to *yaml.Node) error {
	fromCopy := resyaml.CopyNode(from)
	copyFieldComments(fromCopy, to)
	return walkComments([]*yaml.Node{fromCopy, to})
}

// copyFieldComments copies from's line, head and foot comments to to
// where to has none.
func copyFieldComments(from, to *yaml.Node) {
	if from == nil || to == nil {
		return
	}
	if to.LineComment == "" {
		to.LineComment = from.LineComment
	}
	if to.HeadComment == "" {
		to.HeadComment = from.HeadComment
	}
	if to.FootComment == "" {
		to.FootComment = from.FootComment
	}
}

// walkKind is the kind of the first source that is not null.
func walkKind(sources []*yaml.Node) yaml.Kind {
	for _, s := range sources {
		if !isMissingOrNull(s) {
			return content(s).Kind
		}
	}
	return 0
}

// walkComments is kyaml's walk.Walker with the comment copier as visitor
// and map keys visited as scalars; sources are [dest, origin].
func walkComments(sources []*yaml.Node) error {
	check := func(k yaml.Kind) error {
		for _, s := range sources {
			if isMissingOrNull(s) {
				continue
			}
			if err := checkKind(s, k); err != nil {
				return err
			}
		}
		return nil
	}
	switch k := walkKind(sources); k {
	case yaml.MappingNode, 0:
		if k != 0 {
			if err := check(k); err != nil {
				return err
			}
		}
		return walkMapComments(sources)
	case yaml.SequenceNode:
		if err := check(k); err != nil {
			return err
		}
		return visitListComments(sources)
	case yaml.ScalarNode:
		if err := check(k); err != nil {
			return err
		}
		visitScalarComments(sources)
	}
	return nil
}

// visitScalarComments copies a scalar's comments (and unfolds to's).
func visitScalarComments(sources []*yaml.Node) {
	dest, origin := sources[0], sources[1]
	if origin != nil && origin.Style == yaml.FoldedStyle {
		origin.Style = yaml.DoubleQuotedStyle
	}
	copyFieldComments(dest, origin)
}

// visitListComments copies a list's comments, then those of the items
// at the same position (scalars only when equal).
func visitListComments(sources []*yaml.Node) error {
	dest, origin := sources[0], sources[1]
	copyFieldComments(dest, origin)
	if dest == nil || origin == nil {
		return nil
	}
	d, o := content(dest).Content, content(origin).Content
	for i := 0; i < len(d) && i < len(o); i++ {
		if d[i].Value == o[i].Value {
			if err := copyComments(d[i], o[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkMapComments copies a map's comments, then walks the union of the
// fields of both (in name order): keys as scalars, then values.
func walkMapComments(sources []*yaml.Node) error {
	dest, origin := sources[0], sources[1]
	copyFieldComments(dest, origin)
	if dest == nil {
		return nil
	}
	names := map[string]bool{}
	for _, s := range sources {
		if s == nil {
			continue
		}
		fs, _ := fieldNames(s)
		for _, f := range fs {
			names[f] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, name := range sorted {
		keys := make([]*yaml.Node, len(sources))
		values := make([]*yaml.Node, len(sources))
		for i, s := range sources {
			if s == nil {
				continue
			}
			k, v := field(s, name)
			if k != nil && !isMissingOrNull(k) {
				keys[i] = k
			}
			values[i] = v
		}
		visitScalarComments(keys)
		if err := walkComments(values); err != nil {
			return err
		}
	}
	return nil
}

// syncOrder puts the keys of to's maps in the order of from's at the same
// place (keys from lacks go last) and then moves a list item's first key's
// head comment to the item, as kyaml's SyncOrder does.
func syncOrder(from, to *yaml.Node) error {
	if err := syncOrderWalk(resyaml.CopyNode(from), to); err != nil {
		return fmt.Errorf("failed to sync field order: %q", err.Error())
	}
	rearrangeHeadComments(content(to))
	return nil
}

func syncOrderWalk(from, to *yaml.Node) error {
	if isNilOrEmpty(from) || isNilOrEmpty(to) {
		return nil
	}
	switch content(from).Kind {
	case yaml.MappingNode:
		names, err := fieldNames(from)
		if err != nil {
			return nil
		}
		syncMapOrder(from, to)
		for _, name := range names {
			_, f := field(from, name)
			_, t := field(to, name)
			if f == nil || t == nil {
				continue
			}
			if err := syncOrderWalk(f, t); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		if err := checkKind(to, yaml.SequenceNode); err != nil {
			return err
		}
		f, t := content(from).Content, content(to).Content
		for i := range f {
			if i >= len(t) {
				return nil
			}
			if err := syncOrderWalk(f[i], t[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// syncMapOrder reorders mapping to's entries: those from has first, in
// from's order, then the others.
func syncMapOrder(from, to *yaml.Node) {
	t := content(to)
	fromNames, err := fieldNames(from)
	if err != nil {
		return
	}
	toNames, err := fieldNames(to)
	if err != nil {
		return
	}
	var entries []*yaml.Node
	for _, name := range fromNames {
		i := indexOfString(toNames, name)
		if i < 0 {
			continue
		}
		k, v := field(t, name)
		entries = append(entries, k, v)
		toNames = append(toNames[:i], toNames[i+1:]...)
	}
	for _, name := range toNames {
		k, v := field(t, name)
		entries = append(entries, k, v)
	}
	// kyaml builds a new mapping with to's attributes and copies it over
	// to's node: a document node (an object a function printed as a plain
	// document) becomes the mapping, its own comments dropped.
	*to = yaml.Node{Kind: t.Kind, Style: t.Style, Tag: t.Tag, Anchor: t.Anchor, Alias: t.Alias,
		HeadComment: t.HeadComment, LineComment: t.LineComment, FootComment: t.FootComment,
		Line: t.Line, Column: t.Column, Content: entries}
}

func indexOfString(s []string, e string) int {
	for i, v := range s {
		if v == e {
			return i
		}
	}
	return -1
}

// rearrangeHeadComments moves the head comment of each list item's first
// key to the item itself.
func rearrangeHeadComments(n *yaml.Node) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.MappingNode:
		for _, c := range n.Content {
			rearrangeHeadComments(c)
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if len(item.Content) > 0 && item.Content[0].Kind == yaml.ScalarNode {
				if item.HeadComment == "" {
					item.HeadComment = item.Content[0].HeadComment
					continue
				}
				if item.Content[0].HeadComment != "" {
					item.HeadComment += "\n" + item.Content[0].HeadComment
					item.Content[0].HeadComment = ""
				}
			}
		}
	}
}
