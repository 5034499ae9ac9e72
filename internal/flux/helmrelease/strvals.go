// This file is a port of helm's strvals parser (helm.sh/helm/v4 v4.2.2,
// pkg/strvals/parser.go: the `--set` and `--set-string` syntax), the
// version helm-controller's values code (fluxcd/pkg/chartutil v1.28.0)
// links. Only ParseInto and ParseIntoString are ported (no JSON or file
// values). The structure, the panics its type assertions raise (and its
// recovers turn into errors) and the error messages are helm's, so that
// a targetPath behaves as it does in the controller: FuzzStrvals checks
// it against the library through tools/hroracle.
//
// Copyright The Helm Authors.
// Licensed under the Apache License, Version 2.0 (the "License"); you may
// not use this file except in compliance with the License. You may obtain
// a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
// (see NOTICE.md).

package helmrelease

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// errNotList indicates that a non-list was treated as a list.
var errNotList = errors.New("not a list")

// strvalsMaxIndex is the largest list index a path may name (helm's
// MaxIndex).
const strvalsMaxIndex = 65536

// strvalsMaxNestedNameLevel is the deepest a path may nest maps (helm's
// MaxNestedNameLevel).
const strvalsMaxNestedNameLevel = 30

// parseInto parses a strvals line ("a.b=1,c[0]=x") into dest, typing the
// values as --set does (int64, bool, nil, string); parseIntoString keeps
// them strings, as --set-string does. dest is changed in place, and may
// be left half-changed when an error is returned.
func parseInto(s string, dest map[string]any) error {
	return newStrvalsParser(bytes.NewBufferString(s), dest, false).parse()
}

func parseIntoString(s string, dest map[string]any) error {
	return newStrvalsParser(bytes.NewBufferString(s), dest, true).parse()
}

type strvalsParser struct {
	sc     *bytes.Buffer
	data   map[string]any
	reader func([]rune) (any, error)
}

func newStrvalsParser(sc *bytes.Buffer, data map[string]any, stringBool bool) *strvalsParser {
	stringConverter := func(rs []rune) (any, error) {
		return typedVal(rs, stringBool), nil
	}
	return &strvalsParser{sc: sc, data: data, reader: stringConverter}
}

func (t *strvalsParser) parse() error {
	for {
		err := t.key(t.data, 0)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
}

func runeSet(r []rune) map[rune]bool {
	s := make(map[rune]bool, len(r))
	for _, rr := range r {
		s[rr] = true
	}
	return s
}

func (t *strvalsParser) key(data map[string]any, nestedNameLevel int) (reterr error) {
	defer func() {
		if r := recover(); r != nil {
			reterr = fmt.Errorf("unable to parse key: %s", r)
		}
	}()
	stop := runeSet([]rune{'=', '[', ',', '.'})
	for {
		switch k, last, err := runesUntil(t.sc, stop); {
		case err != nil:
			if len(k) == 0 {
				return err
			}
			return fmt.Errorf("key %q has no value", string(k))
		case last == '[':
			// We are in a list index context, so we need to set an index.
			i, err := t.keyIndex()
			if err != nil {
				return fmt.Errorf("error parsing index: %w", err)
			}
			kk := string(k)
			// Find or create target list
			list := []any{}
			if _, ok := data[kk]; ok {
				list = data[kk].([]any)
			}

			// Now we need to get the value after the ].
			list, err = t.listItem(list, i, nestedNameLevel)
			set(data, kk, list)
			return err
		case last == '=':
			// End of key. Consume =, Get value.
			vl, e := t.valList()
			switch e {
			case nil:
				set(data, string(k), vl)
				return nil
			case io.EOF:
				set(data, string(k), "")
				return e
			case errNotList:
				rs, e := t.val()
				if e != nil && e != io.EOF {
					return e
				}
				v, e := t.reader(rs)
				set(data, string(k), v)
				return e
			default:
				return e
			}
		case last == ',':
			// No value given. Set the value to empty string. Return error.
			set(data, string(k), "")
			return fmt.Errorf("key %q has no value (cannot end with ,)", string(k))
		case last == '.':
			// Check value name is within the maximum nested name level
			nestedNameLevel++
			if nestedNameLevel > strvalsMaxNestedNameLevel {
				return fmt.Errorf("value name nested level is greater than maximum supported nested level of %d", strvalsMaxNestedNameLevel)
			}

			// First, create or find the target map.
			inner := map[string]any{}
			if _, ok := data[string(k)]; ok {
				inner = data[string(k)].(map[string]any)
			}

			// Recurse
			e := t.key(inner, nestedNameLevel)
			if e == nil && len(inner) == 0 {
				return fmt.Errorf("key map %q has no value", string(k))
			}
			if len(inner) != 0 {
				set(data, string(k), inner)
			}
			return e
		}
	}
}

func set(data map[string]any, key string, val any) {
	// If key is empty, don't set it.
	if len(key) == 0 {
		return
	}
	data[key] = val
}

func setIndex(list []any, index int, val any) (l2 []any, err error) {
	// There are possible index values that are out of range on a target system
	// causing a panic. This will catch the panic and return an error instead.
	// The value of the index that causes a panic varies from system to system.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("error processing index %d: %s", index, r)
		}
	}()

	if index < 0 {
		return list, fmt.Errorf("negative %d index not allowed", index)
	}
	if index > strvalsMaxIndex {
		return list, fmt.Errorf("index of %d is greater than maximum supported index of %d", index, strvalsMaxIndex)
	}
	if len(list) <= index {
		newlist := make([]any, index+1)
		copy(newlist, list)
		list = newlist
	}
	list[index] = val
	return list, nil
}

