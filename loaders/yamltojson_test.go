package loaders

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml2 "go.yaml.in/yaml/v2"
)

// yamlToJSONv2 is YAMLToJSON through yaml.v2 alone: the reference the
// fast path is held to.
func yamlToJSONv2(data []byte) ([]byte, error) {
	var tree any
	if err := yaml2.Unmarshal(data, &tree); err != nil {
		return nil, err
	}
	tree, err := jsonCompatible(tree)
	if err != nil {
		return nil, err
	}
	return json.Marshal(tree)
}

// TestYAMLToJSONMatchesYAMLv2 converts every kustomization file under
// testdata, and some YAML 1.1 corner cases, both ways: the same JSON, or
// the same error.
func TestYAMLToJSONMatchesYAMLv2(t *testing.T) {
	var docs []string
	err := filepath.WalkDir(filepath.Join("..", "testdata"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name := d.Name(); !d.IsDir() && (strings.HasPrefix(name, "kustomization.") || strings.HasPrefix(name, "Kustomization")) {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			docs = append(docs, string(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 20 {
		t.Fatalf("only %d kustomization files under testdata", len(docs))
	}
	docs = append(docs,
		"resources:\n- a.yaml", // no final line break
		"commonLabels:\n  on: yes\n  off: 'no'\n",
		"replicas:\n- name: x\n  count: 0x10\n- name: y\n  count: .inf\n",
		"images:\n- name: x\n  newTag: 1.10\n",
		"namePrefix: ...\nnameSuffix: ---\n",
		"a: 1\na: 2\n",
		"a: b\r\nc: d\r\n",
		"",
		"# only a comment\n",
	)
	for _, d := range docs {
		want, wantErr := yamlToJSONv2([]byte(d))
		got, err := YAMLToJSON([]byte(d))
		if string(got) != string(want) || (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Errorf("YAMLToJSON(%q) = %s, %v; through yaml.v2 alone %s, %v", d, got, err, want, wantErr)
		}
	}
}
