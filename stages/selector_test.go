package stages

import (
	"regexp"
	"testing"
)

// TestPatternMatchesAsTheAnchoredExpression checks that a selector field
// matched by equality (no regular-expression syntax) takes exactly what
// its anchored expression takes.
func TestPatternMatchesAsTheAnchoredExpression(t *testing.T) {
	values := []string{"", "web", "Web", "web-1", "xweb", "webx", "a.b", "aXb", "dev-", "ü", "\xff", "\uFFFD"}
	for _, field := range []string{"web", "Deployment", "a.b", "web-.*", "dev-", "ü", "(web|api)", "\uFFFD", "w[e]b"} {
		p, err := compilePattern(field)
		if err != nil {
			t.Fatalf("%q: %v", field, err)
		}
		re := regexp.MustCompile("^(?:" + field + ")$")
		for _, v := range values {
			if got, want := p.match(v), re.MatchString(v); got != want {
				t.Errorf("field %q, value %q: match %v, the expression says %v", field, v, got, want)
			}
		}
	}
	if p, _ := compilePattern(""); !p.match("anything") {
		t.Error("an empty field does not match anything")
	}
	if _, err := compilePattern("(unclosed"); err == nil {
		t.Error("a bad expression compiled")
	}
}
