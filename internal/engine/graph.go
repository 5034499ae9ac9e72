package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/dag"
	"github.com/kpipe/kpipe/internal/fetch"
	"github.com/kpipe/kpipe/internal/giturl"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/stages"
)

// Node is one kustomization (or component) directory as the build uses it.
type Node struct {
	// Key identifies the node in the graph: the directory, plus the
	// namespace its helm charts inherit from its referrers when it declares
	// none (see HelmNamespace).
	Key string
	// Dir is the node's absolute, symlink-free directory.
	Dir string
	// File is the parsed kustomization file.
	File *loaders.KustomizationFile
	// K is the kustomization as this node builds it: its helmCharts without
	// a namespace carry the node's namespace, else HelmNamespace.
	K *loaders.Kustomization
	// HelmNamespace is the namespace of the nearest referrer that declares
	// one; kustomize v5.8.1 and later pass it down to a base or component
	// for its helm charts only (kustomize#6027, #6031). v5.8.0 set it as
	// the child's own namespace, which also changed the child's namespace
	// transformer, patch targets and name references; kpipe follows v5.8.1+.
	HelmNamespace string
	// Loader reads the node's files.
	Loader *loaders.Loader

	// Resources are the node's `resources` entries in order; the list stops
	// at the first entry that failed to load.
	Resources []*Entry
	// Components are the node's `components` entries in order, likewise.
	Components []*Entry
	// PluginDirs are the `generators`, `transformers` and `validators`
	// entries that name kustomization directories, which are built like
	// bases and whose objects are the plugin configs; by entry, once each.
	PluginDirs []*Entry

	// openapi is where the node's strategic-merge schema comes from (nil:
	// the built-in schema), and openapiErr what is wrong with its own
	// `openapi:` declaration; see openapi.go.
	openapi    *schemaSource
	openapiErr error

	// helmBelow says the node or a node below it has helm charts (or an
	// entry that failed to load): only then does HelmNamespace matter.
	helmBelow bool

	// Repo is the git checkout the node was loaded from (through a remote
	// base or a base of one), nil for a local node. Such a node reads only
	// files below its own directory, whatever the load restrictor, and its
	// bases must lie in the same checkout, as in kustomize.
	Repo *RemoteRepo

	// Origin is where the node lies relative to the build root, for the
	// origin and transformer annotations; nil when its root's kustomization
	// asks for no buildMetadata. K.BuildMetadata is the root's list: like
	// kustomize, a base or component is built under its root's
	// buildMetadata, not its own.
	Origin *stages.Origin
}

// Children returns the entries of n that name other nodes (resources,
// components and plugin config directories), in that order.
func (n *Node) Children() []*Entry {
	var out []*Entry
	for _, list := range [][]*Entry{n.Resources, n.Components, n.PluginDirs} {
		for _, e := range list {
			if e.Child != nil {
				out = append(out, e)
			}
		}
	}
	return out
}

// PluginDir returns the plugin config directory entry written as p, or nil
// when p is not one.
func (n *Node) PluginDir(p string) *Entry {
	for _, e := range n.PluginDirs {
		if e.Path == p {
			return e
		}
	}
	return nil
}

// KustFileName is the base name of the node's kustomization file.
func (n *Node) KustFileName() string { return filepath.Base(n.File.Path) }

// buildMeta is the buildMetadata context a node is loaded under: the
// root's options and the node's origin (nil when options is empty).
type buildMeta struct {
	options []string
	origin  *stages.Origin
}

// rootMeta is the context of a build root: its own buildMetadata.
func rootMeta(k *loaders.Kustomization) buildMeta {
	if len(k.BuildMetadata) == 0 {
		return buildMeta{}
	}
	return buildMeta{options: k.BuildMetadata, origin: &stages.Origin{}}
}

// childMeta is the context of the base or component p of n.
func childMeta(n *Node, p string) buildMeta {
	if n.Origin == nil {
		return buildMeta{}
	}
	return buildMeta{options: n.K.BuildMetadata, origin: n.Origin.Append(p)}
}

