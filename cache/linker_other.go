//go:build !unix

package cache

import "os"

// linker makes hard links; where there is no linkat, each link names
// both paths whole.
type linker struct{}

func newLinker() *linker { return &linker{} }

// link is os.Link(oldname, newname).
func (*linker) link(oldname, newname string) error { return os.Link(oldname, newname) }

func (*linker) close() {}
