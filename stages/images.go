package stages

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/fieldspec"
)

// ImagesConfig configures the ImageTagTransformer: one image change and
// the fields that hold image references.
type ImagesConfig struct {
	ImageTag   loaders.Image       `json:"imageTag,omitempty"`
	FieldSpecs []loaders.FieldSpec `json:"fieldSpecs,omitempty"`
}

// NewImages returns the ImageTagTransformer stage. Like kustomize it makes
// two passes over the resources, skipping CustomResourceDefinitions: first
// the image of every element of any `containers` or `initContainers` list
// anywhere in an object, then every field the field specs reach (never
// creating one; create is ignored). An image value matches when it is the
// name followed by an optional ":tag" and an optional "@algorithm:digest"
// (any OCI digest algorithm: sha256, sha512, multihash+base58, ...; v5.8.0
// matched sha256 only); a value both passes reach is changed twice (which
// shows with TagSuffix). The name is a regular expression; one that does
// not compile matches nothing, as in kustomize v5.8.1+ (v5.8.0 crashed).

func NewImages(cfg ImagesConfig) Stage {
	cfg.FieldSpecs = append([]loaders.FieldSpec(nil), cfg.FieldSpecs...)
	return &imagesStage{cfg: cfg, match: newImageMatcher(cfg.ImageTag.Name)}
}

// imageRefSuffix is what may follow the name in an image reference the
// images field changes: a tag, a digest, or both. kustomize matches
// "^" + name + imageRefSuffix, the name taken as a regular expression.
const imageRefSuffix = `(:[a-zA-Z0-9_.{}-]*)?(@[a-zA-Z0-9]+([.+_-][a-zA-Z0-9]+)*:[a-zA-Z0-9_.{}-]*)?$`

// imageSuffix matches imageRefSuffix from the start of a string.
var imageSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^" + imageRefSuffix) })

// imageMatcher tells the image references an `images` entry changes. A
// name with no regular-expression syntax but dots (most: registry hosts
// have them) is matched rune by rune, a dot standing for any rune but a
// newline as it does in the expression, and the rest by imageSuffix:
// compiling an expression for every entry of every kustomization cost 4%
// of a cold build. Other names are compiled as kustomize does (re); nil
// re for a name that is not a valid expression matches nothing.
type imageMatcher struct {
	name    string
	literal bool
	re      *regexp.Regexp
	v581    bool // kustomize v5.8.1's: a nil re panics
}

// imageRefSuffix581 is imageRefSuffix in kustomize v5.8.1: sha256
// digests only.
const imageRefSuffix581 = `(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$`

// newImageMatcher581 is kustomize v5.8.1's matcher: the pattern compiled
// as it was, nil when it does not compile (matching then panics, as
// there).
func newImageMatcher581(name string) imageMatcher {
	re, err := regexp.Compile("^" + name + imageRefSuffix581)
	if err != nil {
		re = nil
	}
	return imageMatcher{name: name, re: re, v581: true}
}

func newImageMatcher(name string) imageMatcher {
	if utf8.ValidString(name) && regexp.QuoteMeta(strings.ReplaceAll(name, ".", "")) == strings.ReplaceAll(name, ".", "") {
		return imageMatcher{name: name, literal: true}
	}
	re, err := regexp.Compile("^" + name + imageRefSuffix)
	if err != nil {
		re = nil
	}
	return imageMatcher{name: name, re: re}
}

// matches reports whether text is a reference to change.
func (m imageMatcher) matches(text string) bool {
	if m.v581 {
		return m.re.MatchString(text) // (a nil re panics, as in kustomize v5.8.1)
	}
	if !m.literal {
		return m.re != nil && m.re.MatchString(text)
	}
	rest := text
	for _, want := range m.name {
		got, size := utf8.DecodeRuneInString(rest)
		// (An invalid byte reads as utf8.RuneError, in the expression too.)
		if size == 0 || (want == '.' && got == '\n') || (want != '.' && got != want) {
			return false
		}
		rest = rest[size:]
	}
	return imageSuffix().MatchString(rest)
}

// ImagesFromConfig configures an ImageTagTransformer from its builtin
// plugin config (`imageTag:` and `fieldSpecs:`).
func ImagesFromConfig(data []byte) (Stage, error) {
	var cfg ImagesConfig
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, fmt.Errorf("ImageTagTransformer: reading config: %w", err)
	}
	return NewImages(cfg), nil
}

type imagesStage struct {
	cfg     ImagesConfig
	match   imageMatcher // the image values to change
	release Release
}

