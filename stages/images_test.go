package stages

import (
	"context"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

func TestImagesCases(t *testing.T) {
	runTxCases(t, "ImageTagTransformer", ImagesFromConfig, imagesCases)
}

// TestImagesDefaultConfig is kustomize's TestTransfomersImageDefaultConfig:
// the `images:` entries of a kustomization, one stage each, with the
// default field specs.
func TestImagesDefaultConfig(t *testing.T) {
	tc := defaultFieldSpecs(t)
	entries := []loaders.Image{
		{Name: "nginx", NewTag: "v2"},
		{Name: "my-nginx", NewTag: "previous"},
		{Name: "myprivaterepohostname:1234/my/image", NewTag: "v1.0.1"},
		{Name: "foobar", Digest: "sha256:24a0c4b4"},
		{Name: "alpine", NewName: "myprivaterepohostname:1234/my/cool-alpine"},
		{Name: "gcr.io:8080/my-project/my-cool-app", NewName: "my-cool-app"},
		{Name: "postgres", NewName: "my-postgres", NewTag: "v3"},
		{Name: "docker", NewName: "my-docker", Digest: "sha256:25a0d4b4"},
	}
	var ss []Stage
	for _, e := range entries {
		ss = append(ss, NewImages(ImagesConfig{ImageTag: e, FieldSpecs: tc.Images}))
	}
	got := runStages(t, ss, `
group: apps
apiVersion: v1
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      initContainers:
      - name: nginx2
        image: my-nginx:1.8.0
      - name: init-alpine
        image: alpine:1.8.0
      containers:
      - name: ngnix
        image: nginx:1.7.9
      - name: repliaced-with-digest
        image: foobar:1
      - name: postgresdb
        image: postgres:1.8.0
`+"---\n"+`
kind: randomKind
metadata:
  name: random
spec:
  template:
    spec:
      containers:
      - name: ngnix1
        image: nginx
spec2:
  template:
    spec:
      containers:
      - name: nginx3
        image: nginx:v1
      - name: nginx4
        image: my-nginx:latest
spec3:
  template:
    spec:
      initContainers:
      - name: postgresdb
        image: postgres:alpine-9
      - name: init-docker
        image: docker:17-git
      - name: myImage
        image: myprivaterepohostname:1234/my/image:latest
      - name: myImage2
        image: myprivaterepohostname:1234/my/image
      - name: my-app
        image: my-app-image:v1
      - name: my-cool-app
        image: gcr.io:8080/my-project/my-cool-app:latest
`)
	if want := `apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: nginx:v2
        name: ngnix
      - image: foobar@sha256:24a0c4b4
        name: repliaced-with-digest
      - image: my-postgres:v3
        name: postgresdb
      initContainers:
      - image: my-nginx:previous
        name: nginx2
      - image: myprivaterepohostname:1234/my/cool-alpine:1.8.0
        name: init-alpine
---
kind: randomKind
metadata:
  name: random
spec:
  template:
    spec:
      containers:
      - image: nginx:v2
        name: ngnix1
spec2:
  template:
    spec:
      containers:
      - image: nginx:v2
        name: nginx3
      - image: my-nginx:previous
        name: nginx4
spec3:
  template:
    spec:
      initContainers:
      - image: my-postgres:v3
        name: postgresdb
      - image: my-docker@sha256:25a0d4b4
        name: init-docker
      - image: myprivaterepohostname:1234/my/image:v1.0.1
        name: myImage
      - image: myprivaterepohostname:1234/my/image:v1.0.1
        name: myImage2
      - image: my-app-image:v1
        name: my-app
      - image: my-cool-app:latest
        name: my-cool-app
`; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestImagesInKustomization is kustomize's
// TestImageTagTransformerInKustomization: both passes, default specs.
func TestImagesInKustomization(t *testing.T) {
	tc := defaultFieldSpecs(t)
	s := NewImages(ImagesConfig{ImageTag: loaders.Image{Name: "old-image-name", NewName: "new-image-name", NewTag: "new-tag"}, FieldSpecs: tc.Images})
	checkTx(t, s, `
apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: deploy1
spec:
  containers:
  - image: old-image-name
    name: my-image
  initContainers:
  - image: old-image-name
    name: my-image
  template:
    spec:
      containers:
      - image: old-image-name
        name: my-image
      initContainers:
      - image: old-image-name
        name: my-image
`, `apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: deploy1
spec:
  containers:
  - image: new-image-name:new-tag
    name: my-image
  initContainers:
  - image: new-image-name:new-tag
    name: my-image
  template:
    spec:
      containers:
      - image: new-image-name:new-tag
        name: my-image
      initContainers:
      - image: new-image-name:new-tag
        name: my-image
`, "")
}

var imagesCases = []txCase{
	{
		name: "TestImageTagTransformerAnchor",
		config: `
apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: notImportantHere
imageTag:
  name: nginx
  newName: my-nginx
fieldSpecs:
- path: spec/template/spec/containers[]/image
`,
		input: `
group: apps
apiVersion: v1
kind: Deployment
metadata:
  name: &name nginx
spec:
  template:
    spec:
      containers:
      - image: *name
        name: *name
`,
		want: `apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: nginx
spec:
  template:
    spec:
      containers:
      - image: my-nginx
        name: nginx
`,
	},
	{
		name: "TestImageTagTransformerArbitraryPath",
		config: `
apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: notImportantHere
imageTag:
  name: some.registry.io/my-image
  newTag: "my-fixed-tag"
`,
		input: `
group: apps
apiVersion: v1
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: some.registry.io/my-image:old-tag
        name: my-image
`,
		want: `apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: some.registry.io/my-image:my-fixed-tag
        name: my-image
`,
	},
	{
		name: "TestImageTagTransformerEmptyContainers",
		config: `
apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: notImportantHere
imageTag:
  name: nginx
  newTag: v2
fieldSpecs:
- path: spec/template/spec/containers[]/image
  create: true
- path: spec/template/spec/initContainers[]/image
  create: true
`,
		input: `
group: apps
apiVersion: v1
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      initContainers:
`,
		want: `apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers: []
      initContainers: []
`,
	},
	{
		name: "TestImageTagTransformerNewDigest",
		config: `
apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: notImportantHere
imageTag:
  name: nginx
  Digest: sha256:222222222222222222
fieldSpecs:
- path: spec/template/spec/containers[]/image
- path: spec/template/spec/initContainers[]/image
`,
		input: `
group: apps
apiVersion: v1
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: nginx:1.7.9
        name: nginx-tagged
      - image: nginx:latest
        name: nginx-latest
      - image: foobar:1
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
      initContainers:
      - image: nginx
        name: nginx-notag
      - image: nginx@sha256:111111111111111111
        name: nginx-sha256
      - image: alpine:1.8.0
        name: init-alpine
`,
		want: `apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: nginx@sha256:222222222222222222
        name: nginx-tagged
      - image: nginx@sha256:222222222222222222
        name: nginx-latest
      - image: foobar:1
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
      initContainers:
      - image: nginx@sha256:222222222222222222
        name: nginx-notag
      - image: nginx@sha256:222222222222222222
        name: nginx-sha256
      - image: alpine:1.8.0
        name: init-alpine
`,
	},
	{
		name: "TestImageTagTransformerNewImage",
		config: `
apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: notImportantHere
imageTag:
  name: nginx
  newName: busybox
fieldSpecs:
- path: spec/template/spec/containers[]/image
- path: spec/template/spec/initContainers[]/image
`,
		input: `
group: apps
apiVersion: v1
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: nginx:1.7.9
        name: nginx-tagged
      - image: nginx:latest
        name: nginx-latest
      - image: foobar:1
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
      initContainers:
      - image: nginx
        name: nginx-notag
      - image: nginx@sha256:111111111111111111
        name: nginx-sha256
      - image: alpine:1.8.0
        name: init-alpine
`,
		want: `apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: busybox:1.7.9
        name: nginx-tagged
      - image: busybox:latest
        name: nginx-latest
      - image: foobar:1
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
      initContainers:
      - image: busybox
        name: nginx-notag
      - image: busybox@sha256:111111111111111111
        name: nginx-sha256
      - image: alpine:1.8.0
        name: init-alpine
`,
	},
	{
		name: "TestImageTagTransformerNewImageAndDigest",
		config: `
apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: notImportantHere
imageTag:
  name: nginx
  newName: busybox
  Digest: sha256:222222222222222222
fieldSpecs:
- path: spec/template/spec/containers[]/image
- path: spec/template/spec/initContainers[]/image
`,
		input: `
group: apps
apiVersion: v1
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: nginx:1.7.9
        name: nginx-tagged
      - image: nginx:latest
        name: nginx-latest
      - image: foobar:1
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
      initContainers:
      - image: nginx
        name: nginx-notag
      - image: nginx@sha256:111111111111111111
        name: nginx-sha256
      - image: alpine:1.8.0
        name: init-alpine
`,
		want: `apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: busybox@sha256:222222222222222222
        name: nginx-tagged
      - image: busybox@sha256:222222222222222222
        name: nginx-latest
      - image: foobar:1
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
      initContainers:
      - image: busybox@sha256:222222222222222222
        name: nginx-notag
      - image: busybox@sha256:222222222222222222
        name: nginx-sha256
      - image: alpine:1.8.0
        name: init-alpine
`,
	},
	{
		name: "TestImageTagTransformerNewImageAndTag",
		config: `
apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: notImportantHere
imageTag:
  name: nginx
  newName: busybox
  newTag: v2
fieldSpecs:
- path: spec/template/spec/containers[]/image
- path: spec/template/spec/initContainers[]/image
`,
		input: `
group: apps
apiVersion: v1
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: nginx:1.7.9
        name: nginx-tagged
      - image: nginx:latest
        name: nginx-latest
      - image: foobar:1
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
      initContainers:
      - image: nginx
        name: nginx-notag
      - image: nginx@sha256:111111111111111111
        name: nginx-sha256
      - image: alpine:1.8.0
        name: init-alpine
`,
		want: `apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: busybox:v2
        name: nginx-tagged
      - image: busybox:v2
        name: nginx-latest
      - image: foobar:1
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
      initContainers:
      - image: busybox:v2
        name: nginx-notag
      - image: busybox:v2
        name: nginx-sha256
      - image: alpine:1.8.0
        name: init-alpine
`,
	},
	{
		name: "TestImageTagTransformerNewTag",
		config: `
apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: notImportantHere
imageTag:
  name: nginx
  newTag: v2
fieldSpecs:
- path: spec/template/spec/containers[]/image
- path: spec/template/spec/initContainers[]/image
`,
		input: `
group: apps
apiVersion: v1
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: nginx:1.7.9
        name: nginx-tagged
      - image: nginx:latest
        name: nginx-latest
      - image: foobar:1
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
      initContainers:
      - image: nginx
        name: nginx-notag
      - image: nginx@sha256:111111111111111111
        name: nginx-sha256
      - image: alpine:1.8.0
        name: init-alpine
`,
		want: `apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: nginx:v2
        name: nginx-tagged
      - image: nginx:v2
        name: nginx-latest
      - image: foobar:1
        name: replaced-with-digest
      - image: postgres:1.8.0
        name: postgresdb
      initContainers:
      - image: nginx:v2
        name: nginx-notag
      - image: nginx:v2
        name: nginx-sha256
      - image: alpine:1.8.0
        name: init-alpine
`,
	},
	{
		name: "TestImageTagTransformerTagWithBraces",
		config: `
apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: notImportantHere
imageTag:
  name: some.registry.io/my-image
  newTag: "my-fixed-tag"
fieldSpecs:
- path: spec/template/spec/containers[]/image
`,
		input: `
group: apps
apiVersion: v1
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: some.registry.io/my-image:{GENERATED_TAG}
        name: my-image
`,
		want: `apiVersion: v1
group: apps
kind: Deployment
metadata:
  name: deploy1
spec:
  template:
    spec:
      containers:
      - image: some.registry.io/my-image:my-fixed-tag
        name: my-image
`,
	},
	{
		name: "images_edge",
		config: `apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: x
imageTag:
  name: reg:5000/app
  tagSuffix: -x
fieldSpecs:
- path: spec/containers[]/image
- path: spec/volumes[]/image/reference
- path: spec/initContainers[]/image
- path: spec/extra/image
  kind: Pod
`,
		input: `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - image: reg:5000/app:1.0
  - image: reg:5000/app
  - image: reg:5000/app@sha256:abc
  - image: reg:5000/app:1@sha256:abc
  - image: reg:5000/other:1
  - image: null
  - name: noimage
  - null
  initContainers: null
  volumes:
  - image: {reference: "reg:5000/app:v"}
  - image: null
  extra:
    image: reg:5000/app:e
  nested:
    containers:
    - image: reg:5000/app:n
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crd
spec:
  containers:
  - image: reg:5000/app
`,
		want: `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - image: reg:5000/app:1.0-x-x
  - image: reg:5000/app:-x-x
  - image: reg:5000/app:-x-x
  - image: reg:5000/app:1-x-x
  - image: reg:5000/other:1
  - image: null
  - name: noimage
  - null
  extra:
    image: reg:5000/app:e-x
  initContainers: []
  nested:
    containers:
    - image: reg:5000/app:n-x
  volumes:
  - image:
      reference: reg:5000/app:v-x
  - image: null
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crd
spec:
  containers:
  - image: reg:5000/app
`,
	},
	{
		name: "images_err1",
		config: `apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: x
imageTag:
  name: nginx
  newTag: "2"
fieldSpecs:
- path: spec/template/spec/containers[]/image
`,
		input: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec:
      containers:
      - nginx
`,
		wantErr: "wrong node kind: expected MappingNode but got ScalarNode",
	},
	{
		name: "images_err2",
		config: `apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: x
imageTag:
  name: nginx
  newTag: "2"
fieldSpecs:
- path: spec/template/spec/app/image
`,
		input: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec:
      app:
        image:
          name: nginx
`,
		wantErr: "considering field 'spec/template/spec/app/image' of object Deployment.v1.apps/d.[noNs]: wrong node kind: expected ScalarNode but got MappingNode",
	},
	{
		name: "images_plain",
		config: `apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: x
imageTag:
  name: "1234"
  newName: "5678"
fieldSpecs:
- path: spec/containers/image
`,
		input: `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - image: 1234
  - image: "1234"
  - image: 1234:1
  - image: 1234@sha256:x
`,
		want: `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - image: 5678
  - image: "5678"
  - image: "5678:1"
  - image: 5678@sha256:x
`,
	},
	{
		name: "images_regex",
		config: `apiVersion: builtin
kind: ImageTagTransformer
metadata:
  name: x
imageTag:
  name: my.app
  newTag: "2"
  digest: sha256:d
fieldSpecs:
- path: spec/template/spec/containers[]/image
`,
		input: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec:
      containers:
      - image: my.app:1
      - image: myXapp
      - image: my.app.io
      initContainers:
      - image: my.app@sha256:old
`,
		want: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec:
      containers:
      - image: my.app:2@sha256:d
      - image: myXapp:2@sha256:d
      - image: my.app.io
      initContainers:
      - image: my.app:2@sha256:d
`,
	},
}

// runStages runs stages in order over frozen resources and returns the
// output.
func runStages(t *testing.T, ss []Stage, input string) string {
	t.Helper()
	rs, err := resyaml.Decode([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	l := resource.NewList(rs...)
	l.Freeze()
	for _, s := range ss {
		if err := s.Run(context.Background(), l); err != nil {
			t.Fatal(err)
		}
	}
	b, err := output.Marshal(l.All())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestImagesCopiesOnlyChangedResources checks that a shared resource is
// copied only when an image in it changes.
func TestImagesCopiesOnlyChangedResources(t *testing.T) {
	rs, err := resyaml.Decode([]byte(`
apiVersion: v1
kind: Pod
metadata:
  name: a
spec:
  containers:
  - image: nginx:1
---
apiVersion: v1
kind: Pod
metadata:
  name: b
spec:
  containers:
  - image: redis:1
`))
	if err != nil {
		t.Fatal(err)
	}
	l := resource.NewList(rs...)
	l.Freeze()
	s := NewImages(ImagesConfig{ImageTag: loaders.Image{Name: "nginx", NewTag: "2"}, FieldSpecs: defaultFieldSpecs(t).Images})
	if err := s.Run(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	if l.At(0) == rs[0] {
		t.Error("changed resource was not copied")
	}
	if l.At(1) != rs[1] {
		t.Error("unchanged resource was copied")
	}
	if got := resource.LookupString(rs[0].Object(), "metadata", "name"); got != "a" {
		t.Fatal(got)
	}
	c, _ := l.At(0).Object()["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"].(string)
	if c != "nginx:2" {
		t.Errorf("image = %q", c)
	}
}

func TestSplitImage(t *testing.T) {
	for _, c := range []struct{ in, name, tag, digest string }{
		{"nginx", "nginx", "", ""},
		{"nginx:1.7", "nginx", "1.7", ""},
		{"nginx@sha256:abc", "nginx", "", "sha256:abc"},
		{"nginx:1.7@sha256:abc", "nginx", "1.7", "sha256:abc"},
		{"reg:5000/app", "reg:5000/app", "", ""},
		{"reg:5000/app:v1", "reg:5000/app", "v1", ""},
		{"reg:5000/a/b@sha256:x", "reg:5000/a/b", "", "sha256:x"},
		{"reg:5000/a/b:t@sha256:x", "reg:5000/a/b", "t", "sha256:x"},
		{"/abs:t", "/abs", "t", ""},
	} {
		n, tg, d := splitImage(c.in)
		if n != c.name || tg != c.tag || d != c.digest {
			t.Errorf("splitImage(%q) = %q, %q, %q; want %q, %q, %q", c.in, n, tg, d, c.name, c.tag, c.digest)
		}
	}
}

// TestImagesInvalidName: an images entry whose name is not a valid regular
// expression matches no image (kustomize v5.8.1+; v5.8.0 crashed), and the
// other entries still apply.
func TestImagesInvalidName(t *testing.T) {
	s := NewImages(ImagesConfig{ImageTag: loaders.Image{Name: "a(b", NewTag: "2"}})
	in := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - image: a(b\n"
	out, err := runTx(t, s, in)
	if err != nil {
		t.Fatalf("error = %v, want none", err)
	}
	if !strings.Contains(out, "image: a(b\n") || strings.Contains(out, ":2") {
		t.Errorf("image changed by an invalid pattern:\n%s", out)
	}
}

// TestImagesAnyDigestAlgorithm: a reference with a digest of any OCI
// algorithm matches the name (v5.8.0 matched sha256 only).
func TestImagesAnyDigestAlgorithm(t *testing.T) {
	s := NewImages(ImagesConfig{ImageTag: loaders.Image{Name: "nginx", NewName: "mirror/nginx"}})
	for _, ref := range []string{"nginx@sha512:ab12", "nginx:1@multihash+base58:QmRZ", "nginx@sha256:00"} {
		out, err := runTx(t, s, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - image: "+ref+"\n")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "image: mirror/nginx") {
			t.Errorf("%s: not renamed:\n%s", ref, out)
		}
	}
}

// TestImageMatcherIsTheExpression: the matcher of an `images` name agrees
// with kustomize's expression, "^" + name + imageRefSuffix, on random
// names (dots, other expression syntax, unicode, U+FFFD) and references
// (tags, digests, newlines, invalid UTF-8).
func TestImageMatcherIsTheExpression(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	nameParts := []string{"a", "b", "nginx", "registry", ".", "example", "com", "/", "-", "_", "é", "\uFFFD", "1", "io", ":", "+", "*", "[a-z]", "(x|y)", "\\."}
	refParts := []string{"", ":1.0", ":v2", "@sha256:abc", ":1@sha256:0f", "\n", "\xff", "x", ".", "é", "\uFFFD", ":", "@", "/", "b"}
	pick := func(parts []string, n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		return b.String()
	}
	literal := 0
	for range 20000 {
		name := pick(nameParts, 1+rng.IntN(4))
		m := newImageMatcher(name)
		if m.literal {
			literal++
		}
		re, err := regexp.Compile("^" + name + imageRefSuffix)
		for range 5 {
			ref := pick(refParts, rng.IntN(3))
			switch rng.IntN(3) {
			case 0:
				ref = name + ref
			case 1:
				ref = strings.ReplaceAll(name, ".", pick([]string{"x", ".", "é", "\xff", "\n"}, 1)) + ref
			}
			want := err == nil && re.MatchString(ref)
			if got := m.matches(ref); got != want {
				t.Fatalf("name %q, reference %q: matcher says %v, the expression %v", name, ref, got, want)
			}
		}
	}
	if literal < 1000 {
		t.Fatalf("only %d names took the literal path", literal)
	}
}

// TestSimplePlainStringIsWhatTheParserSays: every string the shortcut
// takes for a plain scalar reads back from YAML as itself, and the
// shortcut takes the common ones (image references).
func TestSimplePlainStringIsWhatTheParserSays(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	parts := []string{"a", "Z", "y", "n", "o", "true", "TRUE", "null", "Null", "no", "on", "off", "yes", "0", "1", "1.0", "e5", ".", ":", "@", "/", "-", "_", " ", "#", ": ", "'", "\"", "{", "[", ",", "!", "&", "*", "%", "é", "~", "\n", "0x1F", "inf", ".inf", "2006-01-02"}
	took := 0
	for range 50000 {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		s := b.String()
		if !simplePlainString(s) {
			continue
		}
		took++
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(s), &doc); err != nil || len(doc.Content) != 1 {
			t.Fatalf("%q: taken for a plain string, the parser says %v", s, err)
		}
		n := doc.Content[0]
		var v any
		if n.Kind != yaml.ScalarNode || n.Style != 0 || n.Value != s || n.Decode(&v) != nil || v != s {
			t.Fatalf("%q: taken for a plain string, reads back as %#v (kind %v, style %v)", s, v, n.Kind, n.Style)
		}
	}
	if took < 1000 {
		t.Fatalf("the shortcut took only %d strings", took)
	}
	for _, s := range []string{"registry.example.com/app000:1.0.0", "nginx", "gcr.io/x/y@sha256:0f0f", "my-app_1"} {
		if !simplePlainString(s) {
			t.Errorf("%q: not taken", s)
		}
	}
}
