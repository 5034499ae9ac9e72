package fluxcmd

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/kpipe/kpipe/internal/flux"
)

// Flags are the flags of `flux build kustomization` (and flux's global
// ones), parsed.
type Flags struct {
	Path, KustomizationFile, Namespace string
	IgnorePaths                        []string          // --ignore-paths
	LocalSources                       map[string]string // --local-sources
	DryRun, StrictSubstitute           bool
	Recursive, InMemoryBuild           bool
	NoCache, Help                      bool
	NsFollowsKubeContext               bool
	Timeout                            time.Duration
	// Flux's kubeconfig flags, accepted and not used (kpipe makes no
	// cluster request): those given, by name (IgnoredStringFlags,
	// IgnoredArrayFlags, IgnoredBoolFlags); nil when none was.
	Ignored       map[string]string
	IgnoredArrays map[string][]string
	IgnoredBools  map[string]bool
	KubeAPIQPS    float32
	KubeAPIBurst  int
}

// NewFlags returns the flags' defaults, with namespace for -n's.
func NewFlags(namespace string) Flags {
	return Flags{Namespace: namespace, LocalSources: map[string]string{}, Timeout: 5 * time.Minute,
		KubeAPIQPS: 50, KubeAPIBurst: 300}
}

// IgnoredStringFlags, IgnoredArrayFlags and IgnoredBoolFlags name flux's
// kubeconfig flags (string, string array and bool flags): accepted, not
// used.
func IgnoredStringFlags() []string {
	return []string{"as", "as-uid", "cache-dir", "certificate-authority", "client-certificate", "client-key",
		"cluster", "context", "kubeconfig", "server", "tls-server-name", "token", "user"}
}

// IgnoredArrayFlags: see IgnoredStringFlags.
func IgnoredArrayFlags() []string { return []string{"as-group", "as-user-extra"} }

// IgnoredBoolFlags: see IgnoredStringFlags.
func IgnoredBoolFlags() []string {
	return []string{"disable-compression", "insecure-skip-tls-verify", "verbose"}
}

// Parser parses the arguments of `flux build kustomization` (after
// "kustomization") into f, whose values on entry are the defaults
// (NewFlags), as flux's command line does (cobra's pflag: package
// fluxcmd/fluxflags), and returns the positional arguments, in order. An
// error is flux's message for the arguments, or wraps ErrHelp.
type Parser func(args []string, f *Flags) (positional []string, err error)

// ErrHelp is the error a Parser returns for a help flag it does not
// define (pflag.ErrHelp's counterpart).
var ErrHelp = errors.New("help requested")

// flagKind is how ParseCommon takes a flag.
type flagKind int

const (
	unknown flagKind = iota
	stringFlag
	boolFlag
	ignorePathsFlag  // --ignore-paths (pflag's stringSlice)
	localSourcesFlag // --local-sources (pflag's stringToString)
)

// field returns how ParseCommon takes the flag named name (long form),
// and where it puts its value (nil: an ignored flag).
func (f *Flags) field(name string) (flagKind, *string, *bool) {
	switch name {
	case "path":
		return stringFlag, &f.Path, nil
	case "kustomization-file":
		return stringFlag, &f.KustomizationFile, nil
	case "namespace":
		return stringFlag, &f.Namespace, nil
	case "ignore-paths":
		return ignorePathsFlag, nil, nil
	case "local-sources":
		return localSourcesFlag, nil, nil
	case "dry-run":
		return boolFlag, nil, &f.DryRun
	case "strict-substitute":
		return boolFlag, nil, &f.StrictSubstitute
	case "recursive":
		return boolFlag, nil, &f.Recursive
	case "in-memory-build":
		return boolFlag, nil, &f.InMemoryBuild
	case "no-cache":
		return boolFlag, nil, &f.NoCache
	case "help": // (defined, so pflag sets it: no ErrHelp)
		return boolFlag, nil, &f.Help
	case "ns-follows-kube-context":
		return boolFlag, nil, &f.NsFollowsKubeContext
	}
	for _, n := range IgnoredStringFlags() {
		if n == name {
			return stringFlag, nil, nil
		}
	}
	for _, n := range IgnoredBoolFlags() {
		if n == name {
			return boolFlag, nil, nil
		}
	}
	return unknown, nil, nil
}

