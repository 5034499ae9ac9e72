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

import "errors"

// The parse errors, worded as the library words them.
var (
	ErrBadSubstitution       = errors.New("bad substitution")
	ErrMissingClosingBrace   = errors.New("missing closing brace")
	ErrParseVariableName     = errors.New("unable to parse variable name")
	ErrParseFuncSubstitution = errors.New("unable to parse substitution within function")
	ErrParseDefaultFunction  = errors.New("unable to parse default function")
)

// node is an element of the parse tree.
type node interface{ node() }

type (
	// textNode is literal text.
	textNode struct{ Value string }
	// funcNode is an expression: the variable, the operator ("" for a
	// bare ${VAR}) and its arguments.
	funcNode struct {
		Param string
		Name  string
		Args  []node
	}
	// listNode is a sequence of nodes.
	listNode struct{ Nodes []node }
)

func (*textNode) node() {}
func (*listNode) node() {}
func (*funcNode) node() {}

// empty is the node of an empty text.
var empty = new(textNode)

// parser builds the tree of a text.
type parser struct {
	scanner *scanner
}

func parse(buf string) (node, error) {
	p := &parser{scanner: new(scanner)}
	p.scanner.init(buf)
	return p.parseAny()
}

func (t *parser) parseAny() (node, error) {
	t.scanner.accept = acceptRune
	t.scanner.mode = scanIdent | scanLbrack | scanEscape
	t.scanner.escapeChars = dollar

	switch t.scanner.scan() {
	case tokenIdent:
		left := &textNode{Value: t.scanner.string()}
		right, err := t.parseAny()
		switch {
		case err != nil:
			return nil, err
		case right == empty:
			return left, nil
		}
		return &listNode{Nodes: []node{left, right}}, nil
	case tokenEOF:
		return empty, nil
	case tokenLbrack:
		left, err := t.parseFunc()
		if err != nil {
			return nil, err
		}
		right, err := t.parseAny()
		switch {
		case err != nil:
			return nil, err
		case right == empty:
			return left, nil
		}
		return &listNode{Nodes: []node{left, right}}, nil
	}
	return nil, ErrBadSubstitution
}

func (t *parser) parseFunc() (node, error) {
	t.scanner.escapeChars = escapeAll
	switch t.scanner.peek() {
	case '#':
		return t.parseLenFunc()
	}

	var name string
	t.scanner.accept = acceptIdent
	t.scanner.mode = scanIdent

	switch t.scanner.scan() {
	case tokenIdent:
		name = t.scanner.string()
	default:
		return nil, ErrParseVariableName
	}

	switch t.scanner.peek() {
	case ':':
		return t.parseDefaultOrSubstr(name)
	case '=':
		return t.parseDefaultFunc(name)
	case ',', '^':
		return t.parseCasingFunc(name)
	case '/':
		return t.parseReplaceFunc(name)
	case '#':
		return t.parseRemoveFunc(name, acceptHashFunc)
	case '%':
		return t.parseRemoveFunc(name, acceptPercentFunc)
	}

	t.scanner.accept = acceptIdent
	t.scanner.mode = scanRbrack
	switch t.scanner.scan() {
	case tokenRbrack:
		return &funcNode{Param: name}, nil
	default:
		return nil, ErrMissingClosingBrace
	}
}

// parseParam parses one argument of an operator: text, or a nested
// expression.
func (t *parser) parseParam(accept acceptFunc, mode byte) (node, error) {
	t.scanner.accept = accept
	t.scanner.mode = mode | scanLbrack
	switch t.scanner.scan() {
	case tokenLbrack:
		return t.parseFunc()
	case tokenIdent:
		return &textNode{Value: t.scanner.string()}, nil
	case tokenRbrack:
		return &textNode{Value: t.scanner.string()}, nil
	default:
		return nil, ErrParseFuncSubstitution
	}
}

// parseDefaultOrSubstr parses ${param:...}: a default operator or a
// substring.
func (t *parser) parseDefaultOrSubstr(name string) (node, error) {
	t.scanner.read()
	r := t.scanner.peek()
	t.scanner.unread()
	switch r {
	case '=', '-', '?', '+':
		return t.parseDefaultFunc(name)
	default:
		return t.parseSubstrFunc(name)
	}
}

