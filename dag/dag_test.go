package dag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder records the order in which a walk visits vertices.
type recorder struct {
	mu    sync.Mutex
	order []string
}

func (r *recorder) visit(_ context.Context, v string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.order = append(r.order, v)
	return nil
}

func (r *recorder) visited() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order)
}

// inFlight tracks how many calls are running at once and the most seen.
type inFlight struct {
	cur, max atomic.Int32
}

func (f *inFlight) enter() {
	n := f.cur.Add(1)
	for {
		m := f.max.Load()
		if n <= m || f.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (f *inFlight) leave() { f.cur.Add(-1) }

func diamond() *Graph {
	g := New()
	g.Connect("a", "b")
	g.Connect("a", "c")
	g.Connect("b", "d")
	g.Connect("c", "d")
	return g
}

func TestGraph(t *testing.T) {
	g := diamond()
	g.Connect("a", "b") // idempotent
	g.Add("d")          // idempotent
	g.Add("e")

	if got, want := g.Len(), 5; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
	if got, want := g.Vertices(), []string{"a", "b", "c", "d", "e"}; !slices.Equal(got, want) {
		t.Errorf("Vertices() = %v, want %v", got, want)
	}
	if !g.Has("e") || g.Has("z") {
		t.Errorf("Has(e), Has(z) = %v, %v, want true, false", g.Has("e"), g.Has("z"))
	}

	g2 := New()
	g2.Connect("x", "z")
	g2.Connect("x", "y")
	if got, want := g2.DependsOn("x"), []string{"z", "y"}; !slices.Equal(got, want) {
		t.Errorf("DependsOn(x) = %v, want %v (connect order)", got, want)
	}
	if got, want := g.Dependents("d"), []string{"b", "c"}; !slices.Equal(got, want) {
		t.Errorf("Dependents(d) = %v, want %v", got, want)
	}
	if got := g.DependsOn("e"); len(got) != 0 {
		t.Errorf("DependsOn(e) = %v, want none", got)
	}
	if err := g.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
}

func TestValidateCycle(t *testing.T) {
	tests := []struct {
		name    string
		edges   [][2]string
		want    []string
		wantMsg string
	}{
		{
			name:    "triangle",
			edges:   [][2]string{{"a", "b"}, {"b", "c"}, {"c", "a"}},
			want:    []string{"a", "b", "c", "a"},
			wantMsg: "cycle: a -> b -> c -> a",
		},
		{
			name:    "self loop",
			edges:   [][2]string{{"a", "a"}},
			want:    []string{"a", "a"},
			wantMsg: "cycle: a -> a",
		},
		{
			name:    "cycle below an acyclic prefix",
			edges:   [][2]string{{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "b"}},
			want:    []string{"b", "c", "d", "b"},
			wantMsg: "cycle: b -> c -> d -> b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New()
			for _, e := range tt.edges {
				g.Connect(e[0], e[1])
			}
			err := g.Validate()
			var cerr *CycleError
			if !errors.As(err, &cerr) {
				t.Fatalf("Validate() = %v, want *CycleError", err)
			}
			if !slices.Equal(cerr.Path, tt.want) {
				t.Errorf("Path = %v, want %v", cerr.Path, tt.want)
			}
			if got := err.Error(); got != tt.wantMsg {
				t.Errorf("Error() = %q, want %q", got, tt.wantMsg)
			}

			var calls atomic.Int32
			werr := g.Walk(context.Background(), 4, func(context.Context, string) error {
				calls.Add(1)
				return nil
			})
			if _, ok := werr.(*CycleError); !ok {
				t.Errorf("Walk() = %#v, want *CycleError", werr)
			}
			if n := calls.Load(); n != 0 {
				t.Errorf("Walk called fn %d times on a cyclic graph, want 0", n)
			}
		})
	}
}

func TestWalkDiamond(t *testing.T) {
	for _, jobs := range []int{0, 1, 2, 8} {
		t.Run(fmt.Sprintf("jobs=%d", jobs), func(t *testing.T) {
			var r recorder
			if err := diamond().Walk(context.Background(), jobs, r.visit); err != nil {
				t.Fatalf("Walk() = %v", err)
			}
			order := r.visited()
			if got := len(order); got != 4 {
				t.Fatalf("visited %v, want each of a, b, c, d once", order)
			}
			pos := make(map[string]int)
			for i, v := range order {
				if _, dup := pos[v]; dup {
					t.Fatalf("visited %q twice: %v", v, order)
				}
				pos[v] = i
			}
			for _, e := range [][2]string{{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}} {
				if pos[e[1]] > pos[e[0]] {
					t.Errorf("visited %s before its dependency %s: %v", e[0], e[1], order)
				}
			}
		})
	}
}

func TestWalkEmpty(t *testing.T) {
	if err := New().Walk(context.Background(), 1, func(context.Context, string) error {
		t.Error("fn called on empty graph")
		return nil
	}); err != nil {
		t.Errorf("Walk() = %v, want nil", err)
	}
}

func TestWalkConcurrent(t *testing.T) {
	const n = 4
	g := New()
	for i := range n {
		g.Add(fmt.Sprint(i))
	}
	var entered atomic.Int32
	all := make(chan struct{})
	err := g.Walk(context.Background(), n, func(context.Context, string) error {
		if entered.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("not all vertices ran at once")
		}
	})
	if err != nil {
		t.Fatalf("Walk() = %v", err)
	}
}

