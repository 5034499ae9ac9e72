package cli

import (
	"os"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/rootindex"
	"github.com/kpipe/kpipe/loaders"
)

// buildRecord is `kpipe build`'s record of one root, as build-all keeps
// for each of its roots: every input the last build read, with its
// digest, and the output. When every input is unchanged (a stat, or a
// read of a small file, each), the stored output is printed without
// loading a kustomization and without writing anything.
type buildRecord struct {
	store   *cache.Store
	index   *rootindex.Index
	checker *cache.InputChecker
	root    string    // the root's real directory ("" when unknown)
	outKey  cache.Key // the output's entry

	mu       sync.Mutex
	warnings []string // the build's warnings, replayed with its output
}

// newBuildRecord prepares the record of the root dir; it does nothing
// without a store, with --verify-cache, when output goes to a directory
// (one file per resource needs the resources, not the YAML), or when the
// store writes a remote cache through (the build must look its entries
// up: the remote may lack them).
func newBuildRecord(c *cli.Context, store *cache.Store, opts engine.Options, r loaders.Restriction, dir string) *buildRecord {
	br := &buildRecord{store: store}
	if store == nil || opts.VerifyCache || outputIsDir(c) || store.WritesThrough() {
		return br
	}
	root, err := loaders.RealDir(loaders.Disk, dir)
	if err != nil {
		return br
	}
	settings := cache.NewKey(opts.Cache.Version, "build").Key(engine.SettingsKey(opts, r)).Sum()
	br.root = root
	br.index = rootindex.Open(store, settings)
	br.checker = cache.NewInputChecker(opts.Cache.Files)
	br.outKey = cache.NewKey(opts.Cache.Version, "build-output").Key(settings).String(root).Sum()
	return br
}

// outputIsDir reports whether -o names an existing directory.
func outputIsDir(c *cli.Context) bool {
	out := c.String("output")
	if out == "" {
		return false
	}
	st, err := os.Stat(out)
	return err == nil && st.IsDir()
}

// lookup returns the stored output and warnings when the root's inputs
// are unchanged. The caller closes the output (a big one is read from its
// file as it is written out).
func (br *buildRecord) lookup() (*cache.Value, []string, bool) {
	if br.root == "" {
		return nil, nil, false
	}
	rec, ok := br.index.Root(br.root)
	if !ok || !br.index.Unchanged(br.checker, rec) {
		return nil, nil, false
	}
	v, d, ok := br.store.Open(br.outKey)
	if ok && d != rec.OutputDigest {
		v.Close()
		ok = false
	}
	if !ok {
		return nil, nil, false
	}
	return v, rec.Warnings, true
}

// recordWarnings wraps warn so that the build's warnings are kept with
// its output.
func (br *buildRecord) recordWarnings(warn func(string)) func(string) {
	return func(msg string) {
		br.mu.Lock()
		br.warnings = append(br.warnings, msg)
		br.mu.Unlock()
		warn(msg)
	}
}

// record stores the root's output and inputs after a successful build,
// when the build knows every input.
func (br *buildRecord) record(b *engine.Builder, n *engine.Node, res engine.Result) {
	if br.root == "" || n == nil {
		return
	}
	// No second check of the inputs: every digest in the record is of the
	// bytes the build used, and lookup checks them all (see buildRoots in
	// internal/batch).
	inputs, ok := b.Inputs(n)
	if !ok {
		return
	}
	sum := res.OutputDigest()
	br.store.PutDigest(br.outKey, res.YAML, sum, res.Sensitive)
	br.mu.Lock()
	warnings := append([]string(nil), br.warnings...)
	br.mu.Unlock()
	br.index.SetRoot(br.root, &rootindex.Record{Inputs: inputs, OutputDigest: sum, Warnings: warnings})
}
