// Package depstest is for tests: it checks that a package links none of
// a set of packages (what would make kpipe's executable dynamically
// linked, or slow to start), and names the shortest chain of imports to
// each one it does. It runs `go list -deps`; without the go command, the
// test is skipped.
//
// It imports only the standard library.
package depstest

import (
	"os/exec"
	"strings"
	"testing"
)

// Check fails t for each package pkg links (with the build tags tags)
// that banned names, by import path or, for a key ending in "/", by
// prefix; banned's value says why it must not be linked. pkg is a
// directory relative to the test's, as go list takes it.
func Check(t testing.TB, pkg, tags string, banned map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command (https://go.dev/dl)")
	}
	out, err := exec.Command("go", "list", "-tags", tags, "-deps", "-f", `{{.ImportPath}}|{{join .Imports " "}}`, pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	imports := map[string][]string{}
	for _, line := range lines {
		p, imps, _ := strings.Cut(line, "|")
		imports[p] = strings.Fields(imps)
	}
	// -deps lists the package itself last.
	top, _, _ := strings.Cut(lines[len(lines)-1], "|")
	const mod = "github.com/kpipe/kpipe"
	if len(lines) < 20 || !strings.HasPrefix(top, mod) {
		t.Fatalf("go list -deps %s listed %d packages, ending with %s: not kpipe's list", pkg, len(lines), top)
	}
	// The shortest import chain from top to every package it links.
	from := map[string]string{top: ""}
	for queue := []string{top}; len(queue) > 0; queue = queue[1:] {
		for _, imp := range imports[queue[0]] {
			if _, ok := from[imp]; !ok {
				from[imp] = queue[0]
				queue = append(queue, imp)
			}
		}
	}
	short := func(p string) string { return strings.TrimPrefix(p, mod+"/") }
	for p := range imports {
		why, ok := banned[p]
		for prefix, w := range banned {
			if !ok && strings.HasSuffix(prefix, "/") && strings.HasPrefix(p, prefix) {
				why, ok = w, true
			}
		}
		if !ok || p == top {
			continue
		}
		chain := []string{p}
		for q := from[p]; q != ""; q = from[q] {
			chain = append([]string{short(q)}, chain...)
		}
		t.Errorf("%s (tags %q) links %s, which %s: %s", short(top), tags, p, why, strings.Join(chain, " -> "))
	}
}