func TestWalkLimit(t *testing.T) {
	tests := []struct {
		jobs, vertices int
	}{
		{jobs: 1, vertices: 4},
		{jobs: 2, vertices: 10},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("jobs=%d", tt.jobs), func(t *testing.T) {
			g := New()
			for i := range tt.vertices {
				g.Add(fmt.Sprint(i))
			}
			var f inFlight
			var calls atomic.Int32
			err := g.Walk(context.Background(), tt.jobs, func(context.Context, string) error {
				f.enter()
				defer f.leave()
				calls.Add(1)
				time.Sleep(time.Millisecond) // give other calls a chance to overlap
				return nil
			})
			if err != nil {
				t.Fatalf("Walk() = %v", err)
			}
			if got := int(calls.Load()); got != tt.vertices {
				t.Errorf("fn called %d times, want %d", got, tt.vertices)
			}
			if got := int(f.max.Load()); got > tt.jobs {
				t.Errorf("max in-flight calls = %d, want <= %d", got, tt.jobs)
			}
		})
	}
}

func TestWalkFailure(t *testing.T) {
	errB := errors.New("b is broken")
	tests := []struct {
		name        string
		edges       [][2]string
		fail        map[string]error
		wantRun     []string
		wantFailed  []string
		wantSkipped []string
	}{
		{
			name:        "sibling still runs",
			edges:       [][2]string{{"a", "b"}, {"a", "c"}},
			fail:        map[string]error{"b": errB},
			wantRun:     []string{"b", "c"},
			wantFailed:  []string{"b"},
			wantSkipped: []string{"a"},
		},
		{
			name:        "skip is transitive",
			edges:       [][2]string{{"a", "b"}, {"b", "c"}, {"x", "y"}},
			fail:        map[string]error{"c": errB},
			wantRun:     []string{"c", "x", "y"},
			wantFailed:  []string{"c"},
			wantSkipped: []string{"a", "b"},
		},
		{
			name:        "several failures",
			edges:       [][2]string{{"a", "b"}, {"a", "c"}, {"d", "c"}},
			fail:        map[string]error{"b": errB, "c": errors.New("c is broken")},
			wantRun:     []string{"b", "c"},
			wantFailed:  []string{"b", "c"},
			wantSkipped: []string{"a", "d"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New()
			for _, e := range tt.edges {
				g.Connect(e[0], e[1])
			}
			var r recorder
			err := g.Walk(context.Background(), 4, func(ctx context.Context, v string) error {
				r.visit(ctx, v)
				return tt.fail[v]
			})
			var werr *WalkError
			if !errors.As(err, &werr) {
				t.Fatalf("Walk() = %v, want *WalkError", err)
			}
			run := r.visited()
			slices.Sort(run)
			if !slices.Equal(run, tt.wantRun) {
				t.Errorf("ran %v, want %v", run, tt.wantRun)
			}
			if got := werr.Failed(); !slices.Equal(got, tt.wantFailed) {
				t.Errorf("Failed() = %v, want %v", got, tt.wantFailed)
			}
			if !slices.Equal(werr.Skipped, tt.wantSkipped) {
				t.Errorf("Skipped = %v, want %v", werr.Skipped, tt.wantSkipped)
			}
			for v, want := range tt.fail {
				if got := werr.Errors[v]; got != want {
					t.Errorf("Errors[%s] = %v, want %v", v, got, want)
				}
				if !strings.Contains(err.Error(), want.Error()) {
					t.Errorf("Error() = %q, want it to mention %q", err.Error(), want)
				}
				if !errors.Is(err, want) {
					t.Errorf("errors.Is(err, %v) = false, want true", want)
				}
			}
		})
	}
}