// ParseCommon parses the command lines of `flux build kustomization` whose
// meaning under pflag is plain, without pflag (which links net: the kpipe
// binary leaves it out), and gives pflag's result for them: positional
// arguments anywhere (pflag intersperses them), `--NAME=VALUE` and `--NAME
// VALUE` for the string flags (path, kustomization-file, namespace,
// flux's kubeconfig strings), `-n VALUE`, `--NAME`, `--NAME=true`,
// `--NAME=false`, `-r` and `-h` for the boolean flags (help among them); the last of a repeated
// flag wins. `--ignore-paths` takes a VALUE without quotes or line breaks
// (pflag reads it as CSV: split at commas; a repeated flag appends), and
// `--local-sources` KEY=VALUE pairs without quotes or line breaks (a
// repeated flag adds its pairs). A VALUE in a token of its own must not start with
// "-". It declines (ok false, f unchanged) everything else, which pflag
// has rules of its own for: "--", "-", combined or attached
// shorthands (-rn, -nNS, -n=NS), other `--BOOL=V`, quoted values, the
// duration and number flags, and unknown flags.
func ParseCommon(args []string, f *Flags) (positional []string, ok bool) {
	g := *f
	g.Ignored, g.IgnoredBools = maps.Clone(f.Ignored), maps.Clone(f.IgnoredBools)
	var ignorePathsSet, localSourcesSet bool // (pflag's "changed")
	for i := 0; i < len(args); i++ {
		a := args[i]
		var name, value string
		hasValue := false
		switch {
		case a == "" || a[0] != '-':
			positional = append(positional, a)
			continue
		case a == "-n":
			name = "namespace"
		case a == "-r":
			name = "recursive"
		case a == "-h":
			name = "help"
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, value, hasValue = strings.Cut(a[2:], "=")
		default:
			return nil, false
		}
		kind, s, b := g.field(name)
		if kind != unknown && kind != boolFlag && !hasValue {
			if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
				return nil, false
			}
			i++
			value = args[i]
		}
		switch kind {
		case ignorePathsFlag:
			if strings.ContainsAny(value, "\"\r\n") {
				return nil, false
			}
			paths := []string{}
			if value != "" {
				paths = strings.Split(value, ",")
			}
			if ignorePathsSet {
				paths = append(g.IgnorePaths, paths...)
			}
			g.IgnorePaths, ignorePathsSet = paths, true
		case localSourcesFlag:
			// pflag takes a value with one "=" as one pair; with more,
			// it reads it as CSV, each field a pair cut at its first "=".
			if strings.ContainsAny(value, "\"\r\n") {
				return nil, false
			}
			pairs := []string{value}
			switch strings.Count(value, "=") {
			case 0:
				return nil, false
			case 1:
			default:
				pairs = strings.Split(value, ",")
			}
			if !localSourcesSet {
				g.LocalSources, localSourcesSet = map[string]string{}, true
			}
			for _, pair := range pairs {
				k, v, ok := strings.Cut(pair, "=")
				if !ok {
					return nil, false
				}
				g.LocalSources[k] = v
			}
		case stringFlag:
			if s != nil {
				*s = value
			} else {
				if g.Ignored == nil {
					g.Ignored = map[string]string{}
				}
				g.Ignored[name] = value
			}
		case boolFlag:
			if hasValue && value != "true" && value != "false" {
				return nil, false
			}
			if b != nil {
				*b = value != "false"
			} else {
				if g.IgnoredBools == nil {
					g.IgnoredBools = map[string]bool{}
				}
				g.IgnoredBools[name] = value != "false"
			}
		default:
			return nil, false
		}
	}
	*f = g
	return positional, true
}

// namespaceDefault is flux's -n default: $FLUX_SYSTEM_NAMESPACE when it
// is a DNS label (flux warns and ignores it otherwise: warning is what it
// prints), else flux-system.
func namespaceDefault(getenv func(string) string) (ns, warning string) {
	ns = getenv("FLUX_SYSTEM_NAMESPACE")
	if ns == "" {
		return flux.DefaultNamespace, ""
	}
	if !flux.IsDNSLabel(ns) {
		return flux.DefaultNamespace, fmt.Sprintf("⚠️  ignoring invalid FLUX_SYSTEM_NAMESPACE: %q", ns)
	}
	return ns, ""
}