// keySuffix tells apart the builds of one directory under different
// buildMetadata contexts; a build root's context (own options, empty
// origin) and the plain one have none, so a root's key stays its directory.
func (m buildMeta) keySuffix(own []string) string {
	if slices.Equal(m.options, own) && (m.origin == nil || *m.origin == stages.Origin{}) {
		return ""
	}
	s := "?buildMetadata=" + strings.Join(m.options, ",")
	if m.origin != nil {
		s += "&origin=" + m.origin.Path
		if m.origin.Repo != "" {
			s += "&repo=" + m.origin.Repo + "&ref=" + m.origin.Ref
		}
	}
	return s
}

// RemoteRepo is a remote base's repository as a build uses it.
type RemoteRepo struct {
	// Spec is the URL as parsed.
	Spec *giturl.GitSpec
	// Checkout is where and at which commit it was checked out.
	Checkout *fetch.Checkout
}

// IsComponent reports whether the node is a Component.
func (n *Node) IsComponent() bool { return n.K.Kind == loaders.KindComponent }

// Entry is one `resources` or `components` entry of a kustomization.
type Entry struct {
	// Path is the entry as written.
	Path string
	// File is set for a resource file: its real path.
	File string
	// Data is the file's content.
	Data []byte
	// Child is set for a directory entry.
	Child *Node
	// Err is set when the entry could not be loaded; it is reported when
	// the build reaches the entry, as kustomize would.
	Err error
	// Remote says that the entry is a URL: an http(s) file (File is then
	// the URL) or a remote base (Child.Repo is its checkout).
	Remote bool

	src *fileRead // shared by the entries that read the same file
}

// Graph is the loaded kustomization graph of one or more roots.
type Graph struct {
	// loadStart is when loading began: no earlier than the stat of any
	// file the load read (the file index's racy window counts from it).
	loadStart time.Time
	// Roots are the nodes of the directories asked for, in order.
	Roots []*Node
	// Nodes are all nodes by key.
	Nodes map[string]*Node
	// DAG has an edge from every node to the nodes its entries name.
	DAG *dag.Graph
	// Warnings are messages kustomize prints while loading (deprecations),
	// in load order, without duplicates per file, in kustomize's words
	// (what `kpipe build` prints). WarningsOf tells which kustomization
	// file gave each, for a run of many roots.
	Warnings []string
	// runWarnings are the Warnings that concern the run rather than one
	// kustomization file (a remote checkout used stale, a forced git URL).
	runWarnings []string

	restriction loaders.Restriction
	// kustomize581 is LoadOptions.Kustomize581.
	kustomize581 bool
	// fs is where local kustomizations are read (remote bases are
	// checkouts on disk, read from loaders.Disk whatever fs is).
	fs     loaders.FS
	ctx    context.Context // while loading: for the fetches of remote bases
	remote *fetch.Fetcher
	warned map[string]bool
	kfiles map[string]kfile // parsed kustomization files by directory
	// helmFree are the canonical keys (see load) of nodes with no helm
	// chart in them or below them.
	helmFree map[string]bool
	// files are the resource files read, by directory and entry: a
	// directory loaded as several nodes (inheriting different namespaces)
	// reads its files once.
	files map[[2]string]*fileRead
}

// fileRead is the outcome of reading one entry as a file.
type fileRead struct {
	data []byte
	real string
	info os.FileInfo // the file's stat before it was read (for the file index)
	err  error

	digestOnce sync.Once // digest is data's, found once (memo.dataDigest)
	digest     cache.Key
}

type kfile struct {
	kf  *loaders.KustomizationFile
	err error
}

