package stages

import (
	"context"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// TestPatchesDecodeOnceApplyAlike: stages made by one Patches from the
// same text (a component's patch, configured in every parent) give what
// stages decoded afresh give, however many of them ran before: a
// strategic-merge stage may change its patches as it applies them, so
// each stage has its own; a JSON patch is shared.
func TestPatchesDecodeOnceApplyAlike(t *testing.T) {
	smp := `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ignored
spec:
  template:
    spec:
      containers:
      - name: app
        env:
        - name: B
          value: b
      - $patch: delete
        name: sidecar
`
	jp := `
- op: add
  path: /spec/template/metadata/annotations
  value:
    scrape: "true"
- op: replace
  path: /spec/replicas
  value: 5
`
	input := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - image: app:1
        name: app
      - image: side:1
        name: sidecar
`
	var shared Patches
	for _, text := range []string{smp, jp} {
		cfg := loaders.Patch{Patch: text, Target: &loaders.Selector{Kind: "Deployment"}}
		fresh, err := newPatch(cfg, mapFiles(nil))
		if err != nil {
			t.Fatal(err)
		}
		want, err := runTx(t, fresh, input)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			s, err := shared.New(cfg, mapFiles(nil))
			if err != nil {
				t.Fatal(err)
			}
			got, err := runTx(t, s, input)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("stage %d from the shared decoding:\n%s\nwant (decoded afresh):\n%s", i, got, want)
			}
		}
	}
	if n := len(shared.byText); n != 2 {
		t.Errorf("%d texts decoded, want 2", n)
	}
}

// TestSharedPatchOutlivesWhatItWasMergedInto: a strategic-merge patch
// without a target merges its own maps into the object it patches; a
// later stage that edits that object in place must not reach the patch
// another parent's stage applies next.
func TestSharedPatchOutlivesWhatItWasMergedInto(t *testing.T) {
	patch := `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      annotations:
        scrape: "true"
`
	input := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - image: app:1
        name: app
`
	var shared Patches
	cfg := loaders.Patch{Patch: patch}
	run := func() *resource.List {
		s, err := shared.New(cfg, mapFiles(nil))
		if err != nil {
			t.Fatal(err)
		}
		l := decodeList(t, input)
		if err := s.Run(context.Background(), l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	run() // a text is kept decoded from its second use on
	first := run()
	ann := resource.LookupMap(first.Edit(0).Object(), "spec", "template", "metadata", "annotations")
	if ann == nil {
		t.Fatalf("the patch was not applied:\n%s", encodeList(t, first))
	}
	ann["edited"] = "by a later stage of the first parent"
	second := encodeList(t, run())
	if strings.Contains(second, "edited") {
		t.Errorf("an edit of the first parent's object reached the second parent's patch:\n%s", second)
	}
}

// TestPatchesKeepOnlySharedTexts: a text configured once (an overlay's
// own patch) is not kept decoded after its stage is made; one configured
// again is, once.
func TestPatchesKeepOnlySharedTexts(t *testing.T) {
	var shared Patches
	once := loaders.Patch{Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: once\ndata:\n  a: b\n"}
	twice := loaders.Patch{Patch: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: twice\ndata:\n  a: b\n"}
	for _, cfg := range []loaders.Patch{once, twice, twice, twice} {
		if _, err := shared.New(cfg, mapFiles(nil)); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := shared.byText[once.Patch]; ok || len(shared.byText) != 1 {
		t.Errorf("kept decoded: %d texts (the one used once: %v), want only the text used three times", len(shared.byText), ok)
	}
}
