package loaders

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"strings"
)

// Hinted is an error with a plain line for a person in front of it: Hint
// says where (file:line), what is wrong and what was probably meant. Error
// returns the wrapped error's text unchanged (kustomize's wording, which
// scripts grep for); the CLI prints Hint on the line before it.
type Hinted struct {
	Hint string
	Err  error
}

func (h *Hinted) Error() string { return h.Err.Error() }

// Unwrap returns the wrapped error.
func (h *Hinted) Unwrap() error { return h.Err }

// lineOf returns the 1-based line of data on which the list item, key or
// value text first appears (a line that, trimmed, starts with "- "+text or
// text, or whose value after a "key:" does), or 0. Only the first word of text is looked for,
// so that an item that swallowed the next line is found by its start.
func lineOf(data []byte, text string) int {
	f := strings.Fields(text)
	if len(f) == 0 {
		return 0
	}
	word := strings.Trim(f[0], `"'`)
	for i, line := range bytes.Split(data, []byte("\n")) {
		t := strings.TrimSpace(string(line))
		t = strings.TrimPrefix(t, "-")
		t = strings.Trim(strings.TrimSpace(t), `"'`)
		if strings.HasPrefix(t, word) {
			return i + 1
		}
		if _, v, ok := strings.Cut(t, ":"); ok && strings.HasPrefix(strings.Trim(strings.TrimSpace(v), `"'`), word) {
			return i + 1 // `- path: p.yaml`
		}
	}
	// An item of a flow sequence: `resources: [a.yaml, b.yaml]`.
	for i, line := range bytes.Split(data, []byte("\n")) {
		if _, v, ok := strings.Cut(string(line), "["); ok {
			for _, item := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ']' }) {
				if strings.HasPrefix(strings.Trim(strings.TrimSpace(item), `"'`), word) {
					return i + 1
				}
			}
		}
	}
	return 0
}

// where is "file:line" or "file".
func where(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

// MissingEntryHint is the plain line for a list entry (field `field` of the
// kustomization file kfile, raw data) naming a path that does not exist
// below dir in fsys: where it is, and the likely cause: an item that swallowed the
// next line (`- a.yaml` followed by ` - b.yaml`, which YAML reads as the one
// item "a.yaml - b.yaml"), or the nearest existing name.
func MissingEntryHint(fsys FS, kfile string, data []byte, field, dir, entry string) string {
	at := where(kfile, lineOf(data, entry))
	if strings.Contains(entry, " - ") {
		first, _, _ := strings.Cut(entry, " - ")
		return fmt.Sprintf("%s: %s entry '%s' does not exist: it looks like two list items run together; the line after '- %s' is indented further than it, so YAML reads it as part of that item: indent every '- ' of the list alike", at, field, entry, first)
	}
	what := "does not exist"
	if field == "resources" {
		what = "is neither a file nor a directory"
	}
	msg := fmt.Sprintf("%s: %s entry '%s' %s", at, field, entry, what)
	if near := nearestName(fsys, filepath.Join(dir, filepath.FromSlash(entry))); near != "" {
		if d := path.Dir(filepath.ToSlash(entry)); d != "." {
			near = path.Join(d, near)
		}
		msg += fmt.Sprintf("; did you mean '%s'?", near)
	}
	return msg
}

// nearestName returns the name of the entry of p's directory closest to
// p's base name (by edit distance, at most a third of its length), or "".
func nearestName(fsys FS, p string) string {
	dir, base := filepath.Split(p)
	entries, err := readDirSorted(fsys, filepath.Clean(dir))
	if err != nil {
		return ""
	}
	best, bestD := "", len(base)/3+1
	for _, e := range entries {
		if d := editDistance(strings.ToLower(base), strings.ToLower(e.Name())); d < bestD {
			best, bestD = e.Name(), d
		}
	}
	return best
}

// unknownFieldHint is the plain line for an unknown field of a
// kustomization file: where it is and the known field it is nearest to.
func unknownFieldHint(kfile string, data []byte, field string) string {
	msg := fmt.Sprintf("%s: unknown field '%s'", where(kfile, lineOf(data, field)), field)
	best, bestD := "", len(field)/3+1
	t := reflect.TypeOf(Kustomization{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if d := editDistance(strings.ToLower(field), strings.ToLower(name)); d < bestD {
			best, bestD = name, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf("; did you mean '%s'?", best)
	}
	return msg
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