// LoadOptions are the settings of LoadContext.
type LoadOptions struct {
	// FS is where the roots and every local kustomization they reach are
	// read (nil: loaders.Disk): a git revision or an in-memory tree
	// through loaders.NewFS. Remote bases are read from their checkouts
	// on disk.
	FS loaders.FS
	// Restriction is the load restrictor of local kustomizations.
	Restriction loaders.Restriction
	// Remote fetches remote bases (git URLs) and http(s) resource files;
	// nil makes every such entry fail.
	Remote *fetch.Fetcher
	// Resolved says the local roots are absolute, symlink-free directories
	// already (build-all's discovery finds them so), which LoadContext
	// then does not resolve again.
	Resolved bool
	// Listed maps directories the caller listed just before (build-all's
	// discovery) to the name of the kustomization file each holds, where
	// that file is a regular file and the only one of
	// loaders.FileNames there in any case: a root among them is read
	// without looking for the file names again
	// (loaders.FindListedKustomization).
	Listed map[string]string
	// Warned, when set, holds the warnings given already by earlier loads
	// of the same run (build-all loads its roots a graph at a time), by
	// kustomization file or by text: the load does not give them again,
	// and adds its own. A load uses it alone: loads that share it run one
	// after another.
	Warned map[string]bool
	// Kustomize581 loads as kustomize v5.8.1 does (Options.Kustomize581):
	// a directory entry with ".." inside a segment is not refused.
	Kustomize581 bool
	// Since, when set, is when the run that loads the graph began, before
	// the load: build-all's discovery walk, whose listings a build's
	// records may take (cache.FileIndex.Known). Zero is when LoadContext
	// is called.
	Since time.Time
}

// Load reads the kustomizations reachable from the given root
// directories, without remote entries: LoadContext with only r.
func Load(roots []string, r loaders.Restriction) (*Graph, []error) {
	return LoadContext(context.Background(), roots, LoadOptions{Restriction: r})
}

// LoadContext reads the kustomizations reachable from the given root
// directories, fetching remote ones with o.Remote under ctx.
// An error here concerns a root itself (not a directory, no kustomization
// file); problems below a root are recorded in the entries that lead to
// them and reported when that root is built.
func LoadContext(ctx context.Context, roots []string, o LoadOptions) (*Graph, []error) {
	r := o.Restriction
	start := o.Since
	if start.IsZero() {
		start = time.Now()
	}
	fsys := o.FS
	if fsys == nil {
		fsys = loaders.Disk
	}
	warned := o.Warned
	if warned == nil {
		warned = map[string]bool{}
	}
	g := &Graph{loadStart: start, Nodes: map[string]*Node{}, DAG: dag.New(), restriction: r, kustomize581: o.Kustomize581, fs: fsys, ctx: ctx, remote: o.Remote, warned: warned, kfiles: map[string]kfile{},
		files: map[[2]string]*fileRead{}, helmFree: map[string]bool{}}
	defer func() { g.ctx = nil }() // only loading fetches remote bases
	errs := make([]error, len(roots))
	dirs := make([]string, len(roots))
	// A root that is a git URL is built in its checkout, as `kustomize
	// build <url>` builds in its clone.
	paths := slices.Clone(roots)
	repos := make([]*RemoteRepo, len(roots))
	for i, root := range roots {
		spec, err := giturl.ParseGitURL(root)
		if err != nil || o.Remote == nil {
			continue
		}
		co, err := o.Remote.Repo(ctx, spec)
		if err != nil {
			errs[i] = err
			continue
		}
		g.warnStale(co)
		paths[i] = filepath.Join(co.Dir, filepath.FromSlash(spec.Path))
		repos[i] = &RemoteRepo{Spec: spec, Checkout: co}
		if real, err := filepath.EvalSymlinks(paths[i]); err != nil || !loaders.Within(co.Dir, real) {
			errs[i] = fmt.Errorf("%s: no directory '%s' in %s at commit %s", root, spec.Path, spec.CloneURL(), co.Commit)
		}
	}
	// The roots' kustomization files, and the files their `resources`
	// entries name, are read and parsed concurrently (build-all loads every
	// kustomization of a tree as a root); the walk below, which follows
	// the entries, is sequential and finds them read.
	var eg errgroup.Group
	eg.SetLimit(runtime.NumCPU())
	parsed := make([]kfile, len(roots))
	reads := make([]map[string]*fileRead, len(roots))
	for i, root := range paths {
		if errs[i] != nil {
			continue
		}
		eg.Go(func() error {
			rfs := g.fsOf(repos[i])
			if o.Resolved && repos[i] == nil {
				dirs[i] = root
			} else if dirs[i], errs[i] = loaders.RealDir(rfs, root); errs[i] != nil {
				return nil
			}
			if name, ok := o.Listed[dirs[i]]; ok && repos[i] == nil {
				parsed[i].kf, parsed[i].err = loaders.FindListedKustomization(rfs, dirs[i], name, r)
			} else {
				parsed[i].kf, parsed[i].err = loaders.FindKustomization(rfs, dirs[i], r)
			}
			if parsed[i].err != nil {
				return nil
			}
			restriction := r
			if repos[i] != nil {
				restriction = loaders.RootOnly
			}
			ldr := loaders.NewReal(rfs, dirs[i], restriction)
			reads[i] = map[string]*fileRead{}
			for _, p := range parsed[i].kf.K.Resources {
				if giturl.IsHTTPURL(p) {
					continue // fetched by loadResource
				}
				f := &fileRead{}
				f.data, f.real, f.info, f.err = ldr.ReadFileStat(p)
				reads[i][p] = f
			}
			return nil
		})
	}
	_ = eg.Wait()
	for i := range roots {
		if errs[i] != nil {
			continue
		}
		if _, ok := g.kfiles[dirs[i]]; !ok {
			g.kfiles[dirs[i]] = parsed[i]
		}
		for p, f := range reads[i] {
			if _, ok := g.files[[2]string{dirs[i], p}]; !ok {
				g.files[[2]string{dirs[i], p}] = f
			}
		}
	}
	for i := range roots {
		dir, err := dirs[i], errs[i]
		if err != nil {
			g.Roots = append(g.Roots, nil)
			continue
		}
		n, err := g.load(dir, "", nil, nil, nil, repos[i])
		if err != nil {
			errs[i] = err
		}
		g.Roots = append(g.Roots, n)
	}
	g.connect()
	return g, errs
}

