package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/output"
	"github.com/urfave/cli/v2"
)

// writeReport writes rep as indented JSON to the file --report names, if
// any (atomically: a reader never sees half a report).
func writeReport(c *cli.Context, rep any) error {
	p := c.String("report")
	if p == "" {
		return nil
	}
	data, _ := json.MarshalIndent(rep, "", "  ")
	if err := output.WriteFileAtomic(p, append(data, '\n')); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// outDirNotes is what build-all and its Argo CD and Flux kin say of their
// output directory after a run.
type outDirNotes struct {
	unit   string              // what renders an output: "root", "Application", "Kustomization"
	outDir string              // the directory, as the user named it
	rerun  string              // the command that brings it up to date
	show   func(string) string // a pruned or kept file as printed (nil: as the report has it)
	owner  func(string) string // what renders an output, named from its report path (nil: unit and path)
}

// print says which files the run pruned, which it kept because they
// changed since kpipe wrote them and, with check, which outputs are out of
// date or rendered by nothing any more. It reports whether the check found
// any.
func (n outDirNotes) print(w io.Writer, rep *batch.Report, check bool) (checkFailed bool) {
	show := n.show
	if show == nil {
		show = func(p string) string { return p }
	}
	for _, p := range rep.Pruned {
		fmt.Fprintf(w, "pruned %s\n", show(p))
	}
	for _, p := range rep.Kept {
		fmt.Fprintf(w, "kept %s: its %s is gone, but the file changed since kpipe wrote it\n", show(p), n.unit)
	}
	if !check {
		return false
	}
	owner := n.owner
	if owner == nil {
		owner = func(p string) string {
			if n.unit == "root" {
				return p
			}
			return n.unit + " " + p
		}
	}
	for _, rr := range rep.Roots {
		if rr.OutOfDate {
			fmt.Fprintf(w, "out of date: %s (the output of %s)\n", rr.Output, owner(rr.Path))
		}
	}
	for _, p := range rep.Orphans {
		fmt.Fprintf(w, "no %s renders %s any more\n", n.unit, p)
	}
	if k := rep.Summary.OutOfDate + len(rep.Orphans); k > 0 {
		fmt.Fprintf(w, "%d rendered outputs under %s differ from the sources: run %s\n", k, n.outDir, n.rerun)
		return true
	}
	return false
}

// printAffected prints what kpipe affected found under --format: a unit
// a line (lines; the failure of one that does not build on stderr) or one
// JSON object, {"since": REV, key: list}. line names a unit and says why
// it fails ("" when it builds). Listing is success (0); a listed unit
// that does not build is a build failure (1), as for build and build-all.
func printAffected[T any](c *cli.Context, key string, list []T, line func(T) (name, failure string)) error {
	switch c.String("format") {
	case "json":
		if list == nil {
			list = []T{}
		}
		since, _ := json.Marshal(c.String("since"))
		items, _ := json.MarshalIndent(list, "  ", "  ")
		if _, err := fmt.Fprintf(c.App.Writer, "{\n  \"since\": %s,\n  %q: %s\n}\n", since, key, items); err != nil {
			return err
		}
	case "lines":
		for _, u := range list {
			name, failure := line(u)
			fmt.Fprintln(c.App.Writer, name)
			if failure != "" {
				fmt.Fprintf(c.App.ErrWriter, "kpipe affected: %s\n", failure)
			}
		}
	default:
		return usage(c, "--format %q: want lines or json", c.String("format"))
	}
	for _, u := range list {
		if _, failure := line(u); failure != "" {
			return &exitError{code: 1}
		}
	}
	return nil
}

// outDirFlags checks --prune and --check as build-all and its kin take
// them, and reads --shard.
func outDirFlags(c *cli.Context) (batch.Shard, error) {
	if c.Bool("prune") && c.String("out-dir") == "" {
		return batch.Shard{}, usage(c, "--prune needs --out-dir")
	}
	if c.Bool("check") && (c.String("out-dir") == "" || c.Bool("prune")) {
		return batch.Shard{}, usage(c, "--check needs --out-dir, and writes nothing (no --prune)")
	}
	if !c.IsSet("shard") {
		return batch.Shard{}, nil
	}
	return batch.ParseShard(c.String("shard"))
}
