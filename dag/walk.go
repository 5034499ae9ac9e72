package dag

import (
	"container/heap"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/hashicorp/go-multierror"
)

// Walk calls fn once for every vertex, after fn has returned nil for all of
// the vertex's dependencies.
//
// At most jobs calls run at once; jobs < 1 means runtime.NumCPU(). A failure
// does not stop the walk: every vertex none of whose dependencies failed is
// still run. A vertex with a failed or skipped dependency is not run and is
// reported as skipped.
//
// Walk first calls Validate; if the graph has a cycle, it returns the
// *CycleError and calls fn for no vertex. Otherwise it returns nil or a
// *WalkError. Once ctx is cancelled no further calls of fn are started;
// the vertices that would have been started fail with ctx.Err().
func (g *Graph) Walk(ctx context.Context, jobs int, fn func(ctx context.Context, v string) error) error {
	if err := g.Validate(); err != nil {
		return err
	}
	return g.walk(ctx, jobs, g.vertices, fn)
}

// WalkFrom is like Walk, restricted to roots and every vertex they depend on,
// directly or transitively. It returns an error if a root is not a vertex of
// the graph.
//
// Among the vertices ready to run, those the earliest root needs go first,
// so that the walk finishes roots one after another (depth first) rather
// than every leaf before any root: what a caller keeps for a vertex until
// its dependents are done is then held for few vertices at a time.
func (g *Graph) WalkFrom(ctx context.Context, jobs int, roots []string, fn func(ctx context.Context, v string) error) error {
	if err := g.Validate(); err != nil {
		return err
	}
	set := make(map[string]struct{})
	order := make(map[string]int) // the index of the first root that needs a vertex
	for i, r := range roots {
		if !g.Has(r) {
			return fmt.Errorf("dag: unknown vertex %q", r)
		}
		stack := []string{r}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if _, ok := set[v]; ok {
				continue
			}
			set[v] = struct{}{}
			order[v] = i
			stack = append(stack, g.deps[v]...)
		}
	}
	return g.walkOrdered(ctx, jobs, set, order, fn)
}

// result is the outcome of one call of the walk function.
type result struct {
	v   string
	err error
}

// walk runs fn over the vertices in set, which must be closed under
// dependencies and acyclic, ready vertices in name order.
func (g *Graph) walk(ctx context.Context, jobs int, set map[string]struct{}, fn func(ctx context.Context, v string) error) error {
	return g.walkOrdered(ctx, jobs, set, nil, fn)
}

// readyQueue holds the vertices ready to run, lowest order first, then by
// name.
type readyQueue struct {
	vs    []string
	order map[string]int
}

func (q *readyQueue) Len() int { return len(q.vs) }
func (q *readyQueue) Less(i, j int) bool {
	a, b := q.vs[i], q.vs[j]
	if oa, ob := q.order[a], q.order[b]; oa != ob {
		return oa < ob
	}
	return a < b
}
func (q *readyQueue) Swap(i, j int) { q.vs[i], q.vs[j] = q.vs[j], q.vs[i] }
func (q *readyQueue) Push(x any)    { q.vs = append(q.vs, x.(string)) }
func (q *readyQueue) Pop() any {
	v := q.vs[len(q.vs)-1]
	q.vs = q.vs[:len(q.vs)-1]
	return v
}

// walkOrdered runs fn over the vertices in set, at most jobs at once,
// starting the ready vertex of lowest order (then name) whenever a slot
// is free.
func (g *Graph) walkOrdered(ctx context.Context, jobs int, set map[string]struct{}, order map[string]int, fn func(ctx context.Context, v string) error) error {
	if jobs < 1 {
		jobs = runtime.NumCPU()
	}
	if order == nil {
		order = map[string]int{}
	}

	// remaining counts the dependencies of each vertex that have not yet
	// succeeded. A vertex is ready when its count reaches zero.
	remaining := make(map[string]int, len(set))
	ready := &readyQueue{order: order}
	for v := range set {
		remaining[v] = len(g.deps[v])
		if remaining[v] == 0 {
			ready.vs = append(ready.vs, v)
		}
	}
	heap.Init(ready)

	// jobs long-lived workers run the vertices (a goroutine per vertex
	// would start each call on a small stack and grow it again: a few
	// percent of a build). The result channel holds a result for every
	// vertex, so workers never block on it; work holds at most jobs.
	results := make(chan result, len(set))
	work := make(chan string, jobs)
	var wg sync.WaitGroup
	for range min(jobs, len(set)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := range work {
				if err := ctx.Err(); err != nil {
					results <- result{v, err}
					continue
				}
				results <- result{v, fn(ctx, v)}
			}
		}()
	}
	running := 0
	fill := func() {
		for running < jobs && ready.Len() > 0 {
			running++
			work <- heap.Pop(ready).(string)
		}
	}
	fill()
	errs := make(map[string]error)
	finished := make(map[string]struct{}, len(set))
	for running > 0 {
		r := <-results
		running--
		finished[r.v] = struct{}{}
		if r.err != nil {
			// The dependents of r.v never reach zero and so are never
			// started; they are reported as skipped below.
			errs[r.v] = r.err
		} else {
			for _, d := range g.Dependents(r.v) {
				if _, ok := set[d]; !ok {
					continue
				}
				remaining[d]--
				if remaining[d] == 0 {
					heap.Push(ready, d)
				}
			}
		}
		fill()
	}
	close(work)
	wg.Wait()

	if len(errs) == 0 {
		return nil
	}
	var skipped []string
	for v := range set {
		if _, ok := finished[v]; !ok {
			skipped = append(skipped, v)
		}
	}
	slices.Sort(skipped)
	return &WalkError{Errors: errs, Skipped: skipped}
}

// WalkError is returned by Walk and WalkFrom when fn failed for at least one
// vertex.
type WalkError struct {
	// Errors maps each failed vertex to the error fn returned for it, or to
	// the context's error if it was not started because ctx was cancelled.
	Errors map[string]error
	// Skipped lists, sorted, the vertices that were not run because a
	// dependency failed or was skipped.
	Skipped []string
}

// Failed returns the failed vertices, sorted.
func (e *WalkError) Failed() []string {
	vs := make([]string, 0, len(e.Errors))
	for v := range e.Errors {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// Unwrap returns the errors of the failed vertices, in sorted vertex order,
// so that errors.Is and errors.As look into them.
func (e *WalkError) Unwrap() []error {
	errs := make([]error, 0, len(e.Errors))
	for _, v := range e.Failed() {
		errs = append(errs, e.Errors[v])
	}
	return errs
}

// Error formats the errors of all failed vertices, in sorted vertex order.
func (e *WalkError) Error() string {
	var merr *multierror.Error
	for _, err := range e.Unwrap() {
		merr = multierror.Append(merr, err)
	}
	if merr == nil {
		return "dag: walk failed"
	}
	return merr.Error()
}