// FS is where g's local kustomizations were read.
func (g *Graph) FS() loaders.FS { return g.fs }

// fsOf is where a node of the checkout repo (nil: a local one) is read.
func (g *Graph) fsOf(repo *RemoteRepo) loaders.FS {
	if repo != nil {
		return loaders.Disk
	}
	return g.fs
}

// RememberKustomizations records in ix the digest of every kustomization
// file g read, with the stat taken before the read (see
// cache.FileIndex.Remember), so that a later Digest of one costs a stat,
// not a read.
func (g *Graph) RememberKustomizations(ix *cache.FileIndex, jobs int) {
	var files []*loaders.KustomizationFile
	for _, n := range g.Nodes {
		if n.File != nil && n.File.Real != "" && n.File.Info != nil {
			files = append(files, n.File)
		}
	}
	forEach(len(files), jobs, func(i int) {
		f := files[i]
		ix.Remember(f.Real, f.Info, int(f.Size), f.Sum, g.loadStart)
	})
}

// load returns the node for dir reached through chain (the directories of
// the referrers, outermost first), loading it and its entries on first use.
// meta is the buildMetadata context from the referrer; nil for a root.
// helmNS and inheritedAPI are the namespace for helm charts and the
// `openapi` schema the referrers pass down, if any.
// repo is the checkout dir lies in, nil for a local directory.
func (g *Graph) load(dir, helmNS string, inheritedAPI *schemaSource, chain []string, meta *buildMeta, repo *RemoteRepo) (*Node, error) {
	f, ok := g.kfiles[dir]
	if !ok {
		// A base shared by many overlays is read and parsed once.
		f.kf, f.err = loaders.FindKustomization(g.fsOf(repo), dir, g.restriction)
		g.kfiles[dir] = f
	}
	kf, err := f.kf, f.err
	if err != nil {
		return nil, err
	}
	g.warn(kf)
	helmPart := ""
	if kf.K.Namespace == "" && helmNS != "" {
		// The inherited namespace reaches only helm charts, in this node and
		// below it; a node that declares its own namespace passes that down
		// instead, so only nodes without one are told apart by it.
		helmPart = "?helmNamespace=" + helmNS
	} else {
		helmNS = ""
	}
	m := rootMeta(kf.K)
	if meta != nil {
		m = *meta
	}
	rest := m.keySuffix(kf.K.BuildMetadata)
	if inheritedAPI != nil {
		rest += "?openapi=" + inheritedAPI.id
	}
	if repo != nil {
		// The same checkout may be named by different URLs (a file:// path
		// and its http:// twin): origin annotations tell them apart.
		rest += "?repo=" + repo.Spec.CloneURL()
	}
	// canonical is the key without the inherited helm namespace: the key of
	// a node with no helm chart in it or below it, where that namespace
	// changes nothing, so that one node serves every referrer.
	canonical := dir + rest
	if helmPart != "" && g.helmFree[canonical] {
		helmPart, helmNS = "", ""
	}
	key := dir + helmPart + rest
	if n, ok := g.Nodes[key]; ok {
		// Already loaded through another parent: only the cycle rule, which
		// depends on the path taken, must be checked again.
		if err := g.checkChain(n, append(chain, dir)); err != nil {
			return nil, err
		}
		return n, nil
	}
	// The node's kustomization is the file's, unless its context changes
	// it (buildMetadata from its root, a namespace for its charts): then a
	// copy (most nodes share the file's; a copy is 600 bytes a node).
	k := kf.K
	charts := chartsWithNamespace(k.HelmCharts, k.Namespace, helmNS)
	if !sameSlice(m.options, k.BuildMetadata) || !sameSlice(charts, k.HelmCharts) {
		c := *kf.K
		c.BuildMetadata, c.HelmCharts = m.options, charts
		k = &c
	}
	restriction := g.restriction
	if repo != nil {
		restriction = loaders.RootOnly // as kustomize: clones never read outside
	}
	var ldr *loaders.Loader
	if repo == nil {
		// A root's directory comes from RealDir, a base's from
		// Loader.Resolve: both resolved already.
		ldr = loaders.NewReal(g.fs, dir, restriction)
	} else if ldr, err = loaders.New(loaders.Disk, dir, restriction); err != nil {
		return nil, err
	}
	n := &Node{Key: key, Dir: dir, File: kf, K: k, HelmNamespace: helmNS, Loader: ldr, Origin: m.origin, Repo: repo}
	n.openapi, n.openapiErr = declaredSchema(n, inheritedAPI, g.fetchFile)
	if n.openapi != nil && n.openapi.decl == n {
		g.runWarn(n.openapi.scopeWarning()) // (it names its file)
	}
	g.Nodes[key] = n
	chain = append(chain[:len(chain):len(chain)], dir)
	for _, p := range k.Resources {
		e := g.loadResource(n, p, chain)
		n.Resources = append(n.Resources, e)
		if e.Err != nil {
			break
		}
	}
	for _, p := range k.Components {
		e := g.loadComponent(n, p, chain)
		n.Components = append(n.Components, e)
		if e.Err != nil {
			break
		}
	}
	g.loadPluginDirs(n, chain)
	if n.openapi == nil && n.openapiErr == nil {
		n.openapi = inheritedSchema(n)
	}
	n.helmBelow = len(k.HelmCharts) > 0
	for _, list := range [][]*Entry{n.Resources, n.Components, n.PluginDirs} {
		for _, e := range list {
			if e.Err != nil || e.Child != nil && e.Child.helmBelow {
				n.helmBelow = true // (an entry that failed: unknown, so kept apart)
			}
		}
	}
	if helmPart != "" && !n.helmBelow {
		// No helm chart in the node or below it: the inherited namespace
		// changes nothing; one node serves every referrer.
		g.helmFree[canonical] = true
		delete(g.Nodes, key)
		if c, ok := g.Nodes[canonical]; ok {
			return c, nil
		}
		n.Key, n.HelmNamespace = canonical, ""
		g.Nodes[canonical] = n
	}
	return n, nil
}

