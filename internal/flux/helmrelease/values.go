// The values merge below is a port of github.com/fluxcd/pkg/chartutil
// v1.28.0 (values.go: ChartValuesFromReferences, ReplacePathValue,
// ReplacePathLiteralValue, ErrValuesReference; merge.go: MergeMaps),
// statement for statement, checked against the library by FuzzValues.
//
// Copyright 2024 The Flux authors.
// Licensed under the Apache License, Version 2.0 (the "License"); you may
// not use this file except in compliance with the License. You may obtain
// a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
// (see NOTICE.md).

package helmrelease

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// The reasons a values reference fails (fluxcd/pkg/chartutil's
// ErrValuesRefReason values); errors.Is matches them on a
// *ValuesReferenceError.
var (
	ErrResourceNotFound   = errors.New("resource not found")
	ErrKeyNotFound        = errors.New("key not found")
	ErrUnsupportedRefKind = errors.New("unsupported values reference kind")
	ErrValuesDataRead     = errors.New("failed to read values data")
	ErrValueMerge         = errors.New("failed to merge value")
	ErrUnknown            = errors.New("unknown error")
)

// ValuesReferenceError is chartutil's ErrValuesReference: a valuesFrom
// entry that could not be resolved, worded as helm-controller words it.
type ValuesReferenceError struct {
	Reason    error
	Kind      string
	Namespace string
	Name      string
	Key       string
	Optional  bool
	Err       error
}

// Error is chartutil's wording: "could not resolve [optional] <Kind> chart
// values reference '<ns>/<name>' with key '<key>': <reason>".
func (e *ValuesReferenceError) Error() string {
	b := strings.Builder{}
	b.WriteString("could not resolve")
	if e.Optional {
		b.WriteString(" optional")
	}
	if e.Kind != "" {
		b.WriteString(" " + e.Kind)
	}
	b.WriteString(" chart values reference")
	// types.NamespacedName.String(), never empty
	fmt.Fprintf(&b, " '%s/%s'", e.Namespace, e.Name)
	if e.Key != "" {
		fmt.Fprintf(&b, " with key '%s'", e.Key)
	}
	reason := ErrUnknown.Error()
	if e.Reason != nil {
		reason = e.Reason.Error()
	}
	if e.Err != nil {
		reason = e.Err.Error()
	}
	b.WriteString(": " + reason)
	return b.String()
}

// Is matches the reason, or what Err matches.
func (e *ValuesReferenceError) Is(target error) bool {
	reason := e.Reason
	if reason == nil {
		reason = ErrUnknown
	}
	return reason == target || errors.Is(e.Err, target)
}

// Unwrap returns Err.
func (e *ValuesReferenceError) Unwrap() error { return e.Err }

func newRefError(namespace string, ref ValuesReference, reason, err error) *ValuesReferenceError {
	return &ValuesReferenceError{Reason: reason, Kind: ref.Kind, Namespace: namespace, Name: ref.Name,
		Key: ref.GetValuesKey(), Optional: ref.Optional, Err: err}
}

// notFoundError is the API server's NotFound for a ConfigMap or Secret.
type notFoundError struct{ resource, name string }

func (e *notFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.resource, e.name) }

// Skipped is an optional valuesFrom reference that was skipped, and why
// (helm-controller logs these).
type Skipped struct {
	Ref     ValuesReference
	Message string
}

// Values returns the values helm-controller installs a HelmRelease with
// (helmv2.HelmRelease.GetValues and fluxcd/pkg/chartutil v1.28.0
// ChartValuesFromReferences, ported statement for statement):
//
//  1. for each spec.valuesFrom entry in order, the ConfigMap or Secret of
//     the HelmRelease's namespace is looked up in objs (each one once); a
//     missing object or key is skipped when the entry is optional, an
//     error otherwise; a Secret's data is its decoded data with
//     stringData written over it, as the API server stores it;
//  2. with a targetPath, spec.values is merged into the result first,
//     then the value is set at the path with helm's `--set` parser (a
//     value wrapped in quotes, or a literal entry, as a string);
//     otherwise the value is read as YAML (sigs.k8s.io/yaml) and merged;
//  3. spec.values is merged last.
//
// Merging (MergeMaps) recurses where both sides are maps and otherwise
// replaces; lists are replaced whole; a null is kept (helm then deletes
// that key of the chart's defaults). The maps of spec.values are shared
// with the result as chartutil shares them, so a targetPath inside a map
// only spec.values has also changes spec.values, and then wins over it.
//
// Numbers are float64 (JSON's), except the integers a targetPath sets,
// which are int64 as helm's parser types them.
//
// objs holds the ConfigMaps and Secrets the tree renders; skipped lists
// the optional references that were skipped.
func Values(hr *HelmRelease, objs *Objects) (vals map[string]any, skipped []Skipped, err error) {
	return chartValuesFromReferences(objs, hr.Namespace, hr.GetValues(), hr.Spec.ValuesFrom...)
}

// GetValues is helmv2.HelmRelease.GetValues: spec.values decoded
// (sigs.k8s.io/yaml), or nil when it is absent or not a map.
func (hr *HelmRelease) GetValues() map[string]any {
	var values map[string]any
	if hr.Spec.Values != nil {
		_ = yaml.Unmarshal(hr.Spec.Values.Raw, &values)
	}
	return values
}

