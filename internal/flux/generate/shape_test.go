package generate

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestKustomizationShape checks the re-encoding of a kustomization file
// through kustomize v5.8.1's shape of the loaders' types: each case was
// run through the flux CLI (flux build kustomization --dry-run), which
// refused it (err) or built the same kustomization.
func TestKustomizationShape(t *testing.T) {
	for _, c := range []struct {
		in, want string // want: a line of the re-encoded file, or "!" for an error
		absent   string
	}{
		// A number in a field of an embedded struct is not coerced.
		{in: "patches:\n- target: {kind: 1}\n  patch: x\n", want: "!"},
		{in: "apiVersion: 1\n", want: "!"},
		{in: "secretGenerator:\n- name: 1\n", want: "!"},
		{in: "configMapGenerator:\n- name: a\n  literals: [1]\n", want: "!"},
		// ... but it is in a field of the struct itself, or a map.
		{in: "secretGenerator:\n- name: s\n  type: 1\n", want: "  type: \"1\""},
		{in: "replicas:\n- name: 5\n  count: 1\n", want: "- count: 1\n  name: \"5\""},
		{in: "commonLabels: {v: 1}\n", want: "  v: \"1\""},
		// v5.8.2's fields are dropped.
		{in: "configMapGenerator:\n- name: a\n  type: x\n", want: "- name: a", absent: "type"},
		{in: "labels:\n- pairs: {a: b}\n  includeVolumeClaimTemplates: true\n", want: "- pairs:", absent: "includeVolumeClaimTemplates"},
		// Defaults, YAML 1.1 keys and unknown fields.
		{in: "resources: [a.yaml]\nbogus: 1\ncommonAnnotations: {on: yes}\n", want: "apiVersion: kustomize.config.k8s.io/v1beta1\ncommonAnnotations:\n  \"true\": \"true\"\nkind: Kustomization\nresources:\n- a.yaml\n", absent: "bogus"},
	} {
		k, err := decodeKustomization([]byte(c.in))
		if c.want == "!" {
			if err == nil {
				t.Errorf("%q: no error", c.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		out, err := yaml.Marshal(k)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), c.want) || (c.absent != "" && strings.Contains(string(out), c.absent)) {
			t.Errorf("%q re-encoded:\n%s\nwant %q, without %q", c.in, out, c.want, c.absent)
		}
	}
}
