// Package dag is a small directed acyclic graph with a concurrent walk.
//
// Vertices are strings. An edge from a to b, added with Connect(a, b),
// means that a depends on b: b must be visited before a. Walk visits every
// vertex once, running independent vertices concurrently up to a limit, and
// never visits a vertex whose dependencies did not all succeed.
//
// A Graph is not safe for concurrent mutation. Walk only reads the graph, so
// it must not be modified while a walk is in progress.
//
// It imports nothing of kpipe.
//
// Stability: kpipe's stable API is the packages kpipe and pluginapi. This
// package is an importable building block with no compatibility promise
// before v1: its names may change in any release.
package dag

import (
	"slices"
	"strings"
)

// Graph is a directed graph of string vertices. Create one with New.
type Graph struct {
	vertices   map[string]struct{}
	deps       map[string][]string // v -> its dependencies, in connect order
	dependents map[string]map[string]struct{}
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{
		vertices:   make(map[string]struct{}),
		deps:       make(map[string][]string),
		dependents: make(map[string]map[string]struct{}),
	}
}

// Add adds the vertex v. Adding a vertex that is already present does nothing.
func (g *Graph) Add(v string) {
	g.vertices[v] = struct{}{}
}

// Connect records that from depends on to: to must finish before from is
// started. Both vertices are added if missing. Connecting the same pair
// twice does nothing.
func (g *Graph) Connect(from, to string) {
	g.Add(from)
	g.Add(to)
	if slices.Contains(g.deps[from], to) {
		return
	}
	g.deps[from] = append(g.deps[from], to)
	if g.dependents[to] == nil {
		g.dependents[to] = make(map[string]struct{})
	}
	g.dependents[to][from] = struct{}{}
}

// Has reports whether v is a vertex of the graph.
func (g *Graph) Has(v string) bool {
	_, ok := g.vertices[v]
	return ok
}

// Vertices returns all vertices in sorted order.
func (g *Graph) Vertices() []string {
	vs := make([]string, 0, len(g.vertices))
	for v := range g.vertices {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// DependsOn returns the direct dependencies of v, in the order in which they
// were first connected.
func (g *Graph) DependsOn(v string) []string {
	return slices.Clone(g.deps[v])
}

// Dependents returns the vertices that directly depend on v, sorted.
func (g *Graph) Dependents(v string) []string {
	ds := make([]string, 0, len(g.dependents[v]))
	for d := range g.dependents[v] {
		ds = append(ds, d)
	}
	slices.Sort(ds)
	return ds
}

// Len returns the number of vertices.
func (g *Graph) Len() int {
	return len(g.vertices)
}

// Validate returns nil if the graph has no cycles, or a *CycleError
// describing the first cycle found. The search is deterministic: it starts
// from the vertices in sorted order and follows dependencies in the order in
// which they were connected.
func (g *Graph) Validate() error {
	const (
		unvisited = iota
		onPath
		done
	)
	state := make(map[string]int, len(g.vertices))
	var path []string

	var visit func(v string) *CycleError
	visit = func(v string) *CycleError {
		state[v] = onPath
		path = append(path, v)
		for _, d := range g.deps[v] {
			switch state[d] {
			case onPath:
				i := slices.Index(path, d)
				cycle := append(slices.Clone(path[i:]), d)
				return &CycleError{Path: cycle}
			case unvisited:
				if err := visit(d); err != nil {
					return err
				}
			}
		}
		path = path[:len(path)-1]
		state[v] = done
		return nil
	}

	for _, v := range g.Vertices() {
		if state[v] != unvisited {
			continue
		}
		if err := visit(v); err != nil {
			return err
		}
	}
	return nil
}

// CycleError reports a dependency cycle.
type CycleError struct {
	// Path lists the vertices of the cycle in dependency order. It starts
	// and ends with the same vertex, for example [a b c a].
	Path []string
}

// Error returns the cycle as "cycle: a -> b -> c -> a".
func (e *CycleError) Error() string {
	return "cycle: " + strings.Join(e.Path, " -> ")
}
