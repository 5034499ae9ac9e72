package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/batch"
	"github.com/kpipe/kpipe/internal/output"
)

// reportCommand is `kpipe report`: work on build-all reports.
func reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "work on build-all --report files",
		Subcommands: []*cli.Command{{
			Name:      "merge",
			Usage:     "join the reports of the shards of one build-all (--shard 1/N .. N/N) into one",
			ArgsUsage: "REPORT...",
			Description: `Reads the reports the shards wrote and writes the report one build-all
over every root would have written: every root once, in path order, the
counts added (seconds: the slowest shard's). It fails, writing nothing,
when a shard is missing or there twice, when the reports are of
different shard counts or kpipe versions, or when a root is in two
reports. The exit code is 1 when a root failed, as build-all's is.`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the merged report to this file (default: stdout)"},
			},
			Action: runReportMerge,
		}},
	}
}

func runReportMerge(c *cli.Context) error {
	if c.NArg() == 0 {
		return errors.New("report merge: name the shards' report files")
	}
	var reps []*batch.Report
	for _, p := range c.Args().Slice() {
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("report merge: %w", err)
		}
		var r batch.Report
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("report merge: %s: not a build-all report: %v", p, err)
		}
		reps = append(reps, &r)
	}
	merged, err := batch.MergeReports(reps)
	if err != nil {
		return fmt.Errorf("report merge: %w", err)
	}
	data, _ := json.MarshalIndent(merged, "", "  ")
	data = append(data, '\n')
	if p := c.String("output"); p != "" {
		err = output.WriteFileAtomic(p, data)
	} else {
		_, err = c.App.Writer.Write(data)
	}
	if err != nil {
		return err
	}
	s := merged.Summary
	fmt.Fprintf(c.App.ErrWriter, "merged %d reports: %d roots (%d failed, %d changed, %d up to date): %d nodes built, %d from cache\n",
		len(reps), s.Roots, s.Failed, s.Changed, s.UpToDate, s.NodesBuilt, s.NodesCached)
	if s.Failed > 0 {
		return fmt.Errorf("%d of %d roots failed", s.Failed, s.Roots)
	}
	return nil
}