func TestWalkFrom(t *testing.T) {
	g := diamond()
	g.Connect("x", "d")
	g.Connect("y", "x")
	g.Add("z")

	tests := []struct {
		roots []string
		want  []string
	}{
		{roots: []string{"b"}, want: []string{"b", "d"}},
		{roots: []string{"x"}, want: []string{"d", "x"}},
		{roots: []string{"b", "c"}, want: []string{"b", "c", "d"}},
		{roots: []string{"a", "y", "z"}, want: []string{"a", "b", "c", "d", "x", "y", "z"}},
		{roots: nil, want: nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.roots, ","), func(t *testing.T) {
			var r recorder
			if err := g.WalkFrom(context.Background(), 2, tt.roots, r.visit); err != nil {
				t.Fatalf("WalkFrom() = %v", err)
			}
			got := r.visited()
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("visited %v, want %v", got, tt.want)
			}
		})
	}

	t.Run("unknown root", func(t *testing.T) {
		err := g.WalkFrom(context.Background(), 2, []string{"nope"}, func(context.Context, string) error {
			t.Error("fn called")
			return nil
		})
		if err == nil {
			t.Error("WalkFrom() = nil, want error for unknown root")
		}
	})
}

func TestWalkCancel(t *testing.T) {
	t.Run("before walk", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var calls atomic.Int32
		err := diamond().Walk(ctx, 2, func(context.Context, string) error {
			calls.Add(1)
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Walk() = %v, want context.Canceled", err)
		}
		if n := calls.Load(); n != 0 {
			t.Errorf("fn called %d times after cancel, want 0", n)
		}
	})

	t.Run("during walk", func(t *testing.T) {
		// A chain a -> b -> c -> d: d runs first and cancels the walk.
		g := New()
		g.Connect("a", "b")
		g.Connect("b", "c")
		g.Connect("c", "d")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var r recorder
		err := g.Walk(ctx, 2, func(ctx context.Context, v string) error {
			r.visit(ctx, v)
			if v == "d" {
				cancel()
			}
			return nil
		})
		var werr *WalkError
		if !errors.As(err, &werr) {
			t.Fatalf("Walk() = %v, want *WalkError", err)
		}
		if got, want := r.visited(), []string{"d"}; !slices.Equal(got, want) {
			t.Errorf("ran %v, want %v", got, want)
		}
		if got := werr.Errors["c"]; !errors.Is(got, context.Canceled) {
			t.Errorf("Errors[c] = %v, want context.Canceled", got)
		}
		if got, want := werr.Skipped, []string{"a", "b"}; !slices.Equal(got, want) {
			t.Errorf("Skipped = %v, want %v", got, want)
		}
	})
}

// TestWalkFromFinishesRootsInOrder: with one job, WalkFrom finishes the
// first root before it starts on the second's own dependencies, so a
// caller holds the results of few vertices at a time (not every leaf of
// every root before the first root).
func TestWalkFromFinishesRootsInOrder(t *testing.T) {
	g := New()
	for _, v := range []string{"r0", "r1", "r2", "a0", "a1", "a2", "shared"} {
		g.Add(v)
	}
	for i := 0; i < 3; i++ {
		g.Connect(fmt.Sprintf("r%d", i), fmt.Sprintf("a%d", i))
		g.Connect(fmt.Sprintf("a%d", i), "shared")
	}
	var got []string
	err := g.WalkFrom(context.Background(), 1, []string{"r0", "r1", "r2"}, func(_ context.Context, v string) error {
		got = append(got, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"shared", "a0", "r0", "a1", "r1", "a2", "r2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}
