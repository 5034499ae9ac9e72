// The gitignore matcher below is ported from
// github.com/fluxcd/pkg/sourceignore v0.18.0 (Apache License 2.0, Copyright
// 2026 The Flux authors), whose gitignore package was copied from go-git
// v5.16.4's plumbing/format/gitignore (Apache License 2.0, Copyright 2018
// Sourced Technologies, S.L.).

package generate

import (
	"bufio"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// IgnoreFile is the file whose lines are ignore patterns for its
// directory and everything below it.
const IgnoreFile = ".sourceignore"

// The patterns Flux always applies (sourceignore's ExcludeVCS, ExcludeExt,
// ExcludeCI, ExcludeExtra), with the lowest priority.
const (
	excludeVCS   = ".git/,.gitignore,.gitmodules,.gitattributes"
	excludeExt   = "*.jpg,*.jpeg,*.gif,*.png,*.wmv,*.flv,*.tar.gz,*.zip"
	excludeCI    = ".github/,.circleci/,.travis.yml,.gitlab-ci.yml,appveyor.yml,.drone.yml,cloudbuild.yaml,codeship-services.yml,codeship-steps.yml"
	excludeExtra = "**/.goreleaser.yml,**/.sops.yaml,**/.flux.yaml"
)

// matchResult is the outcome of matching one pattern.
type matchResult int

const (
	noMatch matchResult = iota
	exclude
	include
)

// pattern is one gitignore pattern, scoped to a domain (the directory of
// the file it was read from, as path components).
type pattern struct {
	domain    []string
	pattern   []string
	inclusion bool
	dirOnly   bool
	isGlob    bool
}

// parsePattern parses one line of an ignore file.
func parsePattern(p string, domain []string) *pattern {
	res := &pattern{domain: append([]string(nil), domain...)}
	if strings.HasPrefix(p, "!") {
		res.inclusion = true
		p = p[1:]
	}
	if !strings.HasSuffix(p, "\\ ") {
		p = strings.TrimRight(p, " ")
	}
	if strings.HasSuffix(p, "/") {
		res.dirOnly = true
		p = p[:len(p)-1]
	}
	if strings.Contains(p, "/") {
		res.isGlob = true
	}
	res.pattern = strings.Split(p, "/")
	return res
}

func (p *pattern) match(path []string, isDir bool) matchResult {
	if len(path) <= len(p.domain) {
		return noMatch
	}
	for i, e := range p.domain {
		if path[i] != e {
			return noMatch
		}
	}
	path = path[len(p.domain):]
	if p.isGlob && !p.globMatch(path, isDir) {
		return noMatch
	} else if !p.isGlob && !p.simpleNameMatch(path, isDir) {
		return noMatch
	}
	if p.inclusion {
		return include
	}
	return exclude
}

// simpleNameMatch matches a pattern without a slash against every
// component of the path: a file below a matching directory matches.
func (p *pattern) simpleNameMatch(path []string, isDir bool) bool {
	for i, name := range path {
		if match, err := filepath.Match(p.pattern[0], name); err != nil {
			return false
		} else if !match {
			continue
		}
		if p.dirOnly && !isDir && i == len(path)-1 {
			return false
		}
		return true
	}
	return false
}

// globMatch matches a pattern with slashes component by component, "**"
// standing for any number of directories.
func (p *pattern) globMatch(path []string, isDir bool) bool {
	matched := false
	canTraverse := false
	for i, pat := range p.pattern {
		if pat == "" {
			canTraverse = false
			continue
		}
		if pat == "**" {
			if i == len(p.pattern)-1 {
				break
			}
			canTraverse = true
			continue
		}
		if strings.Contains(pat, "**") {
			return false
		}
		if len(path) == 0 {
			return false
		}
		if canTraverse {
			canTraverse = false
			for len(path) > 0 {
				e := path[0]
				path = path[1:]
				if match, err := filepath.Match(pat, e); err != nil {
					return false
				} else if match {
					matched = true
					break
				} else if len(path) == 0 {
					matched = false
				}
			}
		} else {
			if match, err := filepath.Match(pat, path[0]); err != nil || !match {
				return false
			}
			matched = true
			path = path[1:]
		}
	}
	if matched && p.dirOnly && !isDir && len(path) == 0 {
		matched = false
	}
	return matched
}

// matcher matches a path against patterns in increasing priority: the
// last pattern that matches decides.
type matcher []*pattern

// Match reports whether the path (absolute, split at separators) is
// ignored.
func (m matcher) Match(path []string, isDir bool) bool {
	for i := len(m) - 1; i >= 0; i-- {
		if r := m[i].match(path, isDir); r > noMatch {
			return r == exclude
		}
	}
	return false
}

// defaultMatcher is ps behind Flux's default patterns (sourceignore's
// NewDefaultMatcher).
func defaultMatcher(ps []*pattern, domain []string) matcher {
	var m matcher
	for _, list := range []string{excludeVCS, excludeExt + "," + excludeCI + "," + excludeExtra} {
		for _, p := range strings.Split(list, ",") {
			m = append(m, parsePattern(p, domain))
		}
	}
	return append(m, ps...)
}

// readPatterns parses the lines of an ignore file (or of --ignore-paths
// joined with newlines): blank lines and lines starting with "#" skipped.
func readPatterns(text string, domain []string) []*pattern {
	var ps []*pattern
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		s := sc.Text()
		if !strings.HasPrefix(s, "#") && len(strings.TrimSpace(s)) > 0 {
			ps = append(ps, parsePattern(s, domain))
		}
	}
	return ps
}

// loadIgnorePatterns reads the .sourceignore of dir and of every
// directory below it (not following symlinks, skipping .git), each file's
// patterns scoped to its directory, in lexical walk order
// (sourceignore.LoadIgnorePatterns).
func loadIgnorePatterns(fsys *recorder, dir string, domain []string) ([]*pattern, error) {
	dom := append([]string(nil), domain...)
	var ps []*pattern
	data, err := fsys.readIgnoreFile(filepath.Join(dir, IgnoreFile))
	if err != nil {
		return nil, err
	}
	ps = append(ps, readPatterns(string(data), dom)...)
	entries, err := fsys.readDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" {
			sub, err := loadIgnorePatterns(fsys, filepath.Join(dir, e.Name()), append(dom, e.Name()))
			if err != nil {
				return nil, err
			}
			ps = append(ps, sub...)
		}
	}
	return ps, nil
}

// splitPath splits an absolute path at its separators, as Flux splits it
// for matching (a leading "" for the root).
func splitPath(p string) []string {
	return strings.Split(p, string(filepath.Separator))
}

// sortedEntries sorts directory entries by name, as os.ReadDir returns
// them.
func sortedEntries(entries []fs.DirEntry) []fs.DirEntry {
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries
}

// isNotExist reports whether err says a file does not exist.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist)
}