// connect builds the DAG from the loaded nodes: an edge from every node to
// the nodes its entries name.
func (g *Graph) connect() {
	g.DAG = dag.New()
	for key, n := range g.Nodes {
		g.DAG.Add(key)
		for _, e := range n.Children() {
			g.DAG.Connect(key, e.Child.Key)
		}
	}
}

// sameSlice reports whether a and b are the same slice: same length and,
// unless empty, the same first element.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// chartsWithNamespace returns charts with each chart that names no
// namespace given ns, or inherited when ns is empty, as kustomize passes
// them to helm (kustomize#5566; inherited since v5.8.1). The slice is copied
// when anything changes: charts belongs to the parsed file, shared by nodes.
func chartsWithNamespace(charts []loaders.HelmChart, ns, inherited string) []loaders.HelmChart {
	if ns == "" {
		ns = inherited
	}
	if ns == "" {
		return charts
	}
	var out []loaders.HelmChart
	for i, c := range charts {
		if c.Namespace != "" {
			continue
		}
		if out == nil {
			out = slices.Clone(charts)
		}
		out[i].Namespace = ns
	}
	if out == nil {
		return charts
	}
	return out
}

// loadPluginDirs loads the plugin config entries of n that are
// directories: kustomize accumulates them like `resources` entries.
func (g *Graph) loadPluginDirs(n *Node, chain []string) {
	for _, list := range [][]string{n.K.Generators, n.K.Transformers, n.K.Validators} {
		for _, p := range list {
			if strings.Contains(p, "\n") || n.PluginDir(p) != nil {
				continue // inline YAML, or loaded already
			}
			if _, kind, err := n.Loader.Resolve(p); err != nil || kind != loaders.Dir {
				continue
			}
			n.PluginDirs = append(n.PluginDirs, g.loadResource(n, p, chain))
		}
	}
}