func (t *strvalsParser) keyIndex() (int, error) {
	// First, get the key.
	stop := runeSet([]rune{']'})
	v, _, err := runesUntil(t.sc, stop)
	if err != nil {
		return 0, err
	}
	// v should be the index
	return strconv.Atoi(string(v))
}

func (t *strvalsParser) listItem(list []any, i, nestedNameLevel int) ([]any, error) {
	if i < 0 {
		return list, fmt.Errorf("negative %d index not allowed", i)
	}
	stop := runeSet([]rune{'[', '.', '='})
	switch k, last, err := runesUntil(t.sc, stop); {
	case len(k) > 0:
		return list, fmt.Errorf("unexpected data at end of array index: %q", k)
	case err != nil:
		return list, err
	case last == '=':
		vl, e := t.valList()
		switch e {
		case nil:
			return setIndex(list, i, vl)
		case io.EOF:
			return setIndex(list, i, "")
		case errNotList:
			rs, e := t.val()
			if e != nil && e != io.EOF {
				return list, e
			}
			v, e := t.reader(rs)
			if e != nil {
				return list, e
			}
			return setIndex(list, i, v)
		default:
			return list, e
		}
	case last == '[':
		// now we have a nested list. Read the index and handle.
		nextI, err := t.keyIndex()
		if err != nil {
			return list, fmt.Errorf("error parsing index: %w", err)
		}
		var crtList []any
		if len(list) > i {
			// If nested list already exists, take the value of list to next cycle.
			existed := list[i]
			if existed != nil {
				crtList = list[i].([]any)
			}
		}
		// Now we need to get the value after the ].
		list2, err := t.listItem(crtList, nextI, nestedNameLevel)
		if err != nil {
			return list, err
		}
		return setIndex(list, i, list2)
	case last == '.':
		// We have a nested object. Send to t.key
		inner := map[string]any{}
		if len(list) > i {
			var ok bool
			inner, ok = list[i].(map[string]any)
			if !ok {
				// We have indices out of order. Initialize empty value.
				list[i] = map[string]any{}
				inner = list[i].(map[string]any)
			}
		}

		// Recurse
		e := t.key(inner, nestedNameLevel)
		if e != nil {
			return list, e
		}
		return setIndex(list, i, inner)
	default:
		return nil, fmt.Errorf("parse error: unexpected token %v", last)
	}
}

func (t *strvalsParser) val() ([]rune, error) {
	stop := runeSet([]rune{','})
	v, _, err := runesUntil(t.sc, stop)
	return v, err
}

func (t *strvalsParser) valList() ([]any, error) {
	r, _, e := t.sc.ReadRune()
	if e != nil {
		return []any{}, e
	}

	if r != '{' {
		t.sc.UnreadRune()
		return []any{}, errNotList
	}

	list := []any{}
	stop := runeSet([]rune{',', '}'})
	for {
		switch rs, last, err := runesUntil(t.sc, stop); {
		case err != nil:
			if err == io.EOF {
				err = errors.New("list must terminate with '}'")
			}
			return list, err
		case last == '}':
			// If this is followed by ',', consume it.
			if r, _, e := t.sc.ReadRune(); e == nil && r != ',' {
				t.sc.UnreadRune()
			}
			v, e := t.reader(rs)
			list = append(list, v)
			return list, e
		case last == ',':
			v, e := t.reader(rs)
			if e != nil {
				return list, e
			}
			list = append(list, v)
		}
	}
}

func runesUntil(in io.RuneReader, stop map[rune]bool) ([]rune, rune, error) {
	v := []rune{}
	for {
		switch r, _, e := in.ReadRune(); {
		case e != nil:
			return v, r, e
		case stop[r]:
			return v, r, nil
		case r == '\\':
			next, _, e := in.ReadRune()
			if e != nil {
				return v, next, e
			}
			v = append(v, next)
		default:
			v = append(v, r)
		}
	}
}

func typedVal(v []rune, st bool) any {
	val := string(v)

	if st {
		return val
	}

	if strings.EqualFold(val, "true") {
		return true
	}

	if strings.EqualFold(val, "false") {
		return false
	}

	if strings.EqualFold(val, "null") {
		return nil
	}

	if strings.EqualFold(val, "0") {
		return int64(0)
	}

	// If this value does not start with zero, try parsing it to an int
	if len(val) != 0 && val[0] != '0' {
		if iv, err := strconv.ParseInt(val, 10, 64); err == nil {
			return iv
		}
	}

	return val
}
