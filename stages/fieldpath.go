package stages

import (
	"strconv"
	"strings"
)

// splitFieldPath splits a replacement field path such as
// "spec.template.spec.containers.[name=app].image" into its elements, the
// way kustomize splits `fieldPath` and `fieldPaths` values:
//
//   - Elements are separated by '.'; one leading '.' is ignored.
//   - A backslash before a '.' makes the dot part of the element (the
//     backslash is dropped): "data.config\.json" gives [data config.json].
//   - An element that starts with '[' runs up to the next element that ends
//     with ']', dots included. If it contains '=', it is a list selector and
//     keeps its brackets ("[name=a.b]"); otherwise it is a map key written in
//     brackets and loses them ("metadata.annotations.[a.b/c]" gives
//     [metadata annotations a.b/c]).
//
// Elements are returned as written otherwise: whether one is a map key, a
// list index ("0"), the last element ("-"), every element ("*") or a list
// selector ("[name=app]", "[=value]") is decided where the path is followed.
func splitFieldPath(path string) []string {
	parts := strings.Split(path, ".")
	if len(parts) > 1 && parts[0] == "" {
		parts = parts[1:]
	}
	split := []string{parts[0]}
	for _, p := range parts[1:] {
		last := len(split) - 1
		if strings.HasSuffix(split[last], `\`) {
			split[last] = strings.TrimSuffix(split[last], `\`) + "." + p
			continue
		}
		split = append(split, p)
	}

	var out []string
	for i := 0; i < len(split); i++ {
		elem := split[i]
		if !strings.HasPrefix(elem, "[") || strings.HasSuffix(elem, "]") {
			out = append(out, elem)
			continue
		}
		bracketed := []string{elem}
		for i < len(split)-1 {
			i++
			bracketed = append(bracketed, split[i])
			if strings.HasSuffix(split[i], "]") {
				break
			}
		}
		joined := strings.Join(bracketed, ".")
		if strings.Contains(joined, "=") {
			out = append(out, joined)
		} else {
			out = append(out, strings.Trim(joined, "[]"))
		}
	}
	return out
}

// isListIndex reports whether p is written in brackets ("[a=b]").
func isListIndex(p string) bool {
	return strings.HasPrefix(p, "[") && strings.HasSuffix(p, "]")
}

// isIdxNumber reports whether p is a non-negative list index.
func isIdxNumber(p string) bool {
	n, ok := atoi(p)
	return ok && n >= 0
}

// atoi is strconv.Atoi without the error it allocates for a path element
// that is not a number (most are keys).
func atoi(p string) (int, bool) {
	if p == "" {
		return 0, false
	}
	if c := p[0]; (c < '0' || c > '9') && c != '-' && c != '+' {
		return 0, false
	}
	n, err := strconv.Atoi(p)
	return n, err == nil
}

// splitIndexNameValue splits "[name=value]" into name and value.
func splitIndexNameValue(p string) (string, string, bool) {
	elem := strings.TrimPrefix(strings.TrimSuffix(p, "]"), "[")
	name, value, ok := strings.Cut(elem, "=")
	return name, value, ok
}