// Warning is a warning a kustomization file gives when it is loaded (a
// deprecated field), with the file it concerns.
type Warning struct {
	// File is the kustomization file's path (absolute, as loaded).
	File string
	// Text is the warning in kustomize's words.
	Text string
}

// WarningsOf returns the warnings of the kustomization files that root
// includes (itself, its bases and components, in load order, each file
// once), whatever earlier loads of the run gave already: what a run of
// many roots reports per root. The warnings that concern the run rather
// than a file are RunWarnings.
func (g *Graph) WarningsOf(root *Node) []Warning {
	var out []Warning
	seen := map[*Node]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		for _, w := range n.File.Warnings {
			out = append(out, Warning{File: n.File.Path, Text: w})
		}
		for _, e := range n.Children() {
			walk(e.Child)
		}
	}
	walk(root)
	// A file loaded as two nodes (two contexts) gives its warnings once.
	seenText := map[Warning]bool{}
	return slices.DeleteFunc(out, func(w Warning) bool {
		dup := seenText[w]
		seenText[w] = true
		return dup
	})
}

// RunWarnings returns the warnings of the load that concern no single
// kustomization file (a remote base's checkout used stale because its
// host is down, a forced git URL, a custom schema's scopes), each once a
// run (LoadOptions.Warned).
func (g *Graph) RunWarnings() []string { return g.runWarnings }

// runWarn adds a warning of the run, once (LoadOptions.Warned).
func (g *Graph) runWarn(w string) {
	if w == "" || g.warned[w] {
		return
	}
	g.warned[w] = true
	g.Warnings = append(g.Warnings, w)
	g.runWarnings = append(g.runWarnings, w)
}