// parseSubstrFunc parses ${param:offset} and ${param:offset:length}.
func (t *parser) parseSubstrFunc(name string) (node, error) {
	n := &funcNode{Param: name}

	t.scanner.accept = acceptOneColon
	t.scanner.mode = scanIdent
	switch t.scanner.scan() {
	case tokenIdent:
		n.Name = t.scanner.string()
	default:
		return nil, ErrBadSubstitution
	}

	param, err := t.parseParam(rejectColonClose, scanIdent)
	if err != nil {
		return nil, err
	}
	n.Args = append(n.Args, param)

	t.scanner.accept = acceptColon
	t.scanner.mode = scanIdent | scanRbrack
	switch t.scanner.scan() {
	case tokenRbrack:
		return n, nil
	case tokenIdent:
	default:
		return nil, ErrBadSubstitution
	}

	param, err = t.parseParam(acceptNotClosing, scanIdent)
	if err != nil {
		return nil, err
	}
	n.Args = append(n.Args, param)
	return n, t.consumeRbrack()
}

// parseRemoveFunc parses ${param%word}, ${param%%word}, ${param#word}
// and ${param##word}.
func (t *parser) parseRemoveFunc(name string, accept acceptFunc) (node, error) {
	n := &funcNode{Param: name}

	t.scanner.accept = accept
	t.scanner.mode = scanIdent
	switch t.scanner.scan() {
	case tokenIdent:
		n.Name = t.scanner.string()
	default:
		return nil, ErrBadSubstitution
	}

	param, err := t.parseParam(acceptNotClosing, scanIdent)
	if err != nil {
		return nil, err
	}
	n.Args = append(n.Args, param)
	return n, t.consumeRbrack()
}

// parseReplaceFunc parses ${param/pattern/string}, ${param//pattern/string},
// ${param/#pattern/string} and ${param/%pattern/string}.
func (t *parser) parseReplaceFunc(name string) (node, error) {
	n := &funcNode{Param: name}

	t.scanner.accept = acceptReplaceFunc
	t.scanner.mode = scanIdent
	switch t.scanner.scan() {
	case tokenIdent:
		n.Name = t.scanner.string()
	default:
		return nil, ErrBadSubstitution
	}

	param, err := t.parseParam(acceptNotSlash, scanIdent|scanEscape)
	if err != nil {
		return nil, err
	}
	n.Args = append(n.Args, param)

	t.scanner.accept = acceptSlash
	t.scanner.mode = scanIdent
	switch t.scanner.scan() {
	case tokenIdent:
	default:
		return nil, ErrBadSubstitution
	}

	switch t.scanner.peek() {
	case '}':
		return n, t.consumeRbrack()
	}

	param, err = t.parseParam(acceptNotClosing, scanIdent|scanEscape)
	if err != nil {
		return nil, err
	}
	n.Args = append(n.Args, param)
	return n, t.consumeRbrack()
}

// parseDefaultFunc parses ${param=word}, ${param:=word}, ${param:-word},
// ${param:?word} and ${param:+word}.
func (t *parser) parseDefaultFunc(name string) (node, error) {
	n := &funcNode{Param: name}

	t.scanner.accept = acceptDefaultFunc
	if t.scanner.peek() == '=' {
		t.scanner.accept = acceptOneEqual
	}
	t.scanner.mode = scanIdent
	switch t.scanner.scan() {
	case tokenIdent:
		n.Name = t.scanner.string()
	default:
		return nil, ErrParseDefaultFunction
	}

	for {
		switch t.scanner.peek() {
		case '}':
			return n, t.consumeRbrack()
		}
		param, err := t.parseParam(acceptNotClosing, scanIdent)
		if err != nil {
			return nil, err
		}
		n.Args = append(n.Args, param)
	}
}

// parseCasingFunc parses ${param,}, ${param,,}, ${param^} and ${param^^}.
func (t *parser) parseCasingFunc(name string) (node, error) {
	n := &funcNode{Param: name}

	t.scanner.accept = acceptCasingFunc
	t.scanner.mode = scanIdent
	switch t.scanner.scan() {
	case tokenIdent:
		n.Name = t.scanner.string()
	default:
		return nil, ErrBadSubstitution
	}
	return n, t.consumeRbrack()
}

// parseLenFunc parses ${#param}.
func (t *parser) parseLenFunc() (node, error) {
	n := new(funcNode)

	t.scanner.accept = acceptOneHash
	t.scanner.mode = scanIdent
	switch t.scanner.scan() {
	case tokenIdent:
		n.Name = t.scanner.string()
	default:
		return nil, ErrBadSubstitution
	}

	t.scanner.accept = acceptIdent
	t.scanner.mode = scanIdent
	switch t.scanner.scan() {
	case tokenIdent:
		n.Param = t.scanner.string()
	default:
		return nil, ErrBadSubstitution
	}
	return n, t.consumeRbrack()
}

// consumeRbrack consumes a closing brace, or fails with
// ErrBadSubstitution.
func (t *parser) consumeRbrack() error {
	t.scanner.mode = scanRbrack
	if t.scanner.scan() != tokenRbrack {
		return ErrBadSubstitution
	}
	return nil
}
