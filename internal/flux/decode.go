package flux

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"

	"sigs.k8s.io/yaml"
)

// decoder reads a stream of YAML or JSON documents into Kustomizations as
// apimachinery's YAMLOrJSONDecoder reads flux's --kustomization-file: JSON
// when the stream starts with "{" (falling back to YAML when the first
// object fails), otherwise YAML documents split at "---" lines, each
// decoded with sigs.k8s.io/yaml (YAML 1.1, typed by the target).
type decoder struct {
	data  []byte
	pos   int // start of what is not decoded yet
	json  bool
	count int
}

func newDecoder(data []byte) *decoder {
	trimmed := bytes.TrimLeftFunc(data, unicode.IsSpace)
	return &decoder{data: data, json: bytes.HasPrefix(trimmed, []byte("{"))}
}

// next decodes the next document into a fresh Kustomization; io.EOF at
// the end. A document that decodes to nothing (an empty one) gives an
// empty Kustomization.
func (d *decoder) next() (*Kustomization, error) {
	k := &Kustomization{}
	var firstErr error
	if d.json {
		dec := json.NewDecoder(bytes.NewReader(d.data[d.pos:]))
		err := dec.Decode(k)
		if err == nil {
			d.count++
			d.pos += int(dec.InputOffset())
			return k, nil
		}
		if err == io.EOF {
			return nil, err
		}
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			firstErr = &jsonSyntaxError{fmt.Sprintf("json: offset %d: %s", int64(d.pos)+syntax.Offset, syntax.Error())}
		} else {
			firstErr = fluxTypeError(err)
		}
		if d.count > 1 {
			return nil, fluxTypeError(err)
		}
		// Switch to YAML, after the whitespace up to the first newline.
		d.json = false
		k = &Kustomization{}
		for d.pos < len(d.data) {
			c := d.data[d.pos]
			if !unicode.IsSpace(rune(c)) {
				break
			}
			d.pos++
			if c == '\n' {
				break
			}
		}
	}
	doc, err := d.readYAMLDocument()
	if err == io.EOF {
		if firstErr != nil {
			return nil, firstErr
		}
		return nil, io.EOF
	}
	if err != nil {
		if firstErr != nil {
			return nil, firstErr
		}
		return nil, err
	}
	if len(doc) != 0 {
		if err := yaml.Unmarshal(doc, k); err != nil {
			if firstErr != nil {
				return nil, firstErr
			}
			return nil, fluxTypeError(err)
		}
	}
	d.count++
	return k, nil
}

// readYAMLDocument returns the next document of the stream as
// apimachinery's YAMLReader splits it: lines (each ended by "\n", a
// "\r\n" read as "\n") up to a line starting with "---", which may be
// followed by a comment only. A "---" line before any content stays in the
// document, as there.
func (d *decoder) readYAMLDocument() ([]byte, error) {
	var buf bytes.Buffer
	for d.pos < len(d.data) {
		rest := d.data[d.pos:]
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i]
			d.pos += i + 1
		} else {
			line = rest
			d.pos = len(d.data)
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if bytes.HasPrefix(line, []byte("---")) {
			trimmed := strings.TrimSpace(string(line[3:]))
			if len(trimmed) > 0 && trimmed[0] != '#' {
				return nil, fmt.Errorf("invalid Yaml document separator: %s", trimmed)
			}
			if buf.Len() != 0 {
				return buf.Bytes(), nil
			}
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if buf.Len() != 0 {
		return buf.Bytes(), nil
	}
	return nil, io.EOF
}

// fluxTypeError rewords encoding/json's type errors as flux (built with
// Go 1.27, decoding into an interface holding its own types) prints them:
// "json: cannot unmarshal string into Go struct field .spec.ignore of type
// []v1.IgnoreRule".
func fluxTypeError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	var msg string
	if te.Field != "" {
		msg = "json: cannot unmarshal " + te.Value + " into Go struct field ." + te.Field + " of type " + fluxTypeName(te.Type)
	} else {
		msg = "json: cannot unmarshal " + te.Value + " into Go value of type " + fluxTypeName(te.Type)
	}
	s := err.Error()
	if i := strings.Index(s, te.Error()); i >= 0 {
		return errors.New(s[:i] + msg + s[i+len(te.Error()):])
	}
	return errors.New(msg)
}

// fluxTypeName is t as flux's Go types print: []flux.IgnoreRule is
// []v1.IgnoreRule.
func fluxTypeName(t reflect.Type) string {
	s := t.String()
	var out strings.Builder
	for {
		i := strings.Index(s, "flux.")
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		out.WriteString(s[:i])
		s = s[i+len("flux."):]
		end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
		if end < 0 {
			end = len(s)
		}
		if pkg, ok := fluxPackage[s[:end]]; ok {
			out.WriteString(pkg + ".")
		} else {
			out.WriteString("flux.")
		}
	}
}

// jsonSyntaxError is apimachinery's JSONSyntaxError: a stream that starts
// like JSON and is not.
type jsonSyntaxError struct{ msg string }

func (e *jsonSyntaxError) Error() string { return e.msg }
