package generate

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kpipe/kpipe/internal/flux/internal/fluxoracle"
)

// ignored matches a path below the domain ["", "repo", "app"] against
// two ignore files: text at the domain, sub in its directory "sub".
func ignored(text, sub string, withDefaults bool, rel string, isDir bool) bool {
	domain := []string{"", "repo", "app"}
	ps := append(readPatterns(text, domain), readPatterns(sub, append(append([]string(nil), domain...), "sub"))...)
	m := matcher(ps)
	if withDefaults {
		m = defaultMatcher(ps, domain)
	}
	return m.Match(append(append([]string(nil), domain...), strings.Split(rel, "/")...), isDir)
}

// TestIgnoreRules spells out the rules of Flux's matcher that gitignore
// users do not expect.
func TestIgnoreRules(t *testing.T) {
	for _, tc := range []struct {
		text, sub, path string
		isDir, defaults bool
		want            bool
	}{
		{text: "*.yaml", path: "a.yaml", want: true},
		{text: "*.yaml\n!keep.yaml", path: "x/keep.yaml", want: false}, // the last match wins
		{text: "sub/", path: "sub/a.yaml", want: true},                 // through the directory
		{text: "sub/", path: "sub", want: false},                       // a file named sub
		{text: "sub/", path: "sub", isDir: true, want: true},
		{text: "/a.yaml", path: "x/a.yaml", want: false}, // anchored to the domain
		{text: "x/a.yaml", path: "y/x/a.yaml", want: false},
		{text: "**/a.yaml", path: "y/x/a.yaml", want: true},
		{text: "# a comment\n\n  ", path: "a.yaml", want: false},
		{sub: "*.yaml", path: "a.yaml", want: false}, // sub's patterns stay in sub
		{sub: "*.yaml", path: "sub/deep/a.yaml", want: true},
		{path: ".sops.yaml", defaults: true, want: true},
		{path: "x/.sops.yaml", defaults: true, want: true},
		{path: ".github/workflows/ci.yaml", defaults: true, want: true},
		{text: "!.sops.yaml", path: ".sops.yaml", defaults: true, want: false}, // the user's win
		{path: "a.png", defaults: true, want: true},
	} {
		if got := ignored(tc.text, tc.sub, tc.defaults, tc.path, tc.isDir); got != tc.want {
			t.Errorf("%q (sub %q, defaults %v): %s (dir %v) ignored = %v, want %v", tc.text, tc.sub, tc.defaults, tc.path, tc.isDir, got, tc.want)
		}
	}
}

// FuzzIgnoreAgainstLibrary checks the matcher against
// fluxcd/pkg/sourceignore's (tools/fluxoracle) on random patterns and
// paths.
//
//	go test ./internal/flux/generate -run '^$' -fuzz FuzzIgnoreAgainstLibrary -fuzztime 20000x
func FuzzIgnoreAgainstLibrary(f *testing.F) {
	for _, s := range [][2]string{
		{"*.yaml", "a.yaml"}, {"sub/\n!sub/keep.yaml", "sub/keep.yaml"}, {"/a\\ ", "a "},
		{"**/x/**", "a/x/b"}, {"a/**/b", "a/c/d/b"}, {"[a-", "a"}, {"**", "x/y"}, {"a/**", "a"},
		{"!/*\n/kubernetes", "kubernetes/x.yaml"}, {"x**y/z", "xy/z"}, {"/", "a"}, {"a/b/", "a/b/c"},
	} {
		f.Add(s[0], "", s[1], false, true)
		f.Add(s[0], s[0], "sub/"+s[1], true, false)
	}
	o := fluxoracle.Start(f)
	f.Fuzz(func(t *testing.T, text, sub, rel string, isDir, withDefaults bool) {
		if rel == "" || !utf8.ValidString(text) || !utf8.ValidString(sub) || !utf8.ValidString(rel) {
			return // JSON (the oracle's protocol) cannot carry invalid UTF-8
		}
		domain := []string{"", "repo", "app"}
		want := o.Ignore(t, []fluxoracle.IgnoreSet{{Domain: domain, Text: text}, {Domain: append(append([]string(nil), domain...), "sub"), Text: sub}},
			withDefaults, domain, append(append([]string(nil), domain...), strings.Split(rel, "/")...), isDir)
		if got := ignored(text, sub, withDefaults, rel, isDir); got != want {
			t.Fatalf("patterns %q, sub %q, defaults %v: %q (dir %v) ignored = %v, sourceignore says %v", text, sub, withDefaults, rel, isDir, got, want)
		}
	})
}
