package docs

import (
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestPublicAPINamesNoInternalType: no exported identifier of a package
// that code outside the module can import (any but internal/ and package
// main) names a type of an internal/ package in what it exports: a
// function's parameters and results, an exported struct field, an
// interface's or exported type's exported methods, a variable's or
// constant's type. Outside code can import such a package but could not
// name (nor implement, for an interface) what it is given.
func TestPublicAPINamesNoInternalType(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module")
	}
	readSources(t)
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports, Dir: ".."}
	pkgs, err := packages.Load(cfg, "github.com/kpipe/kpipe/...")
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	checked := 0
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			t.Fatalf("%s: %v", p.PkgPath, p.Errors)
		}
		if isInternal(p.PkgPath) || p.Name == "main" || p.Types == nil {
			continue
		}
		checked++
		for _, e := range exportedLeaks(p.Types) {
			bad = append(bad, p.PkgPath+": "+e)
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d public packages; the load found too few", checked)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// readSources reads every Go file of the module (and go.mod), so that go
// test's cache, which knows the files a test opens but not what the go
// command it starts reads, runs the test again when one changes.
func readSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != ".." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".go") || d.Name() == "go.mod") {
			_, err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isInternal reports whether a package path has an internal element.
func isInternal(path string) bool {
	for _, e := range strings.Split(path, "/") {
		if e == "internal" {
			return true
		}
	}
	return false
}

// exportedLeaks lists the exported identifiers of pkg whose exported
// signature names a type of an internal package, with that type.
func exportedLeaks(pkg *types.Package) []string {
	var out []string
	report := func(what string, typ types.Type) {
		if n := internalType(typ, map[types.Type]bool{}); n != "" {
			out = append(out, what+" names "+n)
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Func, *types.Var, *types.Const:
			report(name, o.Type())
		case *types.TypeName:
			if o.IsAlias() {
				report(name, o.Type())
				continue
			}
			named, ok := o.Type().(*types.Named)
			if !ok {
				continue
			}
			report(name, exportedShape(named.Underlying()))
			for i := range named.NumMethods() {
				if m := named.Method(i); m.Exported() {
					report(name+"."+m.Name(), m.Type())
				}
			}
		}
	}
	return out
}

// exportedShape is a struct reduced to its exported fields (and embedded
// ones, whose promoted members are exported too); other types as they are.
func exportedShape(t types.Type) types.Type {
	s, ok := t.(*types.Struct)
	if !ok {
		return t
	}
	var fields []*types.Var
	for i := range s.NumFields() {
		if f := s.Field(i); f.Exported() || f.Embedded() {
			fields = append(fields, f)
		}
	}
	return types.NewStruct(fields, nil)
}

// internalType returns the first type of an internal package t names (in
// its structure: the elements, fields, parameters and results of the
// types it is made of; a named type of a public package is checked on its
// own), or "".
func internalType(t types.Type, seen map[types.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	switch t := t.(type) {
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil && isInternal(p.Path()) {
			return t.String()
		}
		if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				if n := internalType(args.At(i), seen); n != "" {
					return n
				}
			}
		}
		return ""
	case *types.Alias:
		return internalType(types.Unalias(t), seen)
	case *types.Pointer:
		return internalType(t.Elem(), seen)
	case *types.Slice:
		return internalType(t.Elem(), seen)
	case *types.Array:
		return internalType(t.Elem(), seen)
	case *types.Map:
		if n := internalType(t.Key(), seen); n != "" {
			return n
		}
		return internalType(t.Elem(), seen)
	case *types.Chan:
		return internalType(t.Elem(), seen)
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				if n := internalType(tup.At(i).Type(), seen); n != "" {
					return n
				}
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() || f.Embedded() {
				if n := internalType(f.Type(), seen); n != "" {
					return n
				}
			}
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			if m := t.Method(i); m.Exported() {
				if n := internalType(m.Type(), seen); n != "" {
					return n
				}
			}
		}
	}
	return ""
}
