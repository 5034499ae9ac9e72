package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/kpipe/kpipe/internal/argocd/manifest"
)

// Found is one Application or ApplicationSet document in a tree.
type Found struct {
	Path  string // slash-separated, relative to the tree's root
	Index int    // document index in the file (0-based)
	Kind  string // Application or ApplicationSet
	Name  string
	JSON  []byte // the document as JSON (sigs.k8s.io/yaml's conversion)
}

// FindOptions tune Find.
type FindOptions struct {
	// SkipDir reports directories not to enter (dir is slash-separated,
	// relative). Hidden directories (.git, ...) are always skipped.
	SkipDir func(dir string) bool
}

// Find walks fsys from dir (lexical order) and returns every argoproj.io
// Application and ApplicationSet held by a .yaml, .yml or .json file, in
// file and document order. Files that are not YAML (or hold a document
// that does not parse) are passed over: a tree holds many other files.
func Find(fsys fs.FS, dir string, o FindOptions) ([]Found, error) {
	var out []Found
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(d.Name(), ".") || o.SkipDir != nil && o.SkipDir(p)) {
				return fs.SkipDir
			}
			return nil
		}
		switch path.Ext(p) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if !strings.Contains(string(data), Group) {
			return nil
		}
		found, _ := findIn(p, data)
		out = append(out, found...)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// FindFile returns the Applications and ApplicationSets held by the file
// p of fsys (none when it is not there, or holds none), as Find does.
func FindFile(fsys fs.FS, p string) ([]Found, error) {
	data, err := fs.ReadFile(fsys, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if !strings.Contains(string(data), Group) {
		return nil, nil
	}
	found, _ := findIn(p, data)
	return found, nil
}

func findIn(p string, data []byte) ([]Found, error) {
	docs, err := manifest.SplitDocuments(trimBOM(data))
	if err != nil {
		return nil, err
	}
	var out []Found
	for i, doc := range docs {
		j, err := manifest.YAMLToJSON(doc)
		if err != nil {
			return out, fmt.Errorf("%s: document %d: %w", p, i, err)
		}
		var h struct {
			Header
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if json.Unmarshal(j, &h) != nil || !h.IsArgo() {
			continue
		}
		out = append(out, Found{Path: p, Index: i, Kind: h.Kind, Name: h.Metadata.Name, JSON: j})
	}
	return out, nil
}
