package generate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/flux"
	"github.com/kpipe/kpipe/loaders"
)

// synthetic is the reference corpus's synthetic cases, kept by package
// fluxcorpus (which checks the builds end to end against flux's output).
const synthetic = "../fluxcorpus/testdata/inputs/synthetic"

// generateCase generates the kustomization of a synthetic case: its
// ks.yaml's object "app" over its src directory.
func generateCase(t *testing.T, name string, o Options) (*Result, string, error) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(synthetic, name))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "ks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := flux.Find(data, "./ks.yaml", "app", "flux-system")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src")
	res, err := Generate(loaders.Disk, k, src, o)
	return res, src, err
}

// manifest decodes a generated kustomization loosely.
func manifest(t *testing.T, res *Result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(res.Manifest, &m); err != nil {
		t.Fatalf("%s: %v", res.Manifest, err)
	}
	return m
}

func strings_(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

func TestGenerateWalk(t *testing.T) {
	// With a .sourceignore (even one matching nothing), the default
	// patterns apply: .sops.yaml and .github/ are left out; a directory
	// with a kustomization is listed, not descended; dot files are not
	// special; other extensions are skipped.
	res, src, err := generateCase(t, "gen-walk-defaults", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || res.File != filepath.Join(src, "kustomization.yaml") {
		t.Errorf("File %s, Created %v", res.File, res.Created)
	}
	want := []string{"./.hidden.yaml", "./a.yml", "./b.yaml", "./sub/c.yaml", "./sub/deeper/d.yaml", "./withkust", "./z-multi.yaml"}
	if got := strings_(manifest(t, res)["resources"]); !slices.Equal(got, want) {
		t.Errorf("resources = %q, want %q", got, want)
	}
	// What the listing read: every directory walked, every YAML file
	// parsed, the kustomization files looked for.
	for _, p := range []string{src, filepath.Join(src, "sub/deeper")} {
		if !slices.Contains(res.Reads.Dirs, p) {
			t.Errorf("Reads.Dirs lacks %s: %q", p, res.Reads.Dirs)
		}
	}
	if !slices.Contains(res.Reads.Files, filepath.Join(src, "sub/c.yaml")) || slices.Contains(res.Reads.Files, filepath.Join(src, ".sops.yaml")) {
		t.Errorf("Reads.Files = %q", res.Reads.Files)
	}
	if !slices.Contains(res.Reads.Stats, filepath.Join(src, "withkust/kustomization.yaml")) {
		t.Errorf("Reads.Stats = %q", res.Reads.Stats)
	}

	// Without any pattern, nothing is ignored: the .sops.yaml is parsed
	// and fails (synthetic gen-walk, flux's message).
	_, src, err = generateCase(t, "gen-walk", Options{})
	want1 := "failed to generate kustomization.yaml: failed to decode Kubernetes YAML from " + filepath.Join(src, ".sops.yaml") + ": missing Resource metadata <nil>"
	if err == nil || err.Error() != want1 {
		t.Errorf("gen-walk: %v\nwant %s", err, want1)
	}
	// ... and --ignore-paths is a pattern.
	res, _, err = generateCase(t, "gen-walk", Options{IgnorePaths: []string{"nothing-matches"}})
	if err != nil || slices.Contains(strings_(manifest(t, res)["resources"]), "./.sops.yaml") {
		t.Errorf("gen-walk with --ignore-paths: %v, %s", err, res.Manifest)
	}

	// An empty directory: a placeholder namespace, no resources.
	res, _, err = generateCase(t, "gen-empty-dir", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := manifest(t, res); m["namespace"] != "_placeholder" || m["resources"] != nil {
		t.Errorf("gen-empty-dir: %s", res.Manifest)
	}
}

func TestGenerateRewrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check func(t *testing.T, m map[string]any)
	}{
		{"kust-no-resources", func(t *testing.T, m map[string]any) {
			// No resources: origin annotations, Flux's way around
			// kustomize's "kustomization.yaml is empty".
			if got := strings_(m["buildMetadata"]); !slices.Equal(got, []string{"originAnnotations"}) {
				t.Errorf("buildMetadata = %q", got)
			}
		}},
		{"kust-unknown-field", func(t *testing.T, m map[string]any) {
			// Unknown fields dropped, numbers in string maps coerced.
			if _, ok := m["notAField"]; ok {
				t.Error("notAField kept")
			}
			if got := m["commonLabels"].(map[string]any)["version"]; got != "1" {
				t.Errorf("commonLabels.version = %#v", got)
			}
		}},
		{"labels-include-vct", func(t *testing.T, m map[string]any) {
			// A v5.8.2 field v5.8.1's types lack.
			if strings.Contains(yamlText(t, m), "includeVolumeClaimTemplates") {
				t.Error("includeVolumeClaimTemplates kept")
			}
		}},
		{"name-prefix-override", func(t *testing.T, m map[string]any) {
			if m["namePrefix"] != "flux-" || m["nameSuffix"] != "-sfx" {
				t.Errorf("namePrefix %v, nameSuffix %v", m["namePrefix"], m["nameSuffix"])
			}
		}},
		{"images-merge", func(t *testing.T, m map[string]any) {
			want := `- name: nginx
  newName: registry/nginx
  newTag: "1.25"
- digest: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
  name: busybox
- name: redis
  newTag: "7"
`
			if got := yamlText(t, m["images"]); got != want {
				t.Errorf("images:\n%s\nwant:\n%s", got, want)
			}
		}},
		{"components", func(t *testing.T, m map[string]any) {
			// ignoreMissingComponents drops the missing one.
			if got := strings_(m["components"]); !slices.Equal(got, []string{"../comp"}) {
				t.Errorf("components = %q", got)
			}
		}},
		{"target-namespace", func(t *testing.T, m map[string]any) {
			if m["namespace"] != "target" {
				t.Errorf("namespace = %v", m["namespace"])
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _, err := generateCase(t, tc.name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Created {
				t.Error("an existing kustomization reported as created")
			}
			tc.check(t, manifest(t, res))
		})
	}
}

func yamlText(t *testing.T, v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGenerateRefusals(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"missing-resource", "failed to generate kustomization.yaml: lstat SRC/missing.yaml: no such file or directory <nil>"},
		{"remote-resource", "failed to generate kustomization.yaml: lstat SRC/github.com/example/repo/deploy?ref=v1: no such file or directory <nil>"},
		// After listing a path without a kustomization file, flux's cleanup
		// fails too: it removes the file it never wrote.
		{"components-remote", "failed to generate kustomization.yaml: component path 'https://github.com/x/y//c' must be local and relative remove SRC/kustomization.yaml: no such file or directory"},
		{"gen-bad-yaml", "failed to generate kustomization.yaml: failed to decode Kubernetes YAML from SRC/broken.yaml: MalformedYAMLError: yaml: line 3: did not find expected ',' or ']' <nil>"},
		{"gen-nonk8s-yaml", "failed to generate kustomization.yaml: failed to decode Kubernetes YAML from SRC/values.yaml: missing Resource metadata <nil>"},
	} {
		_, src, err := generateCase(t, tc.name, Options{})
		want := strings.ReplaceAll(tc.want, "SRC", src)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tc.name, err, want)
		}
	}
}

func TestIsLocalRelativePath(t *testing.T) {
	for p, want := range map[string]bool{
		"../comp": true, "comp": true, "./a/b": true,
		"/abs": false, "file:///abs": false, "https://x/y": false, "HTTP://x": false, "git::x": false,
		"gh:org/repo": false, "git@github.com:o/r": false, "github.com/o/r": false, "github.com:o/r": false,
		"ssh://x": false, "git::": true, // a bare prefix is not one
	} {
		if got := IsLocalRelativePath(p); got != want {
			t.Errorf("IsLocalRelativePath(%q) = %v, want %v", p, got, want)
		}
	}
}
