package envsubst

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/kpipe/kpipe/internal/flux/internal/fluxoracle"
)

// fuzzVars are the variables of every fuzzed evaluation, the corpus's plus
// F, the fuzzed value.
func fuzzVars(f string) map[string]string {
	return map[string]string{
		"ENV": "prod", "EMPTY": "", "UP": "HELLO", "PATHV": "a/b/a/c", "NUM": "3",
		"SP": "a b", "BR": "x}y", "DOL": "$HOME", "UNI": "héllo", "_u1": "u", "true": "T",
		"F": f,
	}
}

// check compares Eval with the library on one text.
func check(t *testing.T, o *fluxoracle.Oracle, text string, vars map[string]string, strict bool) {
	t.Helper()
	want := o.Envsubst(t, text, vars, strict)
	got, err := Eval(text, Mapping(vars, strict))
	switch {
	case want.Panic != nil:
		if err == nil || err.Error() != "envsubst panicked: "+*want.Panic {
			t.Fatalf("Eval(%q, strict=%v) = %q, %v; the library panics: %s", text, strict, got, err, *want.Panic)
		}
	case want.Err != nil:
		if err == nil || err.Error() != *want.Err {
			t.Fatalf("Eval(%q, strict=%v) = %q, %v; the library fails: %s", text, strict, got, err, *want.Err)
		}
	default:
		if err != nil || got != string(want.Out) {
			t.Fatalf("Eval(%q, strict=%v) = %q, %v; the library gives %q", text, strict, got, err, want.Out)
		}
	}
}

// FuzzAgainstLibrary checks the port against github.com/fluxcd/pkg/envsubst
// on random texts: the same output, the same error, and an error where the
// library panics. Seeds: the corpus's texts and expressions made of the
// dialect's pieces.
//
//	go test ./internal/flux/envsubst -run '^$' -fuzz FuzzAgainstLibrary -fuzztime 20000x
func FuzzAgainstLibrary(f *testing.F) {
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		f.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(b, &c); err != nil {
		f.Fatal(err)
	}
	for i, tc := range c.Cases {
		if i%2 == 0 { // each text is there twice, non-strict and strict
			f.Add(tc.Text, tc.Strict, "v")
		}
	}
	for _, s := range []string{
		"${F:1:-3}", "${F/#a/$$}", "$${F}}", `${F//\//\\}`, "${F%%[a-", "${#F}${F^^}",
		"a: ${F:=${ENV:-x}}\nb: '${UNI,}'\n", "${F:${NUM}:1}",
	} {
		f.Add(s, false, "ab/cd")
		f.Add(s, true, "")
	}
	o := fluxoracle.Start(f)
	f.Fuzz(func(t *testing.T, text string, strict bool, value string) {
		check(t, o, text, fuzzVars(value), strict)
	})
}

// TestAgainstLibraryPieces runs the oracle over every pair of a set of
// pieces (operators, escapes, nested expressions): a systematic sweep
// beside the random one, and what runs when no fuzzing is asked for.
func TestAgainstLibraryPieces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the oracle")
	}
	o := fluxoracle.Start(t)
	pieces := []string{
		"", "$", "$$", "{", "}", "\\", "/", ":", "#", "%", "x", "é",
		"${F}", "${F", "${", "${F:-d}", "${F:=${ENV}}", "${F:+s}", "${F:?e}", "${F=e}", "${F-e}",
		"${F:1}", "${F:1:2}", "${F:-1}", "${F: -1}", "${F:a}", "${F/a/b}", "${F//a}", "${F/#a/b}",
		"${F/%a/b}", "${F#a*}", "${F##*a}", "${F%a*}", "${F%%*a}", "${#F}", "${F,}", "${F,,}",
		"${F^}", "${F^^}", "${MISSING}", "${MISSING:=x}", `\/`, `\\`, "${F/\\//x}", "$F",
	}
	for _, a := range pieces {
		for _, b := range pieces {
			for _, strict := range []bool{false, true} {
				for _, v := range []string{"", "a/b/a"} {
					check(t, o, a+b, fuzzVars(v), strict)
				}
			}
		}
	}
}
