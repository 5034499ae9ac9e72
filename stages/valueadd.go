package stages

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/kpipe/kpipe/loaders"
	"github.com/kpipe/kpipe/resource"
)

// valueAddConfig configures the ValueAddTransformer (a builtin plugin with
// no kustomization field): Value is added at every target.
type valueAddConfig struct {
	// Value is the value to add; empty means the base name of the
	// kustomization directory (see newValueAdd).
	Value string `json:"value,omitempty"`
	// Targets say where to add it.
	Targets []valueAddTarget `json:"targets,omitempty"`
	// TargetFilePath names a file of more targets (`targets:` list),
	// appended to Targets when the stage is configured.
	TargetFilePath string `json:"targetFilePath,omitempty"`
}

// valueAddTarget is one place a ValueAddTransformer writes.
type valueAddTarget struct {
	// Selector picks the objects; nil means every object.
	Selector *loaders.Selector `json:"selector,omitempty"`
	// FieldPath is the '/'-separated path of the field ("\/" inside an
	// element); "metadata/namespace" sets the namespace as the
	// NamespaceTransformer does.
	FieldPath string `json:"fieldPath,omitempty"`
	// FilePathPosition, when above zero, reads the field as a file path
	// and inserts the value as its element at that 1-based position (past
	// the end: appended) instead of replacing the field.
	FilePathPosition int `json:"filePathPosition,omitempty"`
}

// newValueAdd returns the ValueAddTransformer stage. dir is the
// kustomization directory, whose base name is the default value; the
// targets file, if any, is read with read.
func newValueAdd(cfg valueAddConfig, dir string, read ReadFile) (Stage, error) {
	cfg.Value = strings.TrimSpace(cfg.Value)
	if cfg.Value == "" {
		cfg.Value = filepath.Base(dir)
	}
	cfg.Targets = append([]valueAddTarget(nil), cfg.Targets...)
	if cfg.TargetFilePath != "" {
		data, err := read(cfg.TargetFilePath)
		if err != nil {
			return nil, err
		}
		var more struct {
			Targets []valueAddTarget `json:"targets,omitempty"`
		}
		if err := decodeLenientConfig(data, &more); err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.TargetFilePath, err)
		}
		cfg.Targets = append(cfg.Targets, more.Targets...)
	}
	if len(cfg.Targets) == 0 {
		return nil, errors.New("must specify at least one target")
	}
	for _, t := range cfg.Targets {
		if t.FieldPath == "" {
			return nil, errors.New("fieldPath cannot be empty")
		}
		if t.FilePathPosition < 0 {
			return nil, fmt.Errorf("value of FilePathPosition (%d) cannot be negative", t.FilePathPosition)
		}
	}
	return &valueAddStage{cfg: cfg}, nil
}

// ValueAddFromConfig configures a ValueAddTransformer from its builtin
// plugin config.
func ValueAddFromConfig(data []byte, dir string, read ReadFile) (Stage, error) {
	var cfg valueAddConfig
	if err := decodeLenientConfig(data, &cfg); err != nil {
		return nil, fmt.Errorf("ValueAddTransformer: reading config: %w", err)
	}
	return newValueAdd(cfg, dir, read)
}

type valueAddStage struct {
	cfg valueAddConfig
}

func (s *valueAddStage) Kind() string { return "ValueAddTransformer" }

// Fingerprint covers the value and the targets, those read from the
// targets file included.
func (s *valueAddStage) Fingerprint() []byte { return Fingerprint(s.Kind(), s.cfg) }

// Run writes the value at each target in turn, in every object the
// target's selector picks.
func (s *valueAddStage) Run(_ context.Context, rs *resource.List) error {
	ns := &namespaceStage{cfg: NamespaceConfig{SetRoleBindingSubjects: subjectsDefaultOnly}}
	ns.cfg.Metadata.Namespace = s.cfg.Value
	for _, t := range s.cfg.Targets {
		var picked []int
		if t.Selector == nil {
			for i := range rs.All() {
				picked = append(picked, i)
			}
		} else {
			var err error
			if picked, err = selectIndexes(*t.Selector, rs); err != nil {
				return err
			}
		}
		for _, i := range picked {
			r := rs.Edit(i)
			var err error
			if t.FieldPath == "metadata/namespace" {
				err = ns.apply(r)
			} else {
				err = addValue(r.Edit(), loaders.SplitFieldPath(t.FieldPath), s.cfg.Value, t.FilePathPosition)
			}
			if err != nil {
				return fmt.Errorf("ValueAddTransformer: %s: %w", r.ID(), err)
			}
		}
	}
	return nil
}

// addValue sets the string field at path in obj to value (or, with a
// positive pos, inserts value into the file path the field holds), creating
// the maps on the way and the field itself when missing.
func addValue(obj map[string]any, fields []string, value string, pos int) error {
	m := obj
	for i, f := range fields {
		last := i == len(fields)-1
		cur, ok := m[f]
		if last {
			old := ""
			switch v := cur.(type) {
			case nil:
			case map[string]any, []any:
				return fmt.Errorf("wrong node kind at %q: expected a scalar", strings.Join(fields, "/"))
			default:
				old, _ = resource.ScalarString(v)
			}
			if pos > 0 {
				value = insertPathPart(old, pos-1, value)
			}
			m[f] = value
			return nil
		}
		if !ok || resource.IsNull(cur) {
			next := map[string]any{}
			m[f] = next
			m = next
			continue
		}
		next, isMap := cur.(map[string]any)
		if !isMap {
			return fmt.Errorf("wrong node kind at %q: expected a map", strings.Join(fields[:i+1], "/"))
		}
		m = next
	}
	return nil
}

// insertPathPart inserts part into the file path p as its element at pos
// (0-based; clamped to the ends), keeping p absolute if it was: kustomize's
// filesys.InsertPathPart.
func insertPathPart(p string, pos int, part string) string {
	if part == "" {
		return p
	}
	parts := splitPath(p)
	pos = max(0, min(pos, len(parts)))
	if len(parts) > 0 && parts[0] == "" && pos < len(parts) {
		pos++ // an absolute path's leading "" is not an element
	}
	out := append(append(append([]string(nil), parts[:pos]...), part), parts[pos:]...)
	if out[0] == "" {
		return "/" + path.Join(out[1:]...)
	}
	return path.Join(out...)
}

// splitPath splits a file path into its elements; an absolute path starts
// with "" ("/" is [""]; "" is none).
func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	dir, file := path.Split(p)
	if dir == "/" {
		if file == "" {
			return []string{""}
		}
		return []string{"", file}
	}
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return []string{file}
	}
	return append(splitPath(dir), file)
}
