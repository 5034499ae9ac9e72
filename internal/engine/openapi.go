package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/internal/giturl"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
	"github.com/kpipe/kpipe/stages/smp"
)

// This file gives each node the schema its strategic-merge patches take
// merge keys from: the built-in Kubernetes schema, or one a
// kustomization's `openapi:` field selects (`path:` a custom OpenAPI
// document, or `version:` a built-in schema by version).
//
// kustomize keeps that schema in a process-wide variable, set by the
// first kustomization that declares one as the build enters them (the
// root first, then bases and components depth first), and used by every
// patch after that. kpipe gives the schema to nodes instead, so that a
// node's output depends only on the node and what it inherits, and the
// schema's digest is part of the node's cache key and of the fingerprint
// of every stage that uses it. A node's schema is the first of:
//
//  1. the declaration of its outermost referrer that declares one (kustomize
//     sets the root's before anything else, and then keeps it): a node
//     reached through such referrers is a node of its own, keyed by the
//     schema, as a node inheriting a namespace is;
//  2. its own declaration;
//  3. the schema of its first `resources` entry, else of its first
//     `components` entry, that has one (kustomize sets it while it builds
//     them, before the node's own patches run).
//
// kustomize also lets a schema set in one base reach the bases built
// after it and the nodes of other roots built later in the same process
// (the bugs of its global schema); kpipe does not.
//
// A custom document declared by a kustomization replaces the built-in
// schema, as in kustomize when the root (or the first base it enters)
// declares it: kinds it does not describe have no merge keys. One declared
// by a component is laid over the built-in schema (smp.FromOpenAPI), as in
// kustomize, where a component is applied after its parent's resources,
// when the built-in schema is usually already loaded.

// schemaSource is one `openapi:` declaration in effect.
type schemaSource struct {
	decl      *Node  // the kustomization or component that declares it
	path      string // the custom document as the field names it; "" for a built-in version
	data      []byte // the custom document
	onBuiltin bool   // laid over the built-in schema
	id        string // identifies the schema, for node keys

	once   sync.Once
	schema *smp.Schema
	err    error
}

// get returns the schema, parsing a custom document once; nil for the
// built-in schema.
func (s *schemaSource) get() (*smp.Schema, error) {
	if s == nil || s.path == "" {
		return nil, nil
	}
	s.once.Do(func() {
		s.schema, s.err = smp.FromOpenAPI(s.data, s.onBuiltin)
		if s.err != nil {
			s.err = fmt.Errorf("%s: openapi: invalid schema file '%s': %w", s.decl.File.Path, s.path, s.err)
		}
	})
	return s.schema, s.err
}

// Errors of `openapi:` declarations, in kustomize's words.
var (
	errOpenAPIBoth       = errors.New("builtin version and custom schema provided, cannot use both")
	errOpenAPINotBuiltin = errors.New("the specified OpenAPI version is not built in")
)

// declaredSchema returns the schema source of node n, given the one it
// inherits from its referrers (nil if none), from rules 1 and 2 above. As
// in kustomize, a declared custom document is read even when an inherited
// declaration overrides it, and the checks of the declaration apply only
// when it is the one in effect.
// An http(s) path is fetched with fetch, as kustomize loads it with a GET.
func declaredSchema(n *Node, inherited *schemaSource, fetch func(url string) ([]byte, error)) (*schemaSource, error) {
	f := n.K.OpenAPI
	path, hasPath := f["path"]
	version, hasVersion := f["version"]
	var data []byte
	if hasPath {
		var d []byte
		var err error
		if giturl.IsHTTPURL(path) {
			if d, err = fetch(path); err != nil {
				return inherited, fmt.Errorf("'%s': %w", path, err)
			}
		} else if d, _, err = n.Loader.ReadFile(path); err != nil {
			return inherited, err
		}
		data = d
	}
	switch {
	case inherited != nil:
		return inherited, nil
	case hasPath && hasVersion:
		return nil, errOpenAPIBoth
	case hasPath:
		s := &schemaSource{decl: n, path: path, data: data, onBuiltin: n.IsComponent()}
		sum := sha256.Sum256(data)
		s.id = "openapi/" + hex.EncodeToString(sum[:])
		if s.onBuiltin {
			s.id = "openapi+builtin/" + smp.BuiltinVersion() + "/" + hex.EncodeToString(sum[:])
		}
		return s, nil
	case version == "":
		return nil, nil
	case version != smp.BuiltinVersion():
		return nil, errOpenAPINotBuiltin
	}
	return &schemaSource{decl: n, id: "builtin/" + version}, nil
}

// inheritedSchema is rule 3 above: the schema of the node's first
// `resources`, else `components`, entry that has one.
func inheritedSchema(n *Node) *schemaSource {
	for _, list := range [][]*Entry{n.Resources, n.Components} {
		for _, e := range list {
			if e.Child != nil && e.Child.openapi != nil {
				return e.Child.openapi
			}
		}
	}
	return nil
}

// schemaID identifies the node's schema for its cache key.
func (n *Node) schemaID() string {
	if n.openapi == nil {
		return ""
	}
	return n.openapi.id
}

// checkSchema reports a problem with the node's `openapi:` declaration, or
// with the custom document it uses, naming the kustomization file.
func checkSchema(n *Node) error {
	if n.openapiErr != nil {
		return fmt.Errorf("%s: openapi: %w", n.File.Path, n.openapiErr)
	}
	_, err := n.openapi.get()
	return err
}

// scopeWarning is the warning about kinds a custom document declares
// cluster scoped that kpipe treats as namespaced, or "".
func (s *schemaSource) scopeWarning() string {
	schema, err := s.get()
	if err != nil || schema == nil {
		return ""
	}
	var kinds []string
	for _, k := range schema.ClusterScoped() {
		if !resource.NewGVK(k[0], k[1]).IsClusterScoped() {
			kinds = append(kinds, k[0]+" "+k[1])
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	return fmt.Sprintf("Warning: %s: openapi: '%s' declares cluster-scoped kinds that kpipe treats as namespaced (scopes from custom schemas are not supported yet): %s",
		s.decl.File.Path, s.path, strings.Join(kinds, ", "))
}

// withNodeSchema configures the node's stages to merge with the node's
// schema.
func withNodeSchema(n *Node, list []stages.Stage) ([]stages.Stage, error) {
	schema, err := n.openapi.get()
	if err != nil || schema == nil {
		return list, err
	}
	out := make([]stages.Stage, len(list))
	for i, s := range list {
		out[i] = stages.WithMergeSchema(s, schema)
	}
	return out, nil
}
