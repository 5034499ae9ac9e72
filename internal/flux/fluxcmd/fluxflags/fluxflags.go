// Package fluxflags parses the flags of `flux build kustomization` with
// flux's own parser, cobra's github.com/spf13/pflag (Parse, a
// fluxcmd.Parser): the command lines fluxcmd.ParseCommon declines. pflag
// imports net, so the kpipe binary leaves this package out and hands such
// command lines over to kpipe-full (internal/cli/full).
//
// It imports internal/flux/fluxcmd (for its Flags) and
// github.com/spf13/pflag.
package fluxflags

import (
	"errors"
	"io"

	"github.com/spf13/pflag"

	"github.com/kpipe/kpipe/internal/flux/fluxcmd"
)

// Parse parses args (after "kustomization") into f, whose values on entry
// are the defaults (fluxcmd.NewFlags), as flux's command line does, and
// returns the positional arguments: a fluxcmd.Parser.
func Parse(args []string, f *fluxcmd.Flags) ([]string, error) {
	fs := pflag.NewFlagSet("kustomization", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&f.Path, "path", f.Path, "Path to the manifests location.")
	fs.StringVar(&f.KustomizationFile, "kustomization-file", f.KustomizationFile, "Path to the Flux Kustomization YAML file.")
	fs.StringSliceVar(&f.IgnorePaths, "ignore-paths", f.IgnorePaths, "set paths to ignore in .gitignore format")
	fs.BoolVar(&f.DryRun, "dry-run", f.DryRun, "Dry run mode.")
	fs.BoolVar(&f.StrictSubstitute, "strict-substitute", f.StrictSubstitute, "fail on a variable without a value")
	fs.BoolVarP(&f.Recursive, "recursive", "r", f.Recursive, "Recursively build Kustomizations")
	fs.StringToStringVar(&f.LocalSources, "local-sources", f.LocalSources, "Kind/namespace/name=path,...")
	fs.BoolVar(&f.InMemoryBuild, "in-memory-build", f.InMemoryBuild, "Use in-memory filesystem during build.")
	fs.BoolVarP(&f.Help, "help", "h", f.Help, "help for kustomization")
	fs.BoolVar(&f.NoCache, "no-cache", f.NoCache, "neither read nor write kpipe's cache")
	// flux's global flags: -n matters (its default, f.Namespace, is
	// $FLUX_SYSTEM_NAMESPACE's); the others are accepted (kpipe makes no
	// cluster request).
	fs.StringVarP(&f.Namespace, "namespace", "n", f.Namespace, "the namespace scope")
	fs.DurationVar(&f.Timeout, "timeout", f.Timeout, "timeout for this operation")
	fs.BoolVar(&f.NsFollowsKubeContext, "ns-follows-kube-context", f.NsFollowsKubeContext, "use the namespace from the kubeconfig context")
	ignored := map[string]bool{}
	for _, name := range fluxcmd.IgnoredStringFlags() {
		fs.String(name, f.Ignored[name], "accepted, not used")
		ignored[name] = true
	}
	for _, name := range fluxcmd.IgnoredArrayFlags() {
		fs.StringArray(name, f.IgnoredArrays[name], "accepted, not used")
		ignored[name] = true
	}
	for _, name := range fluxcmd.IgnoredBoolFlags() {
		fs.Bool(name, f.IgnoredBools[name], "accepted, not used")
		ignored[name] = true
	}
	fs.Float32Var(&f.KubeAPIQPS, "kube-api-qps", f.KubeAPIQPS, "accepted, not used")
	fs.IntVar(&f.KubeAPIBurst, "kube-api-burst", f.KubeAPIBurst, "accepted, not used")
	err := fs.Parse(args)
	// The ignored flags given, as Flags keeps them (also those parsed
	// before an error, as pflag leaves the others).
	fs.Visit(func(fl *pflag.Flag) {
		if !ignored[fl.Name] {
			return
		}
		switch fl.Value.Type() {
		case "string":
			if f.Ignored == nil {
				f.Ignored = map[string]string{}
			}
			f.Ignored[fl.Name] = fl.Value.String()
		case "stringArray":
			if f.IgnoredArrays == nil {
				f.IgnoredArrays = map[string][]string{}
			}
			f.IgnoredArrays[fl.Name], _ = fs.GetStringArray(fl.Name)
		case "bool":
			if f.IgnoredBools == nil {
				f.IgnoredBools = map[string]bool{}
			}
			f.IgnoredBools[fl.Name] = fl.Value.String() == "true"
		}
	})
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, fluxcmd.ErrHelp
		}
		return nil, err
	}
	return fs.Args(), nil
}
