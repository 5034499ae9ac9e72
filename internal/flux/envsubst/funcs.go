/*
Copyright 2024 The Flux authors

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Forked from: https://github.com/drone/envsubst
// MIT License
// Copyright (c) 2017 drone.io.

package envsubst

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// substituteFunc is a parameter substitution function: the variable's
// value and the operator's arguments in, the expansion out.
type substituteFunc func(string, ...string) string

// toLen returns the length of s in bytes.
func toLen(s string, args ...string) string {
	return strconv.Itoa(len(s))
}

func toLower(s string, args ...string) string {
	return strings.ToLower(s)
}

func toUpper(s string, args ...string) string {
	return strings.ToUpper(s)
}

func toLowerFirst(s string, args ...string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

func toUpperFirst(s string, args ...string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// toDefault returns s when it is not empty, else the arguments joined.
func toDefault(s string, args ...string) string {
	if len(s) == 0 && len(args) > 0 {
		s = strings.Join(args, "")
	}
	return s
}

// toSubstr returns the byte slice of s at an offset and with a length,
// clamped as bash clamps (but a negative length reaching before the offset
// panics, as in the library).
func toSubstr(s string, args ...string) string {
	if len(args) == 0 {
		return s
	}
	pos, err := strconv.Atoi(args[0])
	if err != nil {
		return s
	}
	if pos < 0 {
		pos = len(s) + pos
		if pos < 0 {
			pos = 0
		}
	}
	if len(args) == 1 {
		if pos < len(s) {
			return s[pos:]
		}
		return ""
	}
	length, err := strconv.Atoi(args[1])
	if err != nil {
		return s
	}
	if pos+length >= len(s) {
		if pos < len(s) {
			return s[pos:]
		}
		return ""
	}
	return s[pos : pos+length]
}

func replaceAll(s string, args ...string) string {
	switch len(args) {
	case 0:
		return s
	case 1:
		return strings.Replace(s, args[0], "", -1)
	default:
		return strings.Replace(s, args[0], args[1], -1)
	}
}

func replaceFirst(s string, args ...string) string {
	switch len(args) {
	case 0:
		return s
	case 1:
		return strings.Replace(s, args[0], "", 1)
	default:
		return strings.Replace(s, args[0], args[1], 1)
	}
}

func replacePrefix(s string, args ...string) string {
	if len(args) != 2 {
		return s
	}
	if strings.HasPrefix(s, args[0]) {
		return strings.Replace(s, args[0], args[1], 1)
	}
	return s
}

func replaceSuffix(s string, args ...string) string {
	if len(args) != 2 {
		return s
	}
	if strings.HasSuffix(s, args[0]) {
		s = strings.TrimSuffix(s, args[0])
		s = s + args[1]
	}
	return s
}

func trimShortestPrefix(s string, args ...string) string {
	if len(args) != 0 {
		s = trimShortest(s, args[0])
	}
	return s
}

func trimShortestSuffix(s string, args ...string) string {
	if len(args) != 0 {
		s = reverse(trimShortest(reverse(s), reverse(args[0])))
	}
	return s
}

func trimLongestPrefix(s string, args ...string) string {
	if len(args) != 0 {
		s = trimLongest(s, args[0])
	}
	return s
}

func trimLongestSuffix(s string, args ...string) string {
	if len(args) != 0 {
		s = reverse(trimLongest(reverse(s), reverse(args[0])))
	}
	return s
}

// trimShortest removes the shortest prefix of s that the glob arg matches
// (prefixes cut at byte offsets, as in the library).
func trimShortest(s, arg string) string {
	var shortestMatch string
	for i := 0; i < len(s); i++ {
		match, err := globMatch(arg, s[0:len(s)-i])
		if err != nil {
			return s
		}
		if match {
			shortestMatch = s[0 : len(s)-i]
		}
	}
	if shortestMatch != "" {
		return strings.TrimPrefix(s, shortestMatch)
	}
	return s
}

// trimLongest removes the longest prefix of s that the glob arg matches.
func trimLongest(s, arg string) string {
	for i := 0; i < len(s); i++ {
		match, err := globMatch(arg, s[0:len(s)-i])
		if err != nil {
			return s
		}
		if match {
			return strings.TrimPrefix(s, s[0:len(s)-i])
		}
	}
	return s
}

// reverse reverses s rune by rune (invalid UTF-8 becomes U+FFFD).
func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < len(r)/2; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
