// Package fluxoracle runs tools/fluxoracle, a program linking Flux's own
// libraries (github.com/fluxcd/pkg/envsubst and
// github.com/fluxcd/pkg/sourceignore, at the versions flux2 pins), for the
// differential tests of kpipe's ports of them. kpipe's module never
// imports those libraries: the program has a module of its own, built by
// Start with the go command.
//
// Only tests import it. It imports only the standard library.
package fluxoracle

import (
	"testing"

	"github.com/kpipe/kpipe/internal/flux/internal/oracleproc"
)

// Oracle is a running tools/fluxoracle.
type Oracle struct{ p *oracleproc.Process }

// BuildCommand is the command that builds the oracle, for skip messages.
var BuildCommand = oracleproc.BuildCommand("fluxoracle")

// Start builds tools/fluxoracle and starts it for the rest of the test, or
// skips the test naming the command that failed.
func Start(tb testing.TB) *Oracle {
	tb.Helper()
	return &Oracle{oracleproc.Start(tb, "fluxoracle", "Flux's libraries")}
}

// Response is the oracle's answer.
type Response struct {
	Out   []byte  `json:"out"`
	Err   *string `json:"err"`
	Panic *string `json:"panic"`
	Match bool    `json:"match"`
}

func (o *Oracle) ask(tb testing.TB, req any) Response {
	tb.Helper()
	var res Response
	o.p.Ask(tb, req, &res)
	return res
}

// Envsubst evaluates text with fluxcd/pkg/envsubst and Flux's mapping
// over vars (strict or not).
func (o *Oracle) Envsubst(tb testing.TB, text string, vars map[string]string, strict bool) Response {
	tb.Helper()
	req := struct {
		Op     string            `json:"op"`
		Text   []byte            `json:"text"`
		Vars   map[string][]byte `json:"vars"`
		Strict bool              `json:"strict"`
	}{Op: "envsubst", Text: []byte(text), Vars: map[string][]byte{}, Strict: strict}
	for k, v := range vars {
		req.Vars[k] = []byte(v)
	}
	return o.ask(tb, req)
}

// IgnoreSet is the text of an ignore file and the domain (the path
// components of its directory) it applies to.
type IgnoreSet struct {
	Domain []string `json:"domain"`
	Text   string   `json:"text"`
}

// Ignore reports whether fluxcd/pkg/sourceignore's matcher ignores path:
// the patterns of sets, behind Flux's default patterns (scoped to domain)
// when withDefaults is set.
func (o *Oracle) Ignore(tb testing.TB, sets []IgnoreSet, withDefaults bool, domain, path []string, isDir bool) bool {
	tb.Helper()
	req := struct {
		Op      string      `json:"op"`
		Sets    []IgnoreSet `json:"sets"`
		Default bool        `json:"default"`
		Domain  []string    `json:"domain"`
		Path    []string    `json:"path"`
		IsDir   bool        `json:"isDir"`
	}{"ignore", sets, withDefaults, domain, path, isDir}
	res := o.ask(tb, req)
	if res.Panic != nil {
		tb.Fatalf("sourceignore panicked: %s", *res.Panic)
	}
	return res.Match
}