func chartValuesFromReferences(objs *Objects, namespace string, values map[string]any, refs ...ValuesReference) (map[string]any, []Skipped, error) {
	result := map[string]any{}
	var skipped []Skipped
	type resolved struct {
		found bool
		cm    map[string]string
		sec   map[string][]byte
	}
	resources := map[string]*resolved{}

	for _, ref := range refs {
		var valuesData []byte

		switch ref.Kind {
		case "ConfigMap", "Secret":
			index := ref.Kind + namespace + "/" + ref.Name
			resource, ok := resources[index]
			if !ok {
				// The resource may not exist, but we want to act on a single version
				// of the resource in case the values reference is marked as optional.
				resources[index] = &resolved{}
				obj := objs.Get(ref.Kind, namespace, ref.Name)
				if obj == nil {
					res := "configmaps"
					if ref.Kind == "Secret" {
						res = "secrets"
					}
					err := newRefError(namespace, ref, ErrResourceNotFound, &notFoundError{res, ref.Name})
					if err.Optional {
						skipped = append(skipped, Skipped{ref, err.Error()})
						continue
					}
					return nil, skipped, err
				}
				resource = &resolved{found: true}
				var err error
				if ref.Kind == "Secret" {
					resource.sec, err = secretData(obj)
				} else {
					resource.cm, err = configMapData(obj)
				}
				if err != nil {
					return nil, skipped, fmt.Errorf("%s %s/%s: %w", ref.Kind, namespace, ref.Name, err)
				}
				resources[index] = resource
			}

			if !resource.found {
				if ref.Optional {
					continue
				}
				return nil, skipped, newRefError(namespace, ref, ErrResourceNotFound, nil)
			}

			if ref.Kind == "Secret" {
				data, ok := resource.sec[ref.GetValuesKey()]
				if !ok {
					err := newRefError(namespace, ref, ErrKeyNotFound, nil)
					if ref.Optional {
						skipped = append(skipped, Skipped{ref, err.Error()})
						continue
					}
					return nil, skipped, err
				}
				valuesData = data
			} else {
				data, ok := resource.cm[ref.GetValuesKey()]
				if !ok {
					err := newRefError(namespace, ref, ErrKeyNotFound, nil)
					if ref.Optional {
						skipped = append(skipped, Skipped{ref, err.Error()})
						continue
					}
					return nil, skipped, err
				}
				valuesData = []byte(data)
			}
		default:
			return nil, skipped, newRefError(namespace, ref, ErrUnsupportedRefKind, nil)
		}

		if ref.TargetPath != "" {
			result = MergeMaps(result, values)

			merger := replacePathValue
			if ref.Literal {
				merger = replacePathLiteralValue
			}
			if err := merger(result, ref.TargetPath, string(valuesData)); err != nil {
				return nil, skipped, newRefError(namespace, ref, ErrValueMerge, err)
			}
			continue
		}

		values, err := readValues(valuesData)
		if err != nil {
			return nil, skipped, newRefError(namespace, ref, ErrValuesDataRead, err)
		}
		result = MergeMaps(result, values)
	}
	return MergeMaps(result, values), skipped, nil
}

// readValues is helm's common.ReadValues: YAML (sigs.k8s.io/yaml) into a
// map, an empty one for an empty document. The error names helm's type.
func readValues(data []byte) (map[string]any, error) {
	var vals map[string]any
	err := yaml.Unmarshal(data, &vals)
	if len(vals) == 0 {
		vals = map[string]any{}
	}
	if err != nil {
		return vals, errors.New(strings.ReplaceAll(err.Error(), "map[string]interface {}", "common.Values"))
	}
	return vals, nil
}

// MergeMaps merges b into a copy of a (fluxcd/pkg/chartutil MergeMaps):
// b's keys win; where both values are maps they are merged recursively,
// otherwise b's value (a map, a list, a scalar or nil) replaces a's. The
// maps of b that a lacks are shared, not copied.
func MergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]any); ok {
			if bv, ok := out[k]; ok {
				if bv, ok := bv.(map[string]any); ok {
					out[k] = MergeMaps(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

// replacePathValue is chartutil.ReplacePathValue: the value set at the
// path with helm's --set parser; one wrapped in single or double quotes
// is unwrapped (all leading and trailing quotes of both kinds) and set as
// a string.
func replacePathValue(values map[string]any, path string, value string) error {
	const (
		singleQuote = "'"
		doubleQuote = `"`
	)
	isSingleQuoted := strings.HasPrefix(value, singleQuote) && strings.HasSuffix(value, singleQuote)
	isDoubleQuoted := strings.HasPrefix(value, doubleQuote) && strings.HasSuffix(value, doubleQuote)
	if isSingleQuoted || isDoubleQuoted {
		value = strings.Trim(value, singleQuote+doubleQuote)
		value = path + "=" + value
		return parseIntoString(value, values)
	}
	value = path + "=" + value
	return parseInto(value, values)
}

// replacePathLiteralValue is chartutil.ReplacePathLiteralValue: the value
// set verbatim (its strvals metacharacters escaped) as a string.
func replacePathLiteralValue(values map[string]any, path string, value string) error {
	escaper := strings.NewReplacer(
		`\`, `\\`,
		`,`, `\,`,
		`[`, `\[`,
		`]`, `\]`,
		`{`, `\{`,
		`}`, `\}`,
	)
	return parseIntoString(path+"="+escaper.Replace(value), values)
}
