package fleet

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/generate"
	"github.com/kpipe/kpipe/internal/argocd/manifest"
	"github.com/kpipe/kpipe/internal/argocd/render"
	"github.com/kpipe/kpipe/internal/output"
)

// Source is the repository Applications are rendered from, and how.
type Source struct {
	// Tree is the repository.
	Tree *render.Tree
	// Label is how messages name its root (default: Tree.Dir).
	Label string
	// Repos says which repoURLs are this repository.
	Repos *app.Repos
	// Renderer renders the Kustomize and Helm sources.
	Renderer *render.Renderer
	// Settings are Argo CD's settings (argocd-cm, the cluster, the
	// commit).
	Settings generate.Settings
}

// Output is one Application rendered.
type Output struct {
	Result *generate.Result
	// Manifests are the objects the repo-server returns, in its order, as
	// a YAML stream (what `kpipe argocd manifests` prints and build-all
	// writes); Normalized the controller's view of them (what it diffs
	// with the cluster: namespaces defaulted or cleared, duplicates
	// resolved), in the order of first appearance.
	Manifests, Normalized []byte
	// Err is the controller's error ("failed to generate manifest for
	// source 1 of 1: ..."); Skipped why it cannot be rendered here.
	Err, Skipped string
	// Reads is what rendering it read.
	Reads *render.Reads
	// Cached says the output came from a record of an earlier run (Result
	// and Reads are then nil).
	Cached bool
}

// checkouts are the checkouts an Application's sources name: this
// repository, through a view recording what is read.
func (s *Source) checkouts(reads *render.Reads) generate.Checkouts {
	label := s.Label
	if label == "" {
		label = s.Tree.Dir
	}
	co := app.Checkout{FS: reads.View(s.Tree), Root: label}
	return func(repoURL string) (app.Checkout, bool) {
		if s.Repos.Local(repoURL) {
			return co, true
		}
		return app.Checkout{}, false
	}
}

// Render renders one Application (its kustomize builds alone, not
// batched: see RenderAll).
func (s *Source) Render(ctx context.Context, a *app.Application) *Output {
	reads := render.NewReads()
	res := generate.Application(render.WithReads(ctx, reads), a, s.checkouts(reads), s.Settings, s.Renderer)
	return outputOf(res, reads)
}

// RenderAll renders the Applications of units (App set, not skipped)
// together: their kustomize builds share graphs, so that a base several
// include is built once. The outputs are in the order of units (nil for
// a unit not rendered).
func (s *Source) RenderAll(ctx context.Context, units []*Unit) []*Output {
	out := make([]*Output, len(units))
	s.Renderer.Batch(ctx, len(units), func(ctx context.Context, i int) {
		u := units[i]
		if u.App == nil || u.Skipped != "" {
			return
		}
		out[i] = s.Render(ctx, u.App)
	})
	return out
}

func outputOf(res *generate.Result, reads *render.Reads) *Output {
	o := &Output{Result: res, Reads: reads, Skipped: res.Skipped}
	if res.Err != nil {
		o.Err = res.Err.Error()
		return o
	}
	if res.Skipped != "" {
		return o
	}
	var err error
	if o.Manifests, err = Stream(res.Manifests); err == nil {
		o.Normalized, err = Stream(res.Normalized)
	}
	if err != nil {
		o.Err = err.Error()
	}
	return o
}

// Stream writes objects as one YAML stream, as kpipe writes any output
// (documents separated by "---").
func Stream(objs []manifest.Object) ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range objs {
		b, err := output.MarshalValue(o)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// JSONLines writes objects one compact JSON object a line, keys sorted
// (as the repo-server returns each manifest).
func JSONLines(objs []manifest.Object) ([]byte, error) {
	var buf bytes.Buffer
	for _, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}
