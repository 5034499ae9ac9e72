// Command goplugin is a kpipe Go plugin used by package plugins' tests
// (built with -buildmode=plugin): as a generator it makes a ConfigMap
// named by its config's `name`; as a transformer it adds the label
// `team: <value>` to every object, or panics when `value` is "panic".
package main

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/kpipe/kpipe/pluginapi"
)

type labeler struct {
	name, value, dir string
}

// NewPlugin returns a fresh plugin for each run.
func NewPlugin() any { return &labeler{} }

var (
	_ pluginapi.Generator   = (*labeler)(nil)
	_ pluginapi.Transformer = (*labeler)(nil)
)

// Config reads `name:` and `value:` lines; the config must name the
// plugin's kind.
func (l *labeler) Config(config []byte, dir string) error {
	if !strings.Contains(string(config), "kind: Labeler") {
		return errors.New("not a Labeler config")
	}
	for _, line := range strings.Split(string(config), "\n") {
		if v, ok := strings.CutPrefix(line, "value: "); ok {
			l.value = v
		}
		if v, ok := strings.CutPrefix(line, "name: "); ok {
			l.name = v
		}
	}
	l.dir = dir
	return nil
}

// Generate makes one ConfigMap holding the config's directory listing.
func (l *labeler) Generate(ctx context.Context) ([]pluginapi.Object, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, err
	}
	var names []any
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return []pluginapi.Object{{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": l.name},
		"data":       map[string]any{"value": l.value, "files": len(names)},
	}}, nil
}

// Transform labels every object.
func (l *labeler) Transform(ctx context.Context, objs []pluginapi.Object) ([]pluginapi.Object, error) {
	if l.value == "panic" {
		panic("asked to")
	}
	for _, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			md["labels"] = labels
		}
		labels["team"] = l.value
	}
	return objs, nil
}

func main() {}
