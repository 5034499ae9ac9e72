package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/kpipe/kpipe/internal/engine"
	"github.com/urfave/cli/v2"
	yaml "go.yaml.in/yaml/v2"
)

// gitCommit and buildDate are the commit kpipe was built from and its
// time (RFC 3339), for `kpipe version -o json|yaml`; release builds set
// them with -ldflags -X (.goreleaser.yaml). Unset, they come from what
// the go command stamps into a binary built in a git checkout
// (vcs.revision, vcs.time), else "unknown", as kustomize prints.
var gitCommit, buildDate string

// buildStamp returns the commit and the time kpipe was built from.
func buildStamp() (commit, date string) {
	commit, date = gitCommit, buildDate
	if commit == "" || date == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				switch {
				case s.Key == "vcs.revision" && commit == "":
					commit = s.Value
				case s.Key == "vcs.time" && date == "":
					date = s.Value
				}
			}
		}
	}
	if commit == "" {
		commit = "unknown"
	}
	if date == "" {
		date = "unknown"
	}
	return commit, date
}

// versionString is kpipe's version in kustomize's shape: kustomize's
// semantic version (engine.KustomizeVersion, the release whose output kpipe
// reproduces) with kpipe's own version as build metadata, for example
// v5.8.3+kpipe.v0.1.0-dev. Tools that parse `kustomize version` (Argo CD
// takes the first semantic version in the output) read the kustomize one.
func versionString() string {
	meta := strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '-', r == '.':
			return r
		}
		return '-'
	}, Version)
	meta = strings.Trim(meta, ".")
	if meta == "" {
		meta = "unknown"
	}
	return engine.KustomizeVersion + "+kpipe." + meta
}

// versionInfo has the fields of `kustomize version --output json|yaml`.
type versionInfo struct {
	Version   string `json:"version" yaml:"version"`
	GitCommit string `json:"gitCommit" yaml:"gitCommit"`
	BuildDate string `json:"buildDate" yaml:"buildDate"`
	GoOs      string `json:"goOs" yaml:"goOs"`
	GoArch    string `json:"goArch" yaml:"goArch"`
	GoVersion string `json:"goVersion" yaml:"goVersion"`
}

// versionCommand is `kpipe version [--short] [-o json|yaml]`, with
// kustomize v5.8.2's forms.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, in kustomize's shape (KUSTOMIZEVERSION+kpipe.VERSION)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "short", Usage: "deprecated: print {VERSION  unknown   } as kustomize does"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "one of 'yaml' or 'json'"},
		},
		Action: func(c *cli.Context) error {
			w := c.App.Writer
			commit, date := buildStamp()
			info := versionInfo{Version: versionString(), GitCommit: commit, BuildDate: date,
				GoOs: runtime.GOOS, GoArch: runtime.GOARCH, GoVersion: runtime.Version()}
			if c.Bool("short") {
				fmt.Fprintln(c.App.ErrWriter, "Flag --short has been deprecated, and will be removed in the future.")
			}
			switch o := c.String("output"); o {
			case "json":
				b, err := json.MarshalIndent(info, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(w, "%s\n", b)
				return err
			case "yaml":
				b, err := yaml.Marshal(info)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(w, "%s\n", b)
				return err
			case "":
			default:
				return usage(c, "--output must be 'yaml' or 'json'")
			}
			if c.Bool("short") {
				_, err := fmt.Fprintf(w, "{%s  %s   }\n", info.Version, info.BuildDate)
				return err
			}
			_, err := fmt.Fprintln(w, info.Version)
			return err
		},
	}
}
