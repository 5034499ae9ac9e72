package loaders

import (
	"strings"
	"testing"
)

// A kustomization that sets nothing but its kind and apiVersion is
// refused as empty, as kustomize refuses it; one field is enough not to
// be, an empty list included (as before: the list is there).
func TestEmptyKustomization(t *testing.T) {
	for _, tc := range []struct {
		yaml  string
		empty bool
	}{
		{"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n", true},
		{"kind: Kustomization\n", true},
		{"kind: Kustomization\nnamePrefix: a-\n", false},
		{"resources: []\n", false},
		{"commonLabels:\n  a: b\n", false},
	} {
		k, _, err := parseKustomization([]byte(tc.yaml))
		if gotEmpty := err != nil && strings.Contains(err.Error(), "kustomization.yaml is empty"); gotEmpty != tc.empty {
			t.Errorf("%q: error %v, want empty %v", tc.yaml, err, tc.empty)
		}
		if err == nil && k.Kind != "" && k.Kind != "Kustomization" {
			t.Errorf("%q: kind %q", tc.yaml, k.Kind)
		}
	}
}
