package kustfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/loaders"
)

// ParseImage parses a `set image` argument (NAME[=NEWNAME][:TAG][@DIGEST])
// as kustomize does.
func ParseImage(arg string) (loaders.Image, error) {
	key, value := "", arg
	if k, v, ok := strings.Cut(arg, "="); ok {
		key, value = k, v
	}
	name, tag, digest := splitImageName(value)
	if name == arg {
		return loaders.Image{}, fmt.Errorf("invalid format of image %q, use one of the following options:\n- <image>=<newimage>:<newtag>\n- <image>=<newimage>@<digest>\n- <image>=<newimage>\n- <image>:<newtag>\n- <image>@<digest>", arg)
	}
	im := loaders.Image{NewTag: tag, Digest: digest}
	if key == "" {
		im.Name = name
	} else {
		im.Name, im.NewName = key, name
	}
	return im, nil
}

// splitImageName splits NAME[:TAG][@DIGEST], ignoring a ':' in a registry
// host (before the first '/').
func splitImageName(s string) (name, tag, digest string) {
	search, off := s, 0
	if i := strings.Index(s, "/"); i > 0 {
		search, off = s[i:], i
	}
	id, ic := strings.Index(search, "@"), strings.Index(search, ":")
	switch {
	case ic < 0 && id < 0:
		return s, "", ""
	case id >= 0 && (id < ic || ic < 0):
		return s[:id+off], "", s[id+off+1:]
	case id >= 0 && ic >= 0:
		return s[:ic+off], s[ic+off+1 : id+off], s[id+off+1:]
	}
	return s[:ic+off], s[ic+off+1:], ""
}

const preserve = "*"

// SetImages merges images into k.Images as `kustomize edit set image`: an
// image named in args replaces the entry of that name ("*" keeps the old
// newName, newTag or digest); the list comes out sorted by name.
func SetImages(k *loaders.Kustomization, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("no image specified")
	}
	set := map[string]loaders.Image{}
	for _, a := range args {
		im, err := ParseImage(a)
		if err != nil {
			return err
		}
		set[im.Name] = im
	}
	for _, old := range k.Images {
		arg, ok := set[old.Name]
		if !ok {
			set[old.Name] = old
			continue
		}
		if arg.NewName == preserve {
			arg = loaders.Image{Name: arg.Name, NewName: old.NewName, NewTag: arg.NewTag, Digest: arg.Digest}
		}
		if arg.NewTag == preserve {
			arg = loaders.Image{Name: arg.Name, NewName: arg.NewName, NewTag: old.NewTag, Digest: arg.Digest}
		}
		if arg.Digest == preserve {
			arg = loaders.Image{Name: arg.Name, NewName: arg.NewName, NewTag: arg.NewTag, Digest: old.Digest}
		}
		set[old.Name] = arg
	}
	images := make([]loaders.Image, 0, len(set))
	for _, v := range set {
		if v.NewName == preserve {
			v = loaders.Image{Name: v.Name, NewTag: v.NewTag, Digest: v.Digest}
		}
		if v.NewTag == preserve {
			v = loaders.Image{Name: v.Name, NewName: v.NewName, Digest: v.Digest}
		}
		if v.Digest == preserve {
			v = loaders.Image{Name: v.Name, NewName: v.NewName, NewTag: v.NewTag}
		}
		images = append(images, v)
	}
	sort.Slice(images, func(i, j int) bool { return images[i].Name < images[j].Name })
	k.Images = images
	return nil
}

// SetReplicas merges NAME=COUNT arguments into k.Replicas, sorted by name.
func SetReplicas(k *loaders.Kustomization, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("no replicas specified")
	}
	set := map[string]loaders.Replica{}
	for _, a := range args {
		s := strings.Split(a, "=")
		if len(s) != 2 {
			return fmt.Errorf("invalid format of replicas %q, use <resource>=<count>", a)
		}
		n, err := strconv.ParseInt(s[1], 10, 64)
		if err != nil {
			return fmt.Errorf("invalid format of replicas %q, use <resource>=<count>", a)
		}
		set[s[0]] = loaders.Replica{Name: s[0], Count: n}
	}
	for _, r := range k.Replicas {
		if _, ok := set[r.Name]; !ok {
			set[r.Name] = r
		}
	}
	out := make([]loaders.Replica, 0, len(set))
	for _, r := range set {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	k.Replicas = out
	return nil
}

