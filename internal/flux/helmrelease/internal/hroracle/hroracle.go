// Package hroracle runs tools/hroracle, a program linking the libraries
// helm-controller renders HelmRelease values with (its API types,
// github.com/fluxcd/pkg/chartutil, helm's strvals), for the differential
// tests of package helmrelease. kpipe's module never imports them: the
// program has a module of its own, built by Start with the go command.
//
// Only tests import it. It imports only the standard library.
package hroracle

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/flux/internal/oracleproc"
)

// Oracle is a running tools/hroracle.
type Oracle struct{ p *oracleproc.Process }

// BuildCommand is the command that builds the oracle, for skip messages.
var BuildCommand = oracleproc.BuildCommand("hroracle")

// Start builds tools/hroracle and starts it for the rest of the test, or
// skips the test naming the command that failed.
func Start(tb testing.TB) *Oracle {
	tb.Helper()
	return &Oracle{oracleproc.Start(tb, "hroracle", "helm-controller's libraries")}
}

// Response is the oracle's answer: Values in Typed's form.
type Response struct {
	Values any     `json:"values"`
	Err    *string `json:"err"`
	Panic  *string `json:"panic"`
}

func (o *Oracle) ask(tb testing.TB, req any) Response {
	tb.Helper()
	var res Response
	o.p.Ask(tb, req, &res)
	return res
}

// Values is helm-controller's values of the HelmRelease hr (YAML) with
// the ConfigMaps and Secrets of objects (a YAML stream).
func (o *Oracle) Values(tb testing.TB, hr, objects string) Response {
	tb.Helper()
	return o.ask(tb, map[string]any{"op": "values", "hr": hr, "objects": objects})
}

// Strvals is dest after helm's strvals.ParseInto (ParseIntoString when
// asString) of s.
func (o *Oracle) Strvals(tb testing.TB, s string, dest map[string]any, asString bool) Response {
	tb.Helper()
	return o.ask(tb, map[string]any{"op": "strvals", "s": s, "dest": Typed(dest), "string": asString})
}

// Path is dest after chartutil.ReplacePathValue (ReplacePathLiteralValue
// when literal) of value at path.
func (o *Oracle) Path(tb testing.TB, path, value string, dest map[string]any, literal bool) Response {
	tb.Helper()
	return o.ask(tb, map[string]any{"op": "path", "path": path, "value": value, "dest": Typed(dest), "literal": literal})
}

// Typed encodes v with its Go types, as tools/hroracle answers: {"m":
// {...}}, {"l": [...]}, {"s": ...}, {"i": "int64"}, {"f": "float64"},
// {"b": bool}, {"n": true}, {"x": "%T"}.
func Typed(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = Typed(x)
		}
		return map[string]any{"m": m}
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = Typed(x)
		}
		return map[string]any{"l": l}
	case string:
		return map[string]any{"s": v}
	case int64:
		return map[string]any{"i": strconv.FormatInt(v, 10)}
	case float64:
		return map[string]any{"f": strconv.FormatFloat(v, 'g', -1, 64)}
	case bool:
		return map[string]any{"b": v}
	case nil:
		return map[string]any{"n": true}
	default:
		return map[string]any{"x": fmt.Sprintf("%T", v)}
	}
}

// Canonical writes a Typed value (as Typed returns it, or as decoded from
// the oracle's JSON) as text with sorted keys, for comparisons and
// readable diffs.
func Canonical(t any) string {
	var b strings.Builder
	canonical(&b, t, "")
	return b.String()
}

func canonical(b *strings.Builder, t any, indent string) {
	m, _ := t.(map[string]any)
	for tag, v := range m {
		switch tag {
		case "m":
			inner, _ := v.(map[string]any)
			keys := make([]string, 0, len(inner))
			for k := range inner {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteString("{\n")
			for _, k := range keys {
				fmt.Fprintf(b, "%s  %q: ", indent, k)
				canonical(b, inner[k], indent+"  ")
			}
			b.WriteString(indent + "}\n")
		case "l":
			items, _ := v.([]any)
			b.WriteString("[\n")
			for _, x := range items {
				b.WriteString(indent + "  - ")
				canonical(b, x, indent+"  ")
			}
			b.WriteString(indent + "]\n")
		default:
			fmt.Fprintf(b, "%s(%v)\n", tag, v)
		}
		return
	}
	fmt.Fprintf(b, "?%v\n", t)
}
