package flux

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestArgsCheck: the reference corpus's cli-refusals cases (flux's words,
// in flux's order).
func TestArgsCheck(t *testing.T) {
	cwd := t.TempDir()
	os.Mkdir(filepath.Join(cwd, "src"), 0o755)
	os.WriteFile(filepath.Join(cwd, "ks.yaml"), []byte("kind: Kustomization\n"), 0o644)
	os.WriteFile(filepath.Join(cwd, "afile.yaml"), nil, 0o644)
	ok := Args{Name: "app", Path: "./src", KustomizationFile: "./ks.yaml", Namespace: DefaultNamespace, DryRun: true}
	for _, tc := range []struct {
		edit func(a *Args)
		want string
	}{
		{func(a *Args) { a.Name = "" }, "kustomization name is required"},                                   // r0
		{func(a *Args) { a.Path = "" }, `invalid resource path ""`},                                         // r1
		{func(a *Args) { a.Path = "./nope" }, `invalid resource path "` + filepath.Join(cwd, "nope") + `"`}, // r2
		{func(a *Args) { a.Path = "./afile.yaml" }, `invalid resource path "` + filepath.Join(cwd, "afile.yaml") + `"`},
		{func(a *Args) { a.KustomizationFile = "" }, "dry-run mode requires a kustomization file"},                // r4
		{func(a *Args) { a.KustomizationFile = "./missing.yaml" }, `invalid kustomization file "./missing.yaml"`}, // r5
		{func(a *Args) { a.KustomizationFile = "./src" }, `invalid kustomization file "./src"`},
		{func(a *Args) { a.Namespace = "Bad_NS"; a.Name = "" }, `namespace must be a valid DNS label: "Bad_NS"`}, // r13: first
	} {
		a := ok
		tc.edit(&a)
		if _, err := a.Check(diskFS{}, cwd); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v\nwant %s", a, err, tc.want)
		}
	}
	path, err := ok.Check(diskFS{}, cwd)
	if err != nil || path != filepath.Join(cwd, "src") {
		t.Errorf("Check = %q, %v", path, err)
	}
	live := ok
	live.DryRun = false
	if _, err := live.Check(diskFS{}, cwd); !errors.Is(err, ErrLive) {
		t.Errorf("without --dry-run: %v", err)
	}
}
