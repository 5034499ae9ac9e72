package fnrun

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// pathOf is an object's path annotation, the legacy one when the current
// one is absent.
func pathOf(n *yaml.Node) string {
	a := annotations(n)
	if p, ok := a[PathAnnotation]; ok {
		return p
	}
	return a[LegacyPathAnnotation]
}

// indexOf is an object's index annotation, the legacy one when the current
// one is absent.
func indexOf(n *yaml.Node) string {
	a := annotations(n)
	if i, ok := a[IndexAnnotation]; ok {
		return i
	}
	return a[LegacyIndexAnnotation]
}

// copyLegacyAnnotations gives each of the path, index and id annotations
// set in one spelling the other spelling too.
func copyLegacyAnnotations(n *yaml.Node) error {
	m, err := getMeta(n)
	if err != nil {
		if err == errMissingMetadata {
			return nil
		}
		return err
	}
	for _, p := range [][2]string{{LegacyPathAnnotation, PathAnnotation}, {LegacyIndexAnnotation, IndexAnnotation}, {legacyIDAnnotation, idAnnotation}} {
		legacy, current := m.Annotations[p[0]], m.Annotations[p[1]]
		switch {
		case current != "" && legacy == "":
			err = setAnnotation(n, p[0], current)
		case current == "" && legacy != "":
			err = setAnnotation(n, p[1], legacy)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// internalAnnotations are the runner's annotations of an object: those
// with the internal prefix and the legacy path, index and id.
func internalAnnotations(n *yaml.Node) map[string]string {
	out := map[string]string{}
	for k, v := range annotations(n) {
		if strings.HasPrefix(k, "internal.config.kubernetes.io/") || k == LegacyPathAnnotation || k == LegacyIndexAnnotation || k == legacyIDAnnotation {
			out[k] = v
		}
	}
	return out
}

// defaultPath is the file kustomize gives an object a function made
// without naming one: [dir/][namespace/]kind_name.yaml.
func defaultPath(dir string, m meta) string {
	return path.Join(dir, m.Namespace, fmt.Sprintf("%s_%s.yaml", strings.ToLower(m.Kind), m.Name))
}

// defaultPathAnnotation gives every object without a path annotation the
// default path under dir.
func defaultPathAnnotation(dir string, nodes []*yaml.Node) error {
	for _, n := range nodes {
		if err := copyLegacyAnnotations(n); err != nil {
			return err
		}
		m, err := getMeta(n)
		if err != nil {
			return err
		}
		if _, ok := m.Annotations[PathAnnotation]; ok {
			continue
		}
		p := defaultPath(dir, m)
		if err := setAnnotation(n, PathAnnotation, p); err != nil {
			return err
		}
		if err := setAnnotation(n, LegacyPathAnnotation, p); err != nil {
			return err
		}
	}
	return nil
}

// defaultPathAndIndexAnnotation gives objects without a path the default
// one and objects without an index the next one of their file (kyaml
// counts from the highest index in the file, so the first new object
// shares that index and sorts after it).
func defaultPathAndIndexAnnotation(nodes []*yaml.Node) error {
	counts := map[string]int{}
	for _, n := range nodes {
		if err := copyLegacyAnnotations(n); err != nil {
			return err
		}
		m, err := getMeta(n)
		if err != nil {
			return err
		}
		if p, ok := m.Annotations[PathAnnotation]; ok {
			if i, ok := m.Annotations[IndexAnnotation]; ok {
				index, _ := strconv.Atoi(i)
				if index > counts[p] {
					counts[p] = index
				}
			}
			continue
		}
		p := defaultPath("", m)
		if err := setAnnotation(n, PathAnnotation, p); err != nil {
			return err
		}
		if err := setAnnotation(n, LegacyPathAnnotation, p); err != nil {
			return err
		}
	}
	for _, n := range nodes {
		m, err := getMeta(n)
		if err != nil {
			return err
		}
		if _, ok := m.Annotations[IndexAnnotation]; ok {
			continue
		}
		p := m.Annotations[PathAnnotation]
		c := counts[p]
		counts[p] = c + 1
		if err := setAnnotation(n, IndexAnnotation, strconv.Itoa(c)); err != nil {
			return err
		}
		if err := setAnnotation(n, LegacyIndexAnnotation, strconv.Itoa(c)); err != nil {
			return err
		}
	}
	return nil
}

// sortNodes orders a file's objects by path, then index (objects without
// one first), stably.
func sortNodes(nodes []*yaml.Node) error {
	var err error
	sort.SliceStable(nodes, func(i, j int) bool {
		if err != nil {
			return false
		}
		if copyLegacyAnnotations(nodes[i]) != nil || copyLegacyAnnotations(nodes[j]) != nil {
			return false
		}
		ai, aj := annotations(nodes[i]), annotations(nodes[j])
		if ai[PathAnnotation] != aj[PathAnnotation] {
			return ai[PathAnnotation] < aj[PathAnnotation]
		}
		vi, vj := ai[IndexAnnotation], aj[IndexAnnotation]
		if vi == vj {
			return false
		}
		if vi == "" {
			return true
		}
		if vj == "" {
			return false
		}
		var ii, ij int
		if ii, err = strconv.Atoi(vi); err != nil {
			err = fmt.Errorf("unable to parse config.kubernetes.io/index %s :%v", vi, err)
			return false
		}
		if ij, err = strconv.Atoi(vj); err != nil {
			err = fmt.Errorf("unable to parse config.kubernetes.io/index %s :%v", vj, err)
			return false
		}
		return ii < ij
	})
	return err
}

// The two steps around each function that keep the current and legacy
// spellings of the runner's annotations in step (kyaml's
// PreprocessResourcesForInternalAnnotationMigration and
// ReconcileInternalAnnotations): before, each object gets a numbered
// migration annotation and its runner annotations are recorded; after,
// an annotation the function changed in one spelling is changed in the
// other, and the migration annotation is removed.

// preprocess numbers the objects and records their runner annotations.
func preprocess(nodes []*yaml.Node) (map[string]map[string]string, error) {
	recorded := map[string]map[string]string{}
	for i, n := range nodes {
		id := strconv.Itoa(i)
		if err := setAnnotation(n, migrationAnnotation, id); err != nil {
			return nil, err
		}
		recorded[id] = internalAnnotations(n)
		if err := copyLegacyAnnotations(n); err != nil {
			return nil, err
		}
		if err := checkMismatched(annotations(n)); err != nil {
			return nil, err
		}
	}
	return recorded, nil
}

func checkMismatched(a map[string]string) error {
	for _, c := range []struct{ what, current, legacy string }{
		{"path", PathAnnotation, LegacyPathAnnotation},
		{"index", IndexAnnotation, LegacyIndexAnnotation},
		{"id", idAnnotation, legacyIDAnnotation},
	} {
		if v, l := a[c.current], a[c.legacy]; v != "" && l != "" && v != l {
			return fmt.Errorf("resource input to function has mismatched legacy and internal %s annotations", c.what)
		}
	}
	return nil
}

// reconcile brings the runner's annotations of a function's output in step
// (see preprocess).
func reconcile(nodes []*yaml.Node, recorded map[string]map[string]string) error {
	useInternal, useLegacy, err := annotationsFormat(recorded)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		for _, p := range [][2]string{{PathAnnotation, LegacyPathAnnotation}, {IndexAnnotation, LegacyIndexAnnotation}, {idAnnotation, legacyIDAnnotation}} {
			a := annotations(n)
			v, l := a[p[0]], a[p[1]]
			switch {
			case v == "" && l == "":
			case v == "":
				err = setAnnotation(n, p[0], l)
			case l == "":
				err = setAnnotation(n, p[1], v)
			}
			if err != nil {
				return err
			}
		}
		if err := checkAltered(n, recorded); err != nil {
			return err
		}
		if !useInternal {
			for _, a := range []string{idAnnotation, PathAnnotation, IndexAnnotation} {
				if err := clearAnnotation(n, a); err != nil {
					return err
				}
			}
		}
		if !useLegacy {
			for _, a := range []string{legacyIDAnnotation, LegacyPathAnnotation, LegacyIndexAnnotation} {
				if err := clearAnnotation(n, a); err != nil {
					return err
				}
			}
		}
		if err := checkMismatched(annotations(n)); err != nil {
			return err
		}
		if err := clearAnnotation(n, migrationAnnotation); err != nil {
			return err
		}
	}
	return nil
}

var errInconsistent = errors.New("the annotation formatting in the input resources is not consistent")

// annotationsFormat says whether the objects given to the function used
// the current spelling, the legacy one, or both.
func annotationsFormat(recorded map[string]map[string]string) (bool, bool, error) {
	if len(recorded) == 0 {
		return true, true, nil
	}
	var internal, legacy *bool
	// kyaml ranges over a map here; the answer does not depend on the
	// order unless the input is inconsistent, which fails either way.
	ids := make([]string, 0, len(recorded))
	for id := range recorded {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := recorded[id]
		has := func(k string) bool { _, ok := a[k]; return ok }
		cur := has(PathAnnotation) || has(IndexAnnotation) || has(idAnnotation)
		leg := has(LegacyPathAnnotation) || has(LegacyIndexAnnotation) || has(legacyIDAnnotation)
		if !cur && !leg {
			continue
		}
		if internal == nil {
			internal = &cur
		}
		if cur != *internal {
			return false, false, errInconsistent
		}
		if legacy == nil {
			legacy = &leg
		}
		if leg != *legacy {
			return false, false, errInconsistent
		}
	}
	useInternal, useLegacy := false, false
	if internal != nil {
		useInternal = *internal
	}
	if legacy != nil {
		useLegacy = *legacy
	}
	return useInternal, useLegacy, nil
}

// checkAltered carries a path or index the function changed in one
// spelling over to the other.
func checkAltered(n *yaml.Node, recorded map[string]map[string]string) error {
	a := annotations(n)
	orig, ok := recorded[a[migrationAnnotation]]
	if !ok {
		return nil
	}
	for _, p := range []struct{ what, current, legacy string }{
		{"path", PathAnnotation, LegacyPathAnnotation},
		{"index", IndexAnnotation, LegacyIndexAnnotation},
	} {
		o, found := orig[p.current]
		if !found {
			o = orig[p.legacy]
		}
		if o == "" {
			continue
		}
		cur, leg := a[p.current], a[p.legacy]
		var err error
		switch {
		case o != cur && o != leg && cur != leg:
			return fmt.Errorf("resource input to function has mismatched legacy and internal %s annotations", p.what)
		case o != cur:
			err = setAnnotation(n, p.legacy, cur)
		case o != leg:
			err = setAnnotation(n, p.current, leg)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
