package app

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)*$`) })

// ParseKubeVersion is the repo-server's parseKubeVersion: Kubernetes'
// generic version parse (at least two numeric components, "v" and
// anything after the numbers dropped): "v1.31.1+k3s1" is "1.31.1"; ""
// stays "".
func ParseKubeVersion(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	m := versionRE().FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("could not parse %q as version", s)
	}
	comps := strings.Split(m[1], ".")
	if len(comps) < 2 {
		return "", fmt.Errorf("illegal version string %q", s)
	}
	out := make([]string, len(comps))
	for i, c := range comps {
		if i == 0 && strings.HasPrefix(c, "0") && c != "0" {
			return "", fmt.Errorf("illegal zero-prefixed version component %q in %q", c, s)
		}
		n, err := strconv.ParseUint(c, 10, 0)
		if err != nil {
			return "", fmt.Errorf("illegal non-numeric version component %q in %q: %v", c, s, err)
		}
		out[i] = strconv.FormatUint(n, 10)
	}
	return strings.Join(out, "."), nil
}

// CommandString is util/exec.GetCommandArgsToLog: arguments joined by
// spaces, an empty one as "", one holding white space quoted.
func CommandString(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case a == "":
			out[i] = `""`
		case strings.IndexFunc(a, isSpace) >= 0:
			out[i] = strconv.Quote(a)
		default:
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xA0:
		return true
	}
	return r > 0xff && (r == 0x1680 || r >= 0x2000 && r <= 0x200a || r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000)
}

// CommandLine is CommandString for arguments naming paths under roots
// (checkout labels that may hold spaces, such as "<path to cached
// source>"): they are quoted as the real paths would be (not at all,
// without spaces), then written with the label.
func CommandLine(args []string, roots ...string) string {
	tok := func(i int) string { return "\x01" + strconv.Itoa(i) + "\x01" }
	a := make([]string, len(args))
	for i, s := range args {
		for j, r := range roots {
			if r != "" {
				s = strings.ReplaceAll(s, r, tok(j))
			}
		}
		a[i] = s
	}
	out := CommandString(a)
	for j, r := range roots {
		out = strings.ReplaceAll(out, tok(j), r)
	}
	return out
}
