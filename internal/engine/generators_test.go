package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/loaders"
)

// generatorTree is a base whose ConfigMap and Secret a Deployment uses,
// and two overlays: a merges data into the ConfigMap, b does not.
func generatorTree(t *testing.T) string {
	return writeTree(t, map[string]string{
		"base/app.env":    "LOG=debug\n",
		"base/nginx.conf": "server {}\n",
		"base/kustomization.yaml": `resources:
- deploy.yaml
configMapGenerator:
- name: config
  envs: [app.env]
  files: [nginx.conf]
secretGenerator:
- name: creds
  literals: [password=s3cret]
`,
		"base/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
        envFrom:
        - configMapRef:
            name: config
        - secretRef:
            name: creds
      volumes:
      - name: conf
        configMap:
          name: config
`,
		"a/kustomization.yaml": "resources:\n- ../base\nnamePrefix: a-\nconfigMapGenerator:\n- name: config\n  behavior: merge\n  literals: [LOG=info]\n",
		"b/kustomization.yaml": "resources:\n- ../base\nnamePrefix: b-\n",
	})
}

// TestGeneratorsEndToEnd checks the output of kustomize v5.8.0 for a
// shared base with generators: the hash suffix is computed at each root
// from the final data, and the Deployment's references follow it.
func TestGeneratorsEndToEnd(t *testing.T) {
	root := generatorTree(t)
	out := buildAll(t, []string{filepath.Join(root, "a"), filepath.Join(root, "b")}, 2)
	wantA := `apiVersion: v1
data:
  LOG: info
  nginx.conf: |
    server {}
kind: ConfigMap
metadata:
  name: a-config-hm5k8ghbmk
---
apiVersion: v1
data:
  password: czNjcmV0
kind: Secret
metadata:
  name: a-creds-bf5fk5d75b
type: Opaque
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: a-web
spec:
  template:
    spec:
      containers:
      - envFrom:
        - configMapRef:
            name: a-config-hm5k8ghbmk
        - secretRef:
            name: a-creds-bf5fk5d75b
        image: nginx
        name: web
      volumes:
      - configMap:
          name: a-config-hm5k8ghbmk
        name: conf
`
	if out[0] != wantA {
		t.Errorf("overlay a:\n%s\nwant:\n%s", out[0], wantA)
	}
	for _, want := range []string{"LOG: debug", "name: b-config-ckb925c22t", "name: b-creds-bf5fk5d75b"} {
		if strings.Count(out[1], want) == 0 {
			t.Errorf("overlay b lacks %q:\n%s", want, out[1])
		}
	}
	if strings.Count(out[1], "b-config-ckb925c22t") != 3 {
		t.Errorf("overlay b: the ConfigMap's references do not all follow its hashed name:\n%s", out[1])
	}

	// Changing a generator's file changes the hash.
	if err := os.WriteFile(filepath.Join(root, "base/nginx.conf"), []byte("server { listen 80; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	again := buildAll(t, []string{filepath.Join(root, "b")}, 1)
	if strings.Contains(again[0], "b-config-ckb925c22t") || !strings.Contains(again[0], "listen 80") {
		t.Errorf("editing a generator's file did not change its output:\n%s", again[0])
	}
}

func TestGeneratorsInGeneratorsField(t *testing.T) {
	root := writeTree(t, map[string]string{
		"kustomization.yaml": "generators:\n- gen.yaml\n- |-\n  apiVersion: builtin\n  kind: SecretGenerator\n  metadata:\n    name: inline\n  literals: [a=b]\n",
		"gen.yaml":           "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: from-file\nliterals: [x=1]\n",
	})
	out := buildAll(t, []string{root}, 1)
	for _, want := range []string{"name: from-file-", "name: inline-", "a: Yg=="} {
		if !strings.Contains(out[0], want) {
			t.Errorf("output lacks %q:\n%s", want, out[0])
		}
	}
}

// buildErr builds the root at dir and returns its error.
func buildErr(t *testing.T, dir string) error {
	t.Helper()
	g, errs := Load([]string{dir}, loaders.RootOnly)
	res := NewBuilder(g, Options{}).Run(context.Background(), errs)
	return res[0].Err
}

func TestGeneratorErrorsNameTheKustomization(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"missing file", map[string]string{
			"kustomization.yaml": "configMapGenerator:\n- name: cm\n  files: [nope.txt]\n",
		}, []string{"kustomization.yaml: configMapGenerator \"cm\": loading KV pairs: file sources: [nope.txt]: evalsymlink failure on", "nope.txt"}},
		{"file outside the root", map[string]string{
			"app/kustomization.yaml": "secretGenerator:\n- name: s\n  files: [../secret.txt]\n",
			"secret.txt":             "x",
		}, []string{"app/kustomization.yaml: secretGenerator \"s\": loading KV pairs: file sources: [../secret.txt]: security; file", "is not in or below"}},
		{"duplicate generator", map[string]string{
			"kustomization.yaml": "configMapGenerator:\n- name: cm\n  literals: [a=1]\n- name: cm\n  literals: [b=1]\n",
		}, []string{"kustomization.yaml: merging from generator ConfigMapGenerator \"cm\"", "behavior must be merge or replace"}},
		{"merge without base", map[string]string{
			"kustomization.yaml": "configMapGenerator:\n- name: cm\n  behavior: merge\n",
		}, []string{"does not exist; cannot merge or replace"}},
		{"generator under transformers", map[string]string{
			"kustomization.yaml": "transformers:\n- |-\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n  metadata:\n    name: g\n",
		}, []string{"plugin ConfigMapGenerator.builtin.[noGrp]/g.[noNs] not a transformer"}},
		{"transformer under generators", map[string]string{
			"kustomization.yaml": "generators:\n- |-\n  apiVersion: builtin\n  kind: LabelTransformer\n  metadata:\n    name: l\n",
		}, []string{"not a generator"}},
		{"external generator", map[string]string{
			"kustomization.yaml": "generators:\n- |-\n  apiVersion: example.com/v1\n  kind: MyGen\n  metadata:\n    name: g\n",
		}, []string{"external plugins disabled"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := writeTree(t, c.files)
			dir := root
			if _, ok := c.files["app/kustomization.yaml"]; ok {
				dir = filepath.Join(root, "app")
			}
			err := buildErr(t, dir)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
