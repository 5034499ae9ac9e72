package engine

import (
	"maps"
	"slices"
)

// ReadSet is what a root's build depends on, as paths: the answer to "can a
// change to this path change this root's output?". It over-approximates,
// never under-approximates: a path it does not cover cannot change the
// output (for the same settings and the same plugins and helm binary).
type ReadSet struct {
	// Files are the files the build read or tried to read (a missing
	// resource file is listed: creating it changes the output), absolute,
	// both as named and with symlinks resolved.
	Files []string
	// Dirs are the kustomization directories whose listing the build
	// depends on: adding or removing a kustomization file there (a second
	// one is an error) changes the output.
	Dirs []string
	// Trees are directories any file under which may change the output:
	// the directories of nodes that run plugins or helm charts (a plugin
	// may read anything next to its config), of nodes whose stage reads
	// are not known (a node that failed, or was not built), and charts read
	// whole.
	Trees []string
	// Either are paths known to be files or kustomization directories,
	// not told apart (a root index's record of inputs): matched as both.
	Either []string
}

// Reads returns what root's build in this run depended on. It is exact for
// the nodes the cache recorded (every file a stage read is in their
// manifest) and falls back to the node's whole directory for the others, so
// it is most precise on a Builder with a cache.
func (b *Builder) Reads(root *Node) ReadSet {
	files := map[string]bool{}
	dirs := map[string]bool{}
	trees := map[string]bool{}
	addFile := func(p, real string) {
		if p != "" {
			files[p] = true
		}
		if real != "" {
			files[real] = true
		}
	}
	eachNode(func(n *Node) {
		dirs[n.Dir] = true
		if n.File != nil {
			addFile(n.File.Path, n.File.Real)
		}
		k := n.K
		known := false
		if m := b.memo; m != nil {
			m.mu.Lock()
			used, ok := m.used[n]
			volatile := m.volatile[n]
			m.mu.Unlock()
			if ok && !volatile {
				known = true
				for _, r := range used {
					if r.Tree {
						trees[n.Loader.Abs(r.Path)] = true
						if r.Real != "" {
							trees[r.Real] = true
						}
						continue
					}
					addFile(n.Loader.Abs(r.Path), r.Real)
				}
			}
		}
		if !known || len(k.Generators)+len(k.Transformers)+len(k.Validators)+len(k.HelmCharts) > 0 {
			trees[n.Dir] = true
		}
		for _, list := range [][]*Entry{n.Resources, n.Components, n.PluginDirs} {
			for _, e := range list {
				if e.Child == nil { // (a node's children are visited on their own)
					addFile(n.Loader.Abs(e.Path), e.File)
				}
			}
		}
	}, root)
	return ReadSet{Files: slices.Sorted(maps.Keys(files)), Dirs: slices.Sorted(maps.Keys(dirs)), Trees: slices.Sorted(maps.Keys(trees))}
}
