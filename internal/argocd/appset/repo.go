package appset

import (
	"fmt"

	"io/fs"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// LocalRepo answers the git generator from a checkout: Tracked are the
// files git tracks (`git ls-files`, slash paths), read through FS;
// directories are the FS's.
type LocalRepo struct {
	URL     string
	FS      fs.FS
	Tracked []string
	// IncludeHidden lists directories under hidden ones too (the
	// repo-server's --include-hidden-directories).
	IncludeHidden bool
	// NewGlobbing matches file patterns with doublestar on the tree
	// instead of git's pathspecs on the tracked files
	// (ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_NEW_GIT_FILE_GLOBBING).
	NewGlobbing bool
}

// Files is `git ls-files -- <pattern>`: the tracked files the pattern
// matches as a git pathspec (without magic: a path equal to it or under
// it, or a wildcard match where * and ? also match "/"), with content.
func (l *LocalRepo) Files(pattern string) (map[string][]byte, error) {
	if pattern == "" {
		pattern = "."
	}
	out := map[string][]byte{}
	files := l.Tracked
	if l.NewGlobbing {
		m, err := doublestar.Glob(l.FS, pattern)
		if err != nil {
			return nil, err
		}
		files = m
	}
	for _, f := range files {
		if !l.NewGlobbing && !PathspecMatch(pattern, f) {
			continue
		}
		b, err := fs.ReadFile(l.FS, f)
		if err != nil {
			return nil, fmt.Errorf("error retrieving Git files: rpc error: code = Internal desc = unable to read files. repo %s with revision %s pattern %s: %v", l.URL, "HEAD", pattern, err)
		}
		out[f] = b
	}
	return out, nil
}

// Directories is the repo-server's walkDirectoryTree: every directory,
// relative, in walk order, without those under a hidden one.
func (l *LocalRepo) Directories() ([]string, error) {
	var out []string
	err := fs.WalkDir(l.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("error walking the file tree: %w", err)
		}
		if !d.IsDir() {
			return nil
		}
		if p != "." && !l.IncludeHidden && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if p != "." {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// PathspecMatch matches a git pathspec (no magic) against a path: "." is
// everything; without wildcards, the path itself or anything under it;
// with wildcards, git's wildmatch without WM_PATHNAME ("*" crosses "/"),
// or a leading directory the pattern's literal part names.
func PathspecMatch(pattern, p string) bool {
	pattern = strings.TrimPrefix(pattern, "./")
	if pattern == "." || pattern == "" {
		return true
	}
	if !strings.ContainsAny(pattern, "*?[\\") {
		pattern = strings.TrimSuffix(pattern, "/")
		return p == pattern || strings.HasPrefix(p, pattern+"/")
	}
	return wildmatch(pattern, p)
}

// wildmatch matches text against a glob where * matches any run of
// characters (slashes included), ? one character, [...] a class ("!" or
// "^" negates), and \ escapes.
func wildmatch(pat, text string) bool {
	for len(pat) > 0 {
		switch pat[0] {
		case '*':
			for len(pat) > 0 && pat[0] == '*' {
				pat = pat[1:]
			}
			if pat == "" {
				return true
			}
			for i := 0; i <= len(text); i++ {
				if wildmatch(pat, text[i:]) {
					return true
				}
			}
			return false
		case '?':
			if text == "" {
				return false
			}
			pat, text = pat[1:], text[1:]
		case '[':
			if text == "" {
				return false
			}
			end := strings.IndexByte(pat[1:], ']')
			if end == 0 { // "[]...]": a ] first is literal
				if e2 := strings.IndexByte(pat[2:], ']'); e2 >= 0 {
					end = e2 + 1
				} else {
					end = -1
				}
			}
			if end < 0 {
				if text[0] != '[' {
					return false
				}
				pat, text = pat[1:], text[1:]
				continue
			}
			class := pat[1 : end+1]
			neg := false
			if len(class) > 0 && (class[0] == '!' || class[0] == '^') {
				neg, class = true, class[1:]
			}
			c := text[0]
			hit := false
			for i := 0; i < len(class); i++ {
				if i+2 < len(class) && class[i+1] == '-' {
					if class[i] <= c && c <= class[i+2] {
						hit = true
					}
					i += 2
				} else if class[i] == c {
					hit = true
				}
			}
			if hit == neg {
				return false
			}
			pat, text = pat[end+2:], text[1:]
		case '\\':
			if len(pat) > 1 {
				pat = pat[1:]
			}
			fallthrough
		default:
			if text == "" || pat[0] != text[0] {
				return false
			}
			pat, text = pat[1:], text[1:]
		}
	}
	return text == ""
}
