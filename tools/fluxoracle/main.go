// Command fluxoracle runs Flux's own libraries, at the versions flux2
// pins, for kpipe's differential tests of its ports of them: the envsubst
// dialect (github.com/fluxcd/pkg/envsubst, for internal/flux/envsubst) and
// the ignore matcher (github.com/fluxcd/pkg/sourceignore, for
// internal/flux/generate). The tests build it (internal/flux/internal/
// fluxoracle) with
//
//	go build -C tools/fluxoracle -o DIR/fluxoracle .
//
// and keep it running. It reads one JSON request per line on stdin and
// writes one JSON line per request:
//
//   - {"op": "envsubst", "text": B64, "vars": {"NAME": B64}, "strict":
//     false} -> {"out": B64}, {"err": "..."} (the library's error), or
//     {"panic": "..."} when the library panicked. The mapping is Flux's
//     (fluxcd/pkg/kustomize varSubstitution): non-strict, every variable
//     is set (undefined ones are empty); strict, only those of vars are.
//     Texts and values travel base64-encoded (B64: encoding/json's form of
//     a []byte), so that any bytes, invalid UTF-8 included, reach the
//     library unchanged.
//   - {"op": "ignore", "sets": [{"domain": [...], "text": "..."}],
//     "default": true, "domain": [...], "path": [...], "isDir": false} ->
//     {"match": true}: the patterns of each set's text
//     (sourceignore.ReadPatterns with the set's domain), behind Flux's
//     default patterns (NewDefaultMatcher with domain) when default is
//     set, matched against the path.
//
// It has its own module (as tools/dockerlint does), so that kpipe's module
// never depends on Flux.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/fluxcd/pkg/envsubst"
	"github.com/fluxcd/pkg/sourceignore"
	"github.com/fluxcd/pkg/sourceignore/gitignore"
)

type request struct {
	Op string `json:"op"`

	// envsubst
	Text   []byte            `json:"text"`
	Vars   map[string][]byte `json:"vars"`
	Strict bool              `json:"strict"`

	// ignore
	Sets []struct {
		Domain []string `json:"domain"`
		Text   string   `json:"text"`
	} `json:"sets"`
	Default bool     `json:"default"`
	Domain  []string `json:"domain"`
	Path    []string `json:"path"`
	IsDir   bool     `json:"isDir"`
}

type response struct {
	Out   []byte  `json:"out"`
	Err   *string `json:"err,omitempty"`
	Panic *string `json:"panic,omitempty"`
	Match bool    `json:"match"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "fluxoracle: bad request:", err)
			os.Exit(2)
		}
		var res response
		switch req.Op {
		case "envsubst":
			res = eval(req)
		case "ignore":
			res = ignore(req)
		default:
			fmt.Fprintf(os.Stderr, "fluxoracle: unknown op %q\n", req.Op)
			os.Exit(2)
		}
		if err := enc.Encode(res); err != nil {
			fmt.Fprintln(os.Stderr, "fluxoracle:", err)
			os.Exit(2)
		}
		if err := out.Flush(); err != nil {
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "fluxoracle:", err)
		os.Exit(2)
	}
}

func eval(req request) (res response) {
	defer func() {
		if r := recover(); r != nil {
			p := fmt.Sprint(r)
			res = response{Panic: &p}
		}
	}()
	vars := make(map[string]string, len(req.Vars))
	for k, v := range req.Vars {
		vars[k] = string(v)
	}
	strict := req.Strict
	s, err := envsubst.Eval(string(req.Text), func(name string) (string, bool) {
		if strict {
			v, ok := vars[name]
			return v, ok
		}
		return vars[name], true
	})
	if err != nil {
		e := err.Error()
		return response{Err: &e}
	}
	return response{Out: []byte(s)}
}

func ignore(req request) (res response) {
	defer func() {
		if r := recover(); r != nil {
			p := fmt.Sprint(r)
			res = response{Panic: &p}
		}
	}()
	var ps []gitignore.Pattern
	for _, set := range req.Sets {
		ps = append(ps, sourceignore.ReadPatterns(strings.NewReader(set.Text), set.Domain)...)
	}
	m := sourceignore.NewMatcher(ps)
	if req.Default {
		m = sourceignore.NewDefaultMatcher(ps, req.Domain)
	}
	return response{Match: m.Match(req.Path, req.IsDir)}
}
