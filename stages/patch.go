package stages

import (
	"context"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// newPatch returns the PatchTransformer stage for one `patches` entry,
// reading the patch file (if any) with read.
func newPatch(cfg loaders.Patch, read ReadFile) (Stage, error) {
	var p *Patches
	return p.New(cfg, read)
}

// Patches decodes patch texts once for a build: a component's patches are
// configured again in every parent that includes it (each parent applies
// them in its own context, as kustomize does), and decoding a text, as
// strategic-merge patches and as a JSON patch, costs more than applying
// it. Only a text seen a second time is kept decoded: most texts (an
// overlay's own patches) are configured once, and keeping them all held
// every patch of a build-all in memory until the end (a tenth of what
// 10,000 roots kept live). A text seen once costs a 64-bit hash. A nil
// *Patches decodes every time. It is safe for concurrent use.
type Patches struct {
	mu     sync.Mutex
	seed   maphash.Seed
	seen   map[uint64]bool // hashes of the texts decoded once
	byText map[string]*decodedPatch
}

// decodedPatch is a patch text decoded both ways, shared by the stages
// made from it, which only read it: a strategic-merge stage merges a
// conversion of its patch (smp.Merge builds the result from node trees;
// with a target it merges a copy), and a JSON patch is only read by Apply.
// The strategic-merge patches are frozen all the same.
type decodedPatch struct {
	once    sync.Once
	smp     []*resource.Resource
	errSM   error
	jp      jsonpatch.Patch
	direct  []directOp // jp for applyDirect (nil: through JSON)
	errJSON error
}

func (p *Patches) decode(text string) *decodedPatch {
	d := p.shared(text)
	if d == nil {
		d = &decodedPatch{}
	}
	d.once.Do(func() {
		d.smp, d.errSM = decodePatches(text)
		for _, r := range d.smp {
			r.Freeze()
		}
		d.jp, d.errJSON = decodeJSONPatch(text)
		if d.errJSON == nil {
			d.direct = directPatch(d.jp)
		}
	})
	return d
}

// shared returns the entry of a text seen before, nil for a text seen
// the first time (or a nil p).
func (p *Patches) shared(text string) *decodedPatch {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.byText[text]; d != nil {
		return d
	}
	if p.seen == nil {
		p.seed = maphash.MakeSeed()
		p.seen = map[uint64]bool{}
		p.byText = map[string]*decodedPatch{}
	}
	h := maphash.String(p.seed, text)
	if !p.seen[h] {
		p.seen[h] = true
		return nil
	}
	// Seen before (or a text with the same hash: then it is merely
	// kept decoded, which is still correct).
	d := &decodedPatch{}
	p.byText[text] = d
	return d
}

// New is newPatch, with the texts p decoded before.
func (p *Patches) New(cfg loaders.Patch, read ReadFile) (Stage, error) {
	cfg.Patch = strings.TrimSpace(cfg.Patch)
	var text, source string
	switch {
	case cfg.Patch == "" && cfg.Path == "":
		return nil, fmt.Errorf("must specify one of patch and path in\n%s", describePatchConfig(cfg))
	case cfg.Patch != "" && cfg.Path != "":
		return nil, fmt.Errorf("patch and path can't be set at the same time\n%s", describePatchConfig(cfg))
	case cfg.Patch != "":
		text, source = cfg.Patch, fmt.Sprintf("[patch: %q]", cfg.Patch)
	default:
		data, err := read(cfg.Path)
		if err != nil {
			return nil, fmt.Errorf("failed to get the patch file from path(%s): %w", cfg.Path, err)
		}
		text, source = string(data), fmt.Sprintf("[path: %q]", cfg.Path)
	}
	d := p.decode(text)
	smp, errSM, jp, errJSON := d.smp, d.errSM, d.jp, d.errJSON
	switch {
	case errSM == nil && errJSON == nil && len(smp) > 0 && len(jp) > 0:
		return nil, fmt.Errorf("illegally qualifies as both an SM and JSON patch: %s", source)
	case errSM != nil && errJSON != nil:
		return nil, fmt.Errorf("unable to parse SM or JSON patch from %s", source)
	case errSM == nil && len(smp) > 0:
		return newStrategicMergePatch(cfg, smp, text, source)
	case errSM == nil:
		// Text that holds no strategic-merge patch (an empty file, only
		// comments) changes nothing, as in kustomize v5.8.1+; v5.8.0 took
		// it for a JSON patch and asked for a target.
		return emptyPatchStage{}, nil
	}
	if cfg.Target == nil {
		return nil, fmt.Errorf("must specify a target for JSON patch %s", source)
	}
	return &jsonPatchStage{kind: "PatchTransformer", target: *cfg.Target, text: text, patch: jp, direct: d.direct, rename: true}, nil
}

// PatchFromConfig configures a PatchTransformer from its builtin plugin
// config.
func PatchFromConfig(data []byte, read ReadFile) (Stage, error) {
	var cfg loaders.Patch
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, err
	}
	return newPatch(cfg, read)
}

// describePatchConfig renders a patch config for an error message.
func describePatchConfig(cfg loaders.Patch) string {
	var b strings.Builder
	if cfg.Path != "" {
		fmt.Fprintf(&b, "path: %s\n", cfg.Path)
	}
	if cfg.Patch != "" {
		fmt.Fprintf(&b, "patch: %q\n", cfg.Patch)
	}
	if cfg.Target != nil {
		fmt.Fprintf(&b, "target: %s\n", cfg.Target)
	}
	return b.String()
}

// emptyPatchStage is a patch that holds no patch: it changes nothing.
type emptyPatchStage struct{}

func (emptyPatchStage) Kind() string        { return "PatchTransformer" }
func (emptyPatchStage) Cheap()              {}
func (emptyPatchStage) Fingerprint() []byte { return Fingerprint("PatchTransformer", "empty") }
func (emptyPatchStage) Run(context.Context, *resource.List) error {
	return nil
}