func (g *Graph) warn(kf *loaders.KustomizationFile) {
	if g.warned[kf.Path] {
		return
	}
	g.warned[kf.Path] = true
	g.Warnings = append(g.Warnings, kf.Warnings...)
}

// loadResource loads one `resources` entry: a file if it is one, else a
// kustomization directory.
func (g *Graph) loadResource(n *Node, p string, chain []string) *Entry {
	e := &Entry{Path: p}
	if giturl.IsHTTPURL(p) {
		return g.loadURL(n, e, chain)
	}
	f, ok := g.files[[2]string{n.Dir, p}]
	if !ok {
		f = &fileRead{}
		f.data, f.real, f.info, f.err = n.Loader.ReadFileStat(p)
		g.files[[2]string{n.Dir, p}] = f
	}
	fileErr := f.err
	if fileErr == nil {
		e.File, e.Data, e.src = f.real, f.data, f
		return e
	}
	return g.resourceDir(n, e, fmt.Errorf("accumulating resources from '%s': %w", p, fileErr), chain)
}

// resourceDir loads the `resources` entry e, which could not be read as a
// file (fileErr), as a kustomization directory.
func (g *Graph) resourceDir(n *Node, e *Entry, fileErr error, chain []string) *Entry {
	p := e.Path
	child, err := g.loadDir(n, p, chain)
	if err != nil {
		e.Err = fmt.Errorf("accumulation err='%s': %w", fileErr.Error(), err)
		if errors.Is(fileErr, fs.ErrNotExist) && errors.Is(err, fs.ErrNotExist) {
			// Neither a file nor a directory: say where and what was
			// probably meant, before kustomize's wording.
			e.Err = &loaders.Hinted{Hint: loaders.MissingEntryHint(n.Loader.FS(), n.File.Path, n.File.Content(n.Loader.FS()), "resources", n.Dir, p), Err: e.Err}
		}
		return e
	}
	if child.IsComponent() {
		e.Err = fmt.Errorf("accumulation err='%s': expected kind != 'Component' for path '%s'", fileErr.Error(), child.Dir)
		return e
	}
	e.Child = child
	e.Remote = e.Remote || (child.Repo != nil && child.Repo != n.Repo)
	return e
}

// loadComponent loads one `components` entry, which must be a directory
// holding a Component.
func (g *Graph) loadComponent(n *Node, p string, chain []string) *Entry {
	e := &Entry{Path: p}
	child, err := g.loadDir(n, p, chain)
	var ce *CycleError
	switch {
	case errors.As(err, &ce):
		e.Err = err
		return e
	case errors.Is(err, errNotDir):
		e.Err = fmt.Errorf("loader.New %q", err.Error())
		return e
	case err != nil:
		e.Err = fmt.Errorf("accumulateDirectory: %q", err.Error())
		return e
	}
	if !child.IsComponent() {
		e.Err = fmt.Errorf("accumulateDirectory: \"expected kind 'Component' for path '%s' but got '%s'\"", child.Dir, child.K.Kind)
		return e
	}
	e.Child = child
	e.Remote = e.Remote || (child.Repo != nil && child.Repo != n.Repo)
	return e
}

// loadDir loads the kustomization directory p named by n: a remote base
// when p is a git URL (as kustomize, before trying it as a path).
func (g *Graph) loadDir(n *Node, p string, chain []string) (*Node, error) {
	if spec, err := giturl.ParseGitURL(p); err == nil {
		return g.loadRemote(n, p, spec, chain)
	}
	if ambiguousPath(p) && !g.kustomize581 {
		return nil, &ambiguousPathError{path: p}
	}
	real, kind, err := n.Loader.Resolve(p)
	if err != nil {
		return nil, fmt.Errorf("%w: not a valid directory: %w", errNotDir, err)
	}
	if kind != loaders.Dir {
		return nil, fmt.Errorf("%w: '%s': file is not directory", errNotDir, real)
	}
	if n.Repo != nil && !loaders.Within(n.Repo.Checkout.Dir, real) {
		return nil, fmt.Errorf("security; bases in kustomizations found in cloned git repos must be within the repo, but base '%s' is outside '%s'",
			real, n.Repo.Checkout.Dir)
	}
	return g.loadChild(n, p, real, chain, childMeta(n, p), n.Repo)
}

