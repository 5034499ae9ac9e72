package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// manyRoots is a result as a change to a shared base gives: every root
// changed, each with a long diff.
func manyRoots(n int) *Result {
	res := &Result{Base: "abc", Head: "working tree", Compared: n}
	for i := 0; i < n; i++ {
		old := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\ndata:\n  k: %s\n", i, strings.Repeat("a", 300))
		nw := strings.Replace(old, "k: a", "k: b", 1)
		changes, _, err := Compare([]byte(old), []byte(nw), Options{Context: 3})
		if err != nil {
			panic(err)
		}
		res.Roots = append(res.Roots, RootDiff{Path: fmt.Sprintf("apps/app%03d/prod", i), Status: RootChanged, Changes: changes})
	}
	return res
}

// checkMarkdown checks what a code host needs to render a comment: under
// the size limit, every code fence closed, every <details> closed.
func checkMarkdown(t *testing.T, md string) {
	t.Helper()
	if len([]rune(md)) >= 65536 || len(md) > MarkdownLimit {
		t.Fatalf("markdown is %d bytes, over the limit", len(md))
	}
	if o, c := strings.Count(md, "<details>"), strings.Count(md, "</details>"); o != c {
		t.Fatalf("%d <details> but %d </details>", o, c)
	}
	fences := regexp.MustCompile("(?m)^```+")
	var open string
	for _, f := range fences.FindAllString(md, -1) {
		switch {
		case open == "":
			open = f
		case f == open:
			open = ""
		}
	}
	if open != "" {
		t.Fatalf("a code fence %q is never closed", open)
	}
}

// TestMarkdownStaysUnderLimit: a change that touches every root of a
// large monorepo gives a comment code hosts accept, with a note saying
// what was cut.
func TestMarkdownStaysUnderLimit(t *testing.T) {
	for _, n := range []int{3, 400, 5000} {
		var buf bytes.Buffer
		if err := WriteMarkdown(&buf, manyRoots(n), 0); err != nil {
			t.Fatal(err)
		}
		md := buf.String()
		checkMarkdown(t, md)
		if !strings.Contains(md, "| `apps/app000/prod` | changed | 0 | 0 | 1 |") {
			t.Fatalf("n=%d: no summary row for the first root:\n%.500s", n, md)
		}
		cut := strings.Contains(md, "left out to stay under") || strings.Contains(md, "more roots differ")
		if n == 3 && (cut || strings.Count(md, "<details>") != 3) {
			t.Fatalf("n=3: want every root in full:\n%s", md)
		}
		if n > 3 && !cut {
			t.Fatalf("n=%d: the comment is cut without a note", n)
		}
	}
}

// TestMarkdownFenceInsideDiff: a diff that itself holds a code fence does
// not end the comment's fence early.
func TestMarkdownFenceInsideDiff(t *testing.T) {
	old := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  README.md: |\n    ```\n    x\n    ```\n"
	nw := strings.Replace(old, "    x\n", "    y\n", 1)
	changes, _, err := Compare([]byte(old), []byte(nw), Options{Context: 3})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_ = WriteMarkdown(&buf, &Result{Roots: []RootDiff{{Path: "a", Status: RootChanged, Changes: changes}}}, 0)
	if !strings.Contains(buf.String(), "````diff\n") {
		t.Fatalf("want a longer fence around a diff that holds ```:\n%s", buf.String())
	}
	checkMarkdown(t, buf.String())
}

// TestCompareOrderAloneIsNoChange: the same resources in another order are
// no change, and the result says they were reordered.
func TestCompareOrderAloneIsNoChange(t *testing.T) {
	a := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"
	b := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
	changes, reordered, err := Compare([]byte(a), []byte(b), Options{})
	if err != nil || len(changes) != 0 || !reordered {
		t.Fatalf("changes %v, reordered %v, err %v", changes, reordered, err)
	}
}

// TestCompareHashRename: a generated ConfigMap whose hash suffix changed
// is one changed resource with its old name; a plain rename (no hash
// suffix) is a removal and an addition.
func TestCompareHashRename(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: %s\n"
	old := fmt.Sprintf(cm, "app-config-5k2g7h8b9t", "1") + "---\n" + fmt.Sprintf(cm, "plain-a", "1")
	nw := fmt.Sprintf(cm, "app-config-9m4c2tdd6f", "2") + "---\n" + fmt.Sprintf(cm, "plain-b", "1")
	changes, _, err := Compare([]byte(old), []byte(nw), Options{Context: 3})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Change+" "+c.ID.Name+" "+c.OldName)
	}
	want := []string{"changed app-config-9m4c2tdd6f app-config-5k2g7h8b9t", "added plain-b ", "removed plain-a "}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestTextColorAndJSON: the terminal form colours only when asked, and the
// JSON form is valid and complete.
func TestTextColorAndJSON(t *testing.T) {
	res := manyRoots(1)
	var plain, color, js bytes.Buffer
	_ = WriteText(&plain, res, false)
	_ = WriteText(&color, res, true)
	if strings.Contains(plain.String(), "\x1b[") || !strings.Contains(color.String(), "\x1b[32m") {
		t.Fatalf("colour: plain has escapes or coloured has none")
	}
	if err := WriteJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Roots) != 1 || back.Roots[0].Changes[0].ID.Name != "c0" {
		t.Fatalf("JSON does not round-trip: %v\n%s", err, js.String())
	}
}

// splitDocs finds the documents a line-by-line split finds, in any
// stream of "---" lines, near misses, blank and CRLF lines.
func TestSplitDocsMatchesALineSplit(t *testing.T) {
	lineSplit := func(data []byte) []string {
		var docs []string
		var cur strings.Builder
		for _, line := range strings.SplitAfter(string(data), "\n") {
			if strings.TrimRight(line, "\r\n") == "---" {
				docs = append(docs, cur.String())
				cur.Reset()
				continue
			}
			cur.WriteString(line)
		}
		docs = append(docs, cur.String())
		var out []string
		for _, d := range docs {
			if strings.TrimSpace(d) != "" {
				out = append(out, d)
			}
		}
		return out
	}
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"---\n", "---\r\n", "---", "--- x\n", "----\n", "a: 1\n", "\n", " ---\n", "b: ---\n", "---a\n"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for range rng.Intn(8) {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		data := []byte(b.String())
		var got []string
		for _, d := range splitDocs(data) {
			got = append(got, string(d))
		}
		if want := lineSplit(data); !slices.Equal(got, want) {
			t.Fatalf("splitDocs(%q) = %q, want %q", data, got, want)
		}
	}
}
