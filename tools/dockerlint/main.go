// Command dockerlint checks Dockerfiles with BuildKit's own lint rules,
// the ones `docker build --check` applies (StageNameCasing,
// JSONArgsRecommended, SecretsUsedInArgOrEnv, UndefinedVar, ...),
// without a Docker engine or a registry: base images resolve to an empty
// config of the platform asked for. It prints one line per finding and
// exits 1 when there is any, 2 when a file cannot be read.
//
//	go run -C tools/dockerlint . ../../Dockerfile ../../build/Dockerfile.release
//
// It has its own module (as tools/smpgen does), so that kpipe's module
// does not depend on BuildKit.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/moby/buildkit/client/llb/sourceresolver"
	digest "github.com/opencontainers/go-digest"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
)

func main() {
	bad := 0
	for _, f := range os.Args[1:] {
		dt, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		res, err := dockerfile2llb.DockerfileLint(context.Background(), dt, dockerfile2llb.ConvertOpt{SourceMap: sourceMap(f, dt), MetaResolver: offline{}})
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			os.Exit(2)
		}
		for _, w := range res.Warnings {
			line := 0
			if len(w.Location.Ranges) > 0 {
				line = int(w.Location.Ranges[0].Start.Line)
			}
			fmt.Printf("%s:%d: %s: %s\n", f, line, w.RuleName, w.Detail)
			bad++
		}
		if res.Error != nil {
			fmt.Printf("%s: %s\n", f, res.Error.Message)
			bad++
		}
	}
	if bad > 0 {
		os.Exit(1)
	}
}

// sourceMap is the Dockerfile's source as the lint results name it.
func sourceMap(name string, dt []byte) *llb.SourceMap {
	m := llb.NewSourceMap(nil, name, "Dockerfile", dt)
	m.Definition = &llb.Definition{}
	return m
}

// offline answers every base image with an empty linux config of the
// platform asked for, so that linting needs no registry.
type offline struct{}

func (offline) ResolveImageConfig(_ context.Context, ref string, opt sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	cfg := map[string]any{"os": "linux", "architecture": "amd64", "config": map[string]any{}}
	if o := opt.ImageOpt; o != nil && o.Platform != nil {
		p := o.Platform
		cfg["os"], cfg["architecture"] = p.OS, p.Architecture
	}
	dt, err := json.Marshal(cfg)
	return ref, digest.FromBytes(dt), dt, err
}