// loadChild loads the directory real, named p by n, as n's child.
func (g *Graph) loadChild(n *Node, p, real string, chain []string, meta buildMeta, repo *RemoteRepo) (*Node, error) {
	// As kustomize's loaders do, check the innermost referrer first.
	for i := len(chain) - 1; i >= 0; i-- {
		if visited := chain[i]; loaders.Within(real, visited) {
			return nil, &CycleError{Candidate: real, Visited: visited, Chain: append(append([]string(nil), chain...), real)}
		}
	}
	helmNS := n.K.Namespace
	if helmNS == "" {
		helmNS = n.HelmNamespace
	}
	child, err := g.load(real, helmNS, n.openapi, chain, &meta, repo)
	if err != nil {
		if _, ok := err.(*CycleError); ok {
			return nil, err
		}
		return nil, fmt.Errorf("couldn't make target for path '%s': %w", real, err)
	}
	return child, nil
}

// errNotDir is the start of the error for an entry that is not a directory.
var errNotDir = errors.New("must build at directory")

// ambiguousPath reports whether p has a segment that holds ".." without
// being "..", such as "base - .." in "../base - ../shared": what YAML makes
// of two list entries when the second is indented one space too far.
// kustomize v5.8.1+ refuses such a directory entry.
func ambiguousPath(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part != "" && part != "." && part != ".." && strings.Contains(part, "..") {
			return true
		}
	}
	return false
}

// ambiguousPathError is kustomize's error for an ambiguous directory entry;
// it counts as errNotDir (the entry cannot be opened as a kustomization).
type ambiguousPathError struct{ path string }

func (e *ambiguousPathError) Error() string {
	return fmt.Sprintf("path %q is ambiguous: resolves to %q after normalization, "+
		"which is likely not the intended target; check for YAML indentation errors in your kustomization file",
		e.path, filepath.Clean(e.path))
}

func (e *ambiguousPathError) Is(target error) bool { return target == errNotDir }

// checkChain re-checks the cycle rule for an already loaded node reached
// through a new chain of referrers.
func (g *Graph) checkChain(n *Node, chain []string) error {
	for _, list := range [][]*Entry{n.Resources, n.Components, n.PluginDirs} {
		for _, e := range list {
			if e.Child == nil {
				continue
			}
			for i := len(chain) - 1; i >= 0; i-- {
				if visited := chain[i]; loaders.Within(e.Child.Dir, visited) {
					return &CycleError{Candidate: e.Child.Dir, Visited: visited, Chain: append(append([]string(nil), chain...), e.Child.Dir)}
				}
			}
			if err := g.checkChain(e.Child, append(chain[:len(chain):len(chain)], e.Child.Dir)); err != nil {
				return err
			}
		}
	}
	return nil
}

// CycleError is a kustomization that refers, directly or through others, to
// itself or to a directory containing it.
type CycleError struct {
	Candidate string   // the directory being entered
	Visited   string   // the referrer it contains
	Chain     []string // the directories from the root to Candidate
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("cycle detected: candidate root '%s' contains visited root '%s' (%s)",
		e.Candidate, e.Visited, strings.Join(e.Chain, " -> "))
}

// Rel returns p relative to dir when it lies below it, else p.
func Rel(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// ReadBytes is how many bytes of kustomization and resource files the load
// read: a measure of the build to come (the CLI's memory settings use it).
func (g *Graph) ReadBytes() int64 {
	var n int64
	for _, k := range g.kfiles {
		if k.kf != nil {
			n += k.kf.Size
		}
	}
	for _, f := range g.files {
		n += int64(len(f.data))
	}
	return n
}
