// Command embed is a program that embeds kpipe with a stage of its own:
// TeamLabel, a transformer that labels every object with the team a
// kustomization names, used from a kustomization's `transformers:` like a
// builtin. It lives in a module of its own, as any program that imports
// kpipe would, and names only kpipe's public packages (kpipe, stages,
// resource).
//
//	embed [-cache DIR] [-prefix P] DIR
//
// prints what kpipe renders for the kustomization DIR, and on stderr how
// many times the stage ran ("runs: N"). With -cache the output of the
// stage is cached: built again with the same cache, it does not run.
// -prefix is a setting of the program that the stage's output depends on
// (the label's value starts with it): it is part of the stage's
// fingerprint, so changing it makes the stage run again.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/kpipe/kpipe"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages"
)

// teamLabel is the TeamLabel stage: it sets the label team=<prefix><team>
// on every object.
type teamLabel struct {
	Team   string `json:"team"`
	Prefix string `json:"prefix"`
	runs   *atomic.Int64
}

// Kind names the stage in messages and in its cache entries.
func (t *teamLabel) Kind() string { return "TeamLabel" }

// Fingerprint covers everything the output depends on besides the input:
// the team the kustomization names and the program's prefix.
func (t *teamLabel) Fingerprint() []byte { return stages.Fingerprint(t.Kind(), t) }

// Run labels every object, through List.Edit, which copies an object
// shared with other builds before it is changed.
func (t *teamLabel) Run(_ context.Context, rs *resource.List) error {
	t.runs.Add(1)
	for i := range rs.Len() {
		if err := rs.Edit(i).SetLabel("team", t.Prefix+t.Team); err != nil {
			return fmt.Errorf("%s: %w", rs.At(i).ID(), err)
		}
	}
	return nil
}

func main() {
	cacheDir := flag.String("cache", "", "cache directory (none: no cache)")
	prefix := flag.String("prefix", "", "what the team label's value starts with")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: embed [-cache DIR] [-prefix P] DIR")
		os.Exit(2)
	}
	ctx := context.Background()
	var runs atomic.Int64
	team := stages.Definition{
		APIVersion: "example.com/v1",
		Kind:       "TeamLabel",
		New: func(config *resource.Resource) (stages.Stage, error) {
			t := &teamLabel{Prefix: *prefix, runs: &runs}
			data, err := json.Marshal(config.Object())
			if err == nil {
				err = json.Unmarshal(data, t)
			}
			if err == nil && t.Team == "" {
				err = fmt.Errorf("no team")
			}
			return t, err
		},
	}
	opts := kpipe.Options{Stages: []stages.Definition{team}, Warn: func(msg string) { fmt.Fprintln(os.Stderr, msg) }}
	if *cacheDir != "" {
		c, err := kpipe.OpenCache(ctx, *cacheDir, opts.Warn)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer c.Close()
		opts.Cache = c
	}
	out, err := kpipe.New(opts).Build(ctx, flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
	fmt.Fprintf(os.Stderr, "runs: %d\n", runs.Load())
}