func (s *imagesStage) Kind() string { return "ImageTagTransformer" }
func (s *imagesStage) Cheap()       {}
func (s *imagesStage) Fingerprint() []byte {
	if s.release != Kustomize582 {
		return Fingerprint(s.Kind(), struct {
			Config  ImagesConfig
			Release Release
		}{s.cfg, s.release})
	}
	return Fingerprint(s.Kind(), s.cfg)
}

// imageProbeHit is returned by a probing pass that would change the object.
type imageProbeHit struct{}

func (imageProbeHit) Error() string { return "image would change" }

// Run applies the legacy containers pass to every resource, then the
// field-spec pass.
func (s *imagesStage) Run(_ context.Context, rs *resource.List) (err error) {
	if s.match.v581 && s.match.re == nil {
		// kustomize v5.8.1 dereferences its nil pattern at the first image
		// it looks at.
		defer func() {
			if v := recover(); v != nil {
				err = &PanicError{Value: v}
			}
		}()
	}
	passes := []func(obj map[string]any, gvk resource.GVK, probe bool) error{s.legacyPass, s.fieldSpecPass}
	for p, pass := range passes {
		for i := 0; i < rs.Len(); i++ {
			r := rs.At(i)
			if r.Kind() == "CustomResourceDefinition" {
				continue
			}
			gvk := r.GVK()
			var err error
			switch {
			case !r.Frozen():
				err = pass(r.Edit(), gvk, false)
			case p == 1 && s.nullSequence(r.Object(), gvk):
				err = pass(rs.Edit(i).Edit(), gvk, false)
			default:
				// Look first, so that a shared resource is copied only when
				// it changes.
				err = pass(r.Object(), gvk, true)
				if errors.As(err, new(imageProbeHit)) {
					err = pass(rs.Edit(i).Edit(), gvk, false)
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", s.Kind(), err)
			}
		}
	}
	return nil
}

// legacyPass updates the image of the elements of every `containers` and
// `initContainers` list in obj, at any depth.
func (s *imagesStage) legacyPass(obj map[string]any, _ resource.GVK, probe bool) error {
	return s.legacyWalk(obj, probe)
}

func (s *imagesStage) legacyWalk(node any, probe bool) error {
	switch n := node.(type) {
	case map[string]any:
		var buf [16]string // the keys, sorted, on the stack for most maps
		keys := buf[:0]
		for k := range n {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := s.legacyWalk(n[k], probe); err != nil {
				return err
			}
			if k == "containers" || k == "initContainers" {
				if err := s.legacyContainers(n[k], probe); err != nil {
					return err
				}
			}
		}
	case []any:
		for _, e := range n {
			if err := s.legacyWalk(e, probe); err != nil {
				return err
			}
		}
	}
	return nil
}

// legacyContainers updates the image field of each element of a list of
// containers; anything but a list is left alone.
func (s *imagesStage) legacyContainers(v any, probe bool) error {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	for _, e := range list {
		switch c := e.(type) {
		case nil, resource.EmptyNull:
		case map[string]any:
			img, ok := c["image"]
			if !ok {
				continue
			}
			if err := s.update(img, func(nv any) { c["image"] = nv }, probe); err != nil {
				return err
			}
		default:
			return wrongNodeKind("MappingNode", e)
		}
	}
	return nil
}

// fieldSpecPass updates the image values at the field specs that select
// gvk.
func (s *imagesStage) fieldSpecPass(obj map[string]any, gvk resource.GVK, probe bool) error {
	var update func(fieldspec.Field) error // made for the first spec that matches
	for _, fs := range s.cfg.FieldSpecs {
		if !fs.Matches(gvk) {
			continue
		}
		if update == nil {
			update = func(f fieldspec.Field) error { return s.update(f.Value(), f.Set, probe) }
		}
		err := fieldspec.Walk(obj, fs, fieldspec.CreateNone, update)
		if err != nil {
			return err
		}
	}
	return nil
}

// nullSequence reports whether obj holds a null under a key that a
// matching field spec marks as a list ("containers[]"): the field-spec pass
// turns such a null into an empty list.
func (s *imagesStage) nullSequence(obj map[string]any, gvk resource.GVK) bool {
	keys := map[string]bool{}
	for _, fs := range s.cfg.FieldSpecs {
		if !fs.Matches(gvk) {
			continue
		}
		for _, el := range fs.PathElements() {
			if name, ok := strings.CutSuffix(el, "[]"); ok {
				keys[strings.TrimSpace(name)] = true
			}
		}
	}
	return len(keys) > 0 && hasNullUnder(obj, keys)
}

// hasNullUnder reports whether a map in the tree v has a null value under
// one of keys.
func hasNullUnder(v any, keys map[string]bool) bool {
	switch n := v.(type) {
	case map[string]any:
		for k, e := range n {
			if resource.IsNull(e) && keys[k] {
				return true
			}
			if hasNullUnder(e, keys) {
				return true
			}
		}
	case []any:
		for _, e := range n {
			if hasNullUnder(e, keys) {
				return true
			}
		}
	}
	return false
}

// update rewrites the image value v through set when it matches. When probe
// is set it changes nothing and returns imageProbeHit instead.
func (s *imagesStage) update(v any, set func(any), probe bool) error {
	var text string
	switch v.(type) {
	case map[string]any, []any:
		return wrongNodeKind("ScalarNode", v)
	case nil:
		text = "null"
	default:
		text, _ = resource.ScalarString(v)
	}
	if !s.match.matches(text) {
		return nil
	}
	if probe {
		return imageProbeHit{}
	}
	set(scalarLike(v, s.newImage(text)))
	return nil
}

// newImage applies the image change to a matching image reference.
func (s *imagesStage) newImage(ref string) string {
	it := s.cfg.ImageTag
	name, tag, digest := splitImage(ref)
	if it.NewName != "" {
		name = it.NewName
	}
	switch {
	case it.NewTag != "" && it.Digest != "":
		tag, digest = it.NewTag, it.Digest
	case it.NewTag != "":
		tag, digest = it.NewTag, ""
	case it.Digest != "":
		tag, digest = "", it.Digest
	case it.TagSuffix != "":
		tag, digest = tag+it.TagSuffix, ""
	}
	if tag != "" {
		name += ":" + tag
	}
	if digest != "" {
		name += "@" + digest
	}
	return name
}

// splitImage splits an image reference, [host[:port]/]path[:tag][@digest],
// into its name, tag and digest. A ':' or '@' before the first '/' belongs
// to the host.
func splitImage(ref string) (name, tag, digest string) {
	off := 0
	if i := strings.Index(ref, "/"); i > 0 {
		off = i
	}
	rest := ref[off:]
	at := strings.Index(rest, "@")
	colon := strings.Index(rest, ":")
	switch {
	case at < 0 && colon < 0:
		return ref, "", ""
	case at >= 0 && (colon < 0 || at < colon):
		return ref[:off+at], "", ref[off+at+1:]
	case at >= 0:
		return ref[:off+colon], ref[off+colon+1 : off+at], ref[off+at+1:]
	default:
		return ref[:off+colon], ref[off+colon+1:], ""
	}
}

// scalarLike returns the value kustomize ends up with when it writes the
// text s into the YAML scalar that held old, keeping that scalar's style
// but not its tag: a plain scalar is read again (so "1234" becomes a
// number), a quoted one stays a string. The tree does not record styles;
// a string old is taken as plain when it could have been written plain.
func scalarLike(old any, s string) any {
	if str, ok := old.(string); ok && !isPlainString(str) {
		return s
	}
	if v, ok := plainScalar(s); ok {
		return v
	}
	return s
}

// isPlainString reports whether s reads back as itself when written as a
// plain YAML scalar.
func isPlainString(s string) bool {
	v, ok := plainScalar(s)
	return ok && v == s
}

// plainScalar returns the value of s read as a plain YAML scalar, and false
// when s is not exactly one plain scalar (it would be quoted when written).
func plainScalar(s string) (any, bool) {
	if simplePlainString(s) {
		return s, true
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, false
	}
	n := doc.Content[0]
	if n.Kind != yaml.ScalarNode || n.Style != 0 || n.Value != s || n.Anchor != "" {
		return nil, false
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// simplePlainString reports, without a parser, that s is a plain YAML
// scalar that reads back as the string s (image references, names): it
// starts with an ASCII letter, holds only letters, digits and ._/:@- (no
// space, so no ": " or " #"), does not end with a colon (a mapping key),
// and is none of the words yaml.v3 reads as a boolean or null (a plain
// scalar that starts with a letter is a string otherwise). False means
// ask the parser.
func simplePlainString(s string) bool {
	if s == "" || !('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') || s[len(s)-1] == ':' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._/:@-", c) >= 0) {
			return false
		}
	}
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
		return false
	}
	return true
}
