package envsubst

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// oracle is tools/fluxenvsubst, a program linking
// github.com/fluxcd/pkg/envsubst (the library itself, at the version
// flux2 pins), running for the whole test process.
type oracle struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

type oracleRequest struct {
	Text   []byte            `json:"text"`
	Vars   map[string][]byte `json:"vars"`
	Strict bool              `json:"strict"`
}

type oracleResponse struct {
	Out   []byte  `json:"out"`
	Err   *string `json:"err"`
	Panic *string `json:"panic"`
}

// oracleBuild is the command that builds the oracle, for the skip message.
const oracleBuild = "go build -C tools/fluxenvsubst -o fluxenvsubst ."

// startOracle builds tools/fluxenvsubst and starts it, or skips the test
// naming the command that failed (the library comes from the module proxy
// or the module cache: an offline machine without it cannot build it).
func startOracle(tb testing.TB) *oracle {
	tb.Helper()
	dir, err := filepath.Abs("../../../tools/fluxenvsubst")
	if err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(tb.TempDir(), "fluxenvsubst")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		tb.Skipf("the oracle does not build (%s: %v), run %q from the repository root to see why:\n%s", dir, err, oracleBuild, out)
	}
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	o := &oracle{cmd: cmd, in: in, out: bufio.NewReader(out)}
	tb.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return o
}

func (o *oracle) eval(tb testing.TB, text string, vars map[string]string, strict bool) oracleResponse {
	req := oracleRequest{Text: []byte(text), Vars: map[string][]byte{}, Strict: strict}
	for k, v := range vars {
		req.Vars[k] = []byte(v)
	}
	b, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := o.in.Write(append(b, '\n')); err != nil {
		tb.Fatalf("oracle: %v", err)
	}
	line, err := o.out.ReadBytes('\n')
	if err != nil {
		tb.Fatalf("oracle: %v", err)
	}
	var res oracleResponse
	if err := json.Unmarshal(line, &res); err != nil {
		tb.Fatalf("oracle answered %q: %v", line, err)
	}
	return res
}

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
func check(t *testing.T, o *oracle, text string, vars map[string]string, strict bool) {
	t.Helper()
	want := o.eval(t, text, vars, strict)
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
	o := startOracle(f)
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
	o := startOracle(t)
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
