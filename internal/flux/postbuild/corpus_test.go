package postbuild_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/internal/flux/postbuild"
)

// corpusCase is a case of testdata/cases: a run of flux build from the
// reference corpus (its synthetic trap cases)
// reduced to what the post-build steps see: the --kustomization-file
// (ks.yaml), the output of kustomize (v5.8.2, --reorder none) for the
// kustomization flux generated (kustomized.yaml), and what flux printed
// (stdout, or the error).
type corpusCase struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Strict    bool   `json:"strict"`
	RC        int    `json:"rc"`
	Error     string `json:"error"`
}

// applyCase runs the post-build steps of a corpus case's Flux
// Kustomization over the case's kustomize output.
func applyCase(t *testing.T, dir string) (got []byte, err error, c corpusCase) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if err := json.Unmarshal(read("case.json"), &c); err != nil {
		t.Fatal(err)
	}
	k, err := flux.Find(read("ks.yaml"), "./ks.yaml", c.Name, c.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	got, err = postbuild.Apply(read("kustomized.yaml"), k.PostBuild(nil, c.Strict))
	return got, err, c
}

// TestCorpusCases compares the post-build steps' output with flux's, byte
// for byte, and their errors with flux's messages.
func TestCorpusCases(t *testing.T) {
	dirs, err := filepath.Glob("testdata/cases/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 50 {
		t.Fatalf("only %d cases", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got, err, c := applyCase(t, dir)
			if c.RC != 0 {
				if err == nil || "✗ "+err.Error() != c.Error {
					t.Fatalf("error %v\nflux: %s", err, c.Error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(dir, "stdout"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("output differs from flux's:\n%s", diffLines(string(got), string(want)))
			}
		})
	}
}

func diffLines(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d\n got: %q\nwant: %q", i+1, gl, wl)
		}
	}
	return ""
}
