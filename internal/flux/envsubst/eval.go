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
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Eval replaces the ${var} expressions of s, looking variables up with
// mapping (value, and whether the variable is set). On error it returns s
// unchanged with the error, as the library does.
func Eval(s string, mapping func(string) (string, bool)) (string, error) {
	t, err := Parse(s)
	if err != nil {
		return s, err
	}
	return t.Execute(mapping)
}

// Mapping returns the variable lookup Flux's post-build substitution uses
// over vars: non-strict, every variable is set (an undefined one is
// empty); strict, only the variables of vars are set.
func Mapping(vars map[string]string, strict bool) func(string) (string, bool) {
	if strict {
		return func(s string) (string, bool) {
			v, ok := vars[s]
			return v, ok
		}
	}
	return func(s string) (string, bool) { return vars[s], true }
}

// ErrVarNotSet is the error of an undefined variable in strict mode
// (wrapped with the variable's name, quoted).
var ErrVarNotSet = errors.New("variable not set (strict mode)")

// Template is a parsed text.
type Template struct {
	root node
}

// Parse parses s. The errors are ErrBadSubstitution,
// ErrMissingClosingBrace, ErrParseVariableName, ErrParseFuncSubstitution
// and ErrParseDefaultFunction.
func Parse(s string) (*Template, error) {
	root, err := parse(s)
	if err != nil {
		return nil, err
	}
	return &Template{root: root}, nil
}

// state is one execution of a template.
type state struct {
	writer io.Writer
	node   node
	mapper func(string) (value string, exists bool)
}

// Execute expands the template with mapping.
func (t *Template) Execute(mapping func(string) (string, bool)) (str string, err error) {
	defer func() {
		// The library's substring function slices out of range for a
		// negative length reaching before the offset, and panics.
		if r := recover(); r != nil {
			str, err = "", fmt.Errorf("envsubst panicked: %v", r)
		}
	}()
	b := new(bytes.Buffer)
	s := &state{node: t.root, mapper: mapping, writer: b}
	if err := t.eval(s); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (t *Template) eval(s *state) (err error) {
	switch n := s.node.(type) {
	case *textNode:
		_, err = io.WriteString(s.writer, n.Value)
	case *funcNode:
		err = t.evalFunc(s, n)
	case *listNode:
		for _, c := range n.Nodes {
			s.node = c
			if err = t.eval(s); err != nil {
				return err
			}
		}
	}
	return err
}

func (t *Template) evalFunc(s *state, n *funcNode) error {
	w := s.writer
	var buf bytes.Buffer
	var args []string
	for _, a := range n.Args {
		buf.Reset()
		s.writer = &buf
		s.node = a
		if err := t.eval(s); err != nil {
			return err
		}
		args = append(args, buf.String())
	}
	s.writer = w
	s.node = n

	v, exists := s.mapper(n.Param)
	// In strict mode a missing variable is an error when it is referenced
	// bare or with an operator that reads its value; the default-providing
	// operators handle the unset case themselves.
	if !exists && !isDefaultOp(n.Name) {
		return fmt.Errorf("%w: %q", ErrVarNotSet, n.Param)
	}
	_, err := io.WriteString(s.writer, lookupFunc(n.Name, len(args))(v, args...))
	return err
}

// isDefaultOp reports whether name is an operator that tolerates an unset
// variable.
func isDefaultOp(name string) bool {
	switch name {
	case "-", "+", "=", "?", ":-", ":+", ":=", ":?":
		return true
	}
	return false
}

// lookupFunc returns the function of an operator; an unknown one (and
// every default operator) is toDefault.
func lookupFunc(name string, args int) substituteFunc {
	switch name {
	case ",":
		return toLowerFirst
	case ",,":
		return toLower
	case "^":
		return toUpperFirst
	case "^^":
		return toUpper
	case "#":
		if args == 0 {
			return toLen
		}
		return trimShortestPrefix
	case "##":
		return trimLongestPrefix
	case "%":
		return trimShortestSuffix
	case "%%":
		return trimLongestSuffix
	case ":":
		return toSubstr
	case "/#":
		return replacePrefix
	case "/%":
		return replaceSuffix
	case "/":
		return replaceFirst
	case "//":
		return replaceAll
	default:
		return toDefault
	}
}
