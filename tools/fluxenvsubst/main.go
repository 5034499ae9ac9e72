// Command fluxenvsubst evaluates texts with github.com/fluxcd/pkg/envsubst,
// the library Flux's post-build variable substitution runs, at the version
// flux2 pins: the oracle of internal/flux/envsubst's differential fuzz
// test (FuzzAgainstLibrary), which builds it with
//
//	go build -C tools/fluxenvsubst -o DIR/fluxenvsubst .
//
// and keeps it running. It reads one JSON request per line on stdin,
// {"text": "...", "vars": {"NAME": "value"}, "strict": false}, and writes
// one JSON line per request: {"out": "..."}, {"err": "..."} (the library's
// error), or {"panic": "..."} when the library panicked. The mapping is
// the one of Flux's varSubstitution (fluxcd/pkg/kustomize): non-strict,
// every variable is set (undefined ones are empty); strict, only those of
// vars are.
//
// It has its own module (as tools/dockerlint does), so that kpipe's module
// never depends on Flux.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/fluxcd/pkg/envsubst"
)

type request struct {
	Text   []byte            `json:"text"`
	Vars   map[string][]byte `json:"vars"`
	Strict bool              `json:"strict"`
}

type response struct {
	Out   []byte  `json:"out"`
	Err   *string `json:"err,omitempty"`
	Panic *string `json:"panic,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "fluxenvsubst: bad request:", err)
			os.Exit(2)
		}
		if err := enc.Encode(eval(req)); err != nil {
			fmt.Fprintln(os.Stderr, "fluxenvsubst:", err)
			os.Exit(2)
		}
		if err := out.Flush(); err != nil {
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "fluxenvsubst:", err)
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
