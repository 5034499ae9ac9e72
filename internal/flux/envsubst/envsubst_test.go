package envsubst

import (
	"encoding/json"
	"os"
	"testing"
)

// corpus is testdata/cases.json: texts evaluated by
// github.com/fluxcd/pkg/envsubst v1.7.0 itself (the flux reference
// corpus's envsubst-cases.json), each in non-strict and strict mode over
// one set of variables, with the library's output or error.
type corpus struct {
	Vars    map[string]string `json:"vars"`
	Library string            `json:"library"`
	Cases   []struct {
		Text   string  `json:"text"`
		Strict bool    `json:"strict"`
		Out    *string `json:"out"`
		Err    *string `json:"err"`
	} `json:"cases"`
}

func TestLibraryCorpus(t *testing.T) {
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Cases) < 1000 {
		t.Fatalf("only %d cases in testdata/cases.json", len(c.Cases))
	}
	for _, tc := range c.Cases {
		out, err := Eval(tc.Text, Mapping(c.Vars, tc.Strict))
		switch {
		case tc.Err != nil && err == nil:
			t.Errorf("Eval(%q, strict=%v) = %q, want error %q", tc.Text, tc.Strict, out, *tc.Err)
		case tc.Err != nil && err.Error() != *tc.Err:
			t.Errorf("Eval(%q, strict=%v): error %q, want %q", tc.Text, tc.Strict, err, *tc.Err)
		case tc.Err == nil && err != nil:
			t.Errorf("Eval(%q, strict=%v): error %q, want %q", tc.Text, tc.Strict, err, *tc.Out)
		case tc.Err == nil && out != *tc.Out:
			t.Errorf("Eval(%q, strict=%v) = %q, want %q", tc.Text, tc.Strict, out, *tc.Out)
		}
	}
}

// TestDialect spells out the points where Flux's dialect is not a shell's,
// the ones a user writing ${...} in a manifest trips on.
func TestDialect(t *testing.T) {
	vars := map[string]string{"ENV": "prod", "EMPTY": "", "PATHV": "a/b/a/c"}
	for _, tc := range []struct {
		text, want, err string
		strict          bool
	}{
		{text: "${ENV}", want: "prod"},
		{text: "$ENV", want: "$ENV"},                // only the braced form
		{text: "$${ENV}", want: "${ENV}"},           // $$ escapes
		{text: `\${ENV}`, want: `\prod`},            // a backslash does not
		{text: "${MISSING}", want: ""},              // non-strict: empty
		{text: "${MISSING:=d}", want: "d"},          // := does not assign
		{text: "${MISSING=d}${MISSING}", want: "d"}, // nor does =
		{text: "${EMPTY=d}", want: "d"},             // = is "when empty" too
		{text: "${MISSING:?oops}", want: "oops"},    // :? is a default
		{text: "${ENV:+set}", want: "prod"},         // :+ is a default
		{text: "${MISSING:-${ENV}-x}", want: "prod-x"},
		{text: "${PATHV//a/X}", want: "X/b/X/c"},
		{text: "${PATHV##*/}", want: "c"},
		{text: "${#ENV}", want: "4"},
		{text: "${ENV:1:2}", want: "ro"},
		{text: "${MISSING-d}", err: "missing closing brace"},
		{text: "${ENV+x}", err: "missing closing brace"},
		{text: "${}", err: "unable to parse variable name"},
		{text: "${ENV", err: "missing closing brace"},
		{text: "${MISSING}", strict: true, err: `variable not set (strict mode): "MISSING"`},
		{text: "${MISSING^^}", strict: true, err: `variable not set (strict mode): "MISSING"`},
		{text: "${MISSING:=d}", strict: true, want: "d"},
		{text: "${EMPTY}", strict: true, want: ""},
	} {
		got, err := Eval(tc.text, Mapping(vars, tc.strict))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Eval(%q, strict=%v) = %q, %v; want error %q", tc.text, tc.strict, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Eval(%q, strict=%v) = %q, %v; want %q", tc.text, tc.strict, got, err, tc.want)
		}
	}
}

// TestPanicIsError: where the library panics (a negative substring length
// reaching before the offset), Eval fails instead of crashing kpipe.
func TestPanicIsError(t *testing.T) {
	_, err := Eval("${ENV:3:-2}", Mapping(map[string]string{"ENV": "prod"}, false))
	if err == nil {
		t.Fatal("no error for a substring the library panics on")
	}
}