// ParsePairs parses KEY[:VALUE] arguments (a value in double quotes loses
// them), as kustomize's label and annotation commands do.
func ParsePairs(args []string, kind string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("must specify %s", kind)
	}
	m := map[string]string{}
	for _, in := range args {
		c := strings.Index(in, ":")
		switch {
		case c == 0:
			return nil, fmt.Errorf("invalid %s: '%s' (need k:v pair where v may be quoted)", kind, in)
		case c < 0:
			m[in] = ""
		default:
			v := in[c+1:]
			if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
			m[in[:c]] = v
		}
	}
	return m, nil
}

func putPairs(dst, pairs map[string]string, kind string, force bool) error {
	for _, key := range sortedKeys(pairs) {
		if _, ok := dst[key]; ok && !force {
			return fmt.Errorf("%s %s already in kustomization file. Use --force to override.", kind, key)
		}
		dst[key] = pairs[key]
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// AddAnnotations adds commonAnnotations; existing keys are errors unless force.
func AddAnnotations(k *loaders.Kustomization, pairs map[string]string, force bool) error {
	if k.CommonAnnotations == nil {
		k.CommonAnnotations = map[string]string{}
	}
	return putPairs(k.CommonAnnotations, pairs, "annotation", force)
}

// LabelOptions are the flags of `add label`.
type LabelOptions struct {
	Force, WithoutSelector, IncludeTemplates bool
}

// AddLabels adds commonLabels, or with WithoutSelector a labels entry
// without selectors, as `kustomize edit add label` does.
func AddLabels(k *loaders.Kustomization, pairs map[string]string, o LabelOptions) error {
	if !o.WithoutSelector && o.IncludeTemplates {
		return fmt.Errorf("--without-selector flag must be specified for --include-templates to work")
	}
	if !o.WithoutSelector {
		if k.CommonLabels == nil {
			k.CommonLabels = map[string]string{}
		}
		return putPairs(k.CommonLabels, pairs, "label", o.Force)
	}
	match := func(l loaders.Label) bool { return !l.IncludeSelectors && l.IncludeTemplates == o.IncludeTemplates }
	lbl := loaders.Label{Pairs: map[string]string{}, IncludeTemplates: o.IncludeTemplates}
	for _, key := range sortedKeys(pairs) {
		one := map[string]string{key: pairs[key]}
		i := slices.IndexFunc(k.Labels, match)
		if i >= 0 {
			if err := putPairs(k.Labels[i].Pairs, one, "label", o.Force); err != nil {
				return err
			}
			continue
		}
		if err := putPairs(lbl.Pairs, one, "label", o.Force); err != nil {
			return err
		}
		k.Labels = append(k.Labels, lbl)
	}
	return nil
}

// SetLabels sets commonLabels, overwriting existing keys.
func SetLabels(k *loaders.Kustomization, pairs map[string]string) {
	if k.CommonLabels == nil {
		k.CommonLabels = map[string]string{}
	}
	for key, v := range pairs {
		k.CommonLabels[key] = v
	}
}

// SetAnnotations sets commonAnnotations, overwriting existing keys.
func SetAnnotations(k *loaders.Kustomization, pairs map[string]string) {
	if k.CommonAnnotations == nil {
		k.CommonAnnotations = map[string]string{}
	}
	for key, v := range pairs {
		k.CommonAnnotations[key] = v
	}
}

// RemoveKeys deletes keys from m (a missing key is an error unless
// ignoreMissing), as `kustomize edit remove label|annotation`.
func RemoveKeys(m map[string]string, keys []string, kind string, ignoreMissing bool) error {
	if len(keys) == 0 {
		return fmt.Errorf("must specify %s", kind)
	}
	for _, key := range keys {
		if _, ok := m[key]; !ok && !ignoreMissing {
			return fmt.Errorf("%s %s is not defined in kustomization file", kind, key)
		}
		delete(m, key)
	}
	return nil
}

// Glob expands file patterns relative to dir as kustomize's add commands
// do; a pattern that matches no file is kept when it looks remote (no
// network is used to check it), and is an error otherwise.
func Glob(dir string, patterns []string, noVerify bool) ([]string, error) {
	var out []string
	for _, p := range patterns {
		if noVerify {
			out = append(out, p)
			continue
		}
		files, err := globIn(dir, p)
		if err != nil {
			return nil, fmt.Errorf("error checking the filesystem: %w", err)
		}
		if len(files) > 0 {
			out = append(out, files...)
			continue
		}
		if isRemote(p) {
			out = append(out, p)
			continue
		}
		return nil, fmt.Errorf("%s has no match: must build at directory: not a valid directory: evalsymlink failure on '%s' : lstat %s: no such file or directory", p, filepath.Join(dir, p), filepath.Join(dir, p))
	}
	return out, nil
}

// GlobOrWarn expands patterns in dir as kustomize's GlobPatterns does for
// `edit add generator`, `transformer` and `configuration`: a pattern with
// no match (a file that does not exist yet) is reported through warn
// ("PATTERN has no match") and skipped, not an error.
func GlobOrWarn(dir string, patterns []string, warn func(string)) ([]string, error) {
	var out []string
	for _, p := range patterns {
		files, err := globIn(dir, p)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			warn(fmt.Sprintf("%s has no match", p))
			continue
		}
		out = append(out, files...)
	}
	return out, nil
}

// globIn is filepath.Glob run in dir: a pattern without meta characters
// comes back as written when the file exists (kustomize keeps
// "base/../cm.yaml" so), matches of a pattern come back relative to dir.
// Hidden files (a name starting with a dot) match only a hidden pattern,
// as in kustomize's file system.
func globIn(dir, pattern string) ([]string, error) {
	if !strings.ContainsAny(pattern, `*?[\`) {
		if _, err := os.Lstat(filepath.Join(dir, pattern)); err != nil {
			return nil, nil
		}
		return []string{pattern}, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(files))
	for _, f := range files {
		if hidden(f) && !hidden(pattern) {
			continue
		}
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			return nil, err
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// hidden is kustomize's IsHiddenFilePath: the last element starts with a
// dot.
func hidden(p string) bool { return strings.HasPrefix(filepath.Base(p), ".") }

func isRemote(p string) bool {
	return strings.Contains(p, "://") || strings.HasPrefix(p, "github.com/") || strings.HasPrefix(p, "git@")
}

// AddUnique appends items not yet in list, skipping the kustomization file
// itself; it reports each skipped duplicate through warn.
func AddUnique(list []string, items []string, self, kind string, warn func(string)) []string {
	for _, it := range items {
		if it == self {
			continue
		}
		if slices.Contains(list, it) {
			warn(fmt.Sprintf("%s %s already in kustomization file", kind, it))
			continue
		}
		list = append(list, it)
	}
	return list
}

// RemoveMatching removes the entries of list that match one of the glob
// patterns (filepath.Match).
func RemoveMatching(list []string, patterns []string) ([]string, bool, error) {
	var hit []string
	for _, p := range patterns {
		for _, it := range list {
			ok, err := filepath.Match(p, it)
			if err != nil {
				return nil, false, err
			}
			if ok {
				hit = append(hit, it)
			}
		}
	}
	if len(hit) == 0 {
		return list, false, nil
	}
	out := make([]string, 0, len(list))
	for _, it := range list {
		if !slices.Contains(hit, it) {
			out = append(out, it)
		}
	}
	return out, true, nil
}

// Fix converts deprecated fields as `kustomize edit fix` does (without
// --vars): patchesJson6902 and patchesStrategicMerge into patches (a
// strategic-merge entry naming a readable file relative to dir becomes a
// path, otherwise an inline patch), commonLabels into a labels entry that
// includes selectors.
func Fix(k *loaders.Kustomization, dir string) error {
	k.Patches = append(k.Patches, k.PatchesJson6902...)
	k.PatchesJson6902 = nil
	if k.PatchesStrategicMerge != nil {
		for _, p := range k.PatchesStrategicMerge {
			if _, err := fsread.File(filepath.Join(dir, p)); err == nil {
				k.Patches = append(k.Patches, loaders.Patch{Path: p})
			} else {
				k.Patches = append(k.Patches, loaders.Patch{Patch: p})
			}
		}
		k.PatchesStrategicMerge = nil
	}
	if len(k.CommonLabels) > 0 {
		for _, l := range k.Labels {
			for key := range l.Pairs {
				if _, ok := k.CommonLabels[key]; ok {
					return fmt.Errorf("label name '%s' exists in both commonLabels and labels", key)
				}
			}
		}
		k.Labels = append(k.Labels, loaders.Label{Pairs: k.CommonLabels, IncludeSelectors: true})
		k.CommonLabels = nil
	}
	return nil
}
