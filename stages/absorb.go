package stages

import "github.com/kpipe/kpipe/resource"

// Absorb adds a generated object to rs as kustomize's AbsorbAll does, by
// its generator behavior (res.Gen): a new object is appended; merge and
// replace update the one existing object it matches. res must be private.
// Plugin generators use it for their output.
func Absorb(rs *resource.List, res *resource.Resource) error { return absorb(rs, res, Kustomize582) }

// NormalBehavior maps a generator behavior to create, merge or replace, or
// "" for anything else (kustomize's unspecified behavior).
func NormalBehavior(b string) string { return normalBehavior(b) }
